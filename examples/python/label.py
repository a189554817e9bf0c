"""Prints the report label's library versions for an example client: `label.py openai-default` ->
`openai 3.60.0`. Read from the venv's installed distributions (what the run really used)."""
import importlib.metadata as md
import sys

PACKAGES = {
    "openai": ["openai"],
    "anthropic": ["anthropic"],
    "genai": ["google-genai"],
    "langchain": ["langchain-core", "langchain-openai", "langchain-anthropic", "openai", "anthropic"],
    "pydantic-ai": ["pydantic-ai-slim", "openai", "anthropic"],
    "litellm-router": ["litellm", "openai"],
    "bedrock-boto3": ["boto3", "botocore"],
}

if __name__ == "__main__":
    client = sys.argv[1]
    family = client.rsplit("-", 1)[0]
    print(", ".join(f"{p} {md.version(p)}" for p in PACKAGES[family]))
