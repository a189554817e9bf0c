"""google-genai, default (llmchaos_py/sdk.py). Run by `llmchaos run --driver exec`, one process per request."""
from llmchaos_py.sdk import run_default

run_default("gemini")
