"""boto3's bedrock-runtime client, default (llmchaos_py/sdk.py): botocore's standard retry mode (3 attempts,
its own backoff and x-amz-retry-after handling), 60 s read timeout, one route, no fallback. Run by
`llmchaos run --driver exec`, one process per request."""
from llmchaos_py.sdk import run_default

run_default("bedrock")
