"""pydantic-ai, default (llmchaos_py/frameworks.py). Run by `llmchaos run --driver exec`, one process per request."""
from llmchaos_py.frameworks import run_default

run_default("pydantic-ai")
