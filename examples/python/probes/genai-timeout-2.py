"""google-genai with HttpOptions(timeout=2), the value a team that reads it as seconds writes: the probe
for the claim that genai's timeout is in milliseconds (run-claims)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from llmchaos_py.sdk import run_default  # noqa: E402

run_default("gemini", timeout=2)
