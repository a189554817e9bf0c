"""boto3's bedrock-runtime client, hardened (llmchaos_py/sdk.py): botocore's retries off
(`total_max_attempts` 1), the attempt timeout as its read timeout, the team's policy loop
(llmchaos_py/policy.py) over every bedrock route; what the wire saw comes from botocore's events
(wire.watch_botocore). Run by `llmchaos run --driver exec`, one process per request."""
from llmchaos_py.sdk import run_hardened

run_hardened("bedrock")
