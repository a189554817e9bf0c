"""google-genai with its own retries switched on (HttpRetryOptions(attempts=3)), otherwise as
genai-default: the probe for the claim that genai ignores Retry-After when it retries (run-claims)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from google.genai import types  # noqa: E402

from llmchaos_py.sdk import run_default  # noqa: E402

run_default("gemini", retry_options=types.HttpRetryOptions(attempts=3))
