"""anthropic with timeout=1.5 s and no retries: the probe for the claim that anthropic-python's timeout
bounds each read, not the call (run-claims, probes/anthropic-timeout-per-read.toml: headers after 1 s,
the first event 1 s later: 2 s in all, no gap of 1.5 s)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from llmchaos_py.sdk import run_default  # noqa: E402

run_default("anthropic", timeout=1.5, max_retries=0)
