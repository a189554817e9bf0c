"""The real peer of the mock's bedrock dialect: boto3 (bedrock-runtime, HTTP/1.1) against `llmchaos serve`.

Checks what a Bedrock user relies on: converse's answer is the canonical text, converse_stream's text
deltas join to it, a ThrottlingException before the stream is retried by botocore (standard mode, 3
attempts: the mock's ledger counts them), an in-stream exception surfaces as EventStreamError with its
name, a bad CRC as a checksum error. Then one line per fault kind of what boto3 did (plain and streamed).
usage: bedrock_boto3.py LLMCHAOS_BIN   (exit 0 when every check passes)
"""
import json
import subprocess
import sys
import time
import urllib.request

import boto3
import botocore
from botocore.config import Config
from botocore.exceptions import ClientError, EventStreamError

TEXT = "alpha beta gamma delta"
MODEL = "anthropic.claude-3-haiku-20240307-v1:0"
MESSAGES = [{"role": "user", "content": [{"text": "hi there"}]}]
failures = []


def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what + (f": {detail}" if detail and not ok else ""))
    if not ok:
        failures.append(what)


class Mock:
    def __init__(self, binary):
        # --time-scale 0.1: holds and hints a tenth as long, so the hold faults end within the read timeout's reach.
        self.proc = subprocess.Popen([binary, "serve", "--port", "0", "--time-scale", "0.1"],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        first = self.proc.stdout.readline().strip()
        if not first.startswith("listening on "):
            raise SystemExit(f"serve did not start: {first!r}")
        self.base = first.split(" ")[-1]

    def admin(self, method, path, body=None):
        req = urllib.request.Request(self.base + path, method=method, data=body.encode() if body else None)
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.read().decode()

    def route(self, ns, steps):
        """A namespace with route r (bedrock) playing `steps`; returns its SDK endpoint URL."""
        self.admin("PUT", f"/__llmchaos/ns/{ns}/script",
                   f'[route.r]\ndialect = "bedrock"\ntext = "{TEXT}"\nscript = [{steps}]\n')
        return f"{self.base}/{ns}/r"

    def ledger(self, ns):
        return json.loads(self.admin("GET", f"/__llmchaos/ns/{ns}/ledger"))

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


def client(endpoint):
    return boto3.client("bedrock-runtime", endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id="x", aws_secret_access_key="y",
                        # standard mode's own default: 3 attempts in all (`max_attempts` would count retries only)
                        config=Config(retries={"mode": "standard"},
                                      read_timeout=1, connect_timeout=2))


def streamed_text(c):
    out = c.converse_stream(modelId=MODEL, messages=MESSAGES)
    text = ""
    for event in out["stream"]:
        if "contentBlockDelta" in event:
            text += event["contentBlockDelta"]["delta"]["text"]
    return text


def outcome(call):
    """What the caller saw: ok: <text>, or the exception's class (botocore models each AWS error as its own ClientError subclass) and code."""
    try:
        return "ok: " + repr(call())
    except ClientError as e:
        return f"{type(e).__name__} {e.response['Error'].get('Code')}"
    except Exception as e:  # botocore's checksum and connection errors: the class is the finding
        return f"{type(e).__module__}.{type(e).__name__}"


def main():
    mock = Mock(sys.argv[1])
    try:
        print(f"boto3 {boto3.__version__}, botocore {botocore.__version__}")
        core_checks(mock)
        fault_table(mock)
    finally:
        mock.stop()
    return 1 if failures else 0


def core_checks(mock):
    c = client(mock.route("ok", '{ fault = "ok", times = 2 }'))
    answer = c.converse(modelId=MODEL, messages=MESSAGES)
    check("converse answers the text", answer["output"]["message"]["content"][0]["text"] == TEXT, answer)
    check("converse_stream deltas join to the text", streamed_text(c) == TEXT)

    c = client(mock.route("throttle", '{ fault = "rate_429", times = 2 }'))
    start = time.monotonic()
    answer = c.converse(modelId=MODEL, messages=MESSAGES)
    took = time.monotonic() - start
    ledger = mock.ledger("throttle")
    check("a ThrottlingException before the stream is retried to success",
          answer["output"]["message"]["content"][0]["text"] == TEXT)
    check("the ledger shows the 3 attempts", len(ledger) == 3, [e.get("status") for e in ledger])
    check("one amz-sdk-invocation-id over the 3 attempts, amz-sdk-request attempt=1..3",
          len({e.get("amz_sdk_invocation_id") for e in ledger}) == 1 and ledger[0].get("amz_sdk_invocation_id")
          and [e.get("amz_sdk_request") for e in ledger] == [f"attempt={n}; max=3" for n in (1, 2, 3)],
          [(e.get("amz_sdk_invocation_id"), e.get("amz_sdk_request")) for e in ledger])
    print(f"     3 attempts in {took:.2f} s; statuses {[e.get('status') for e in ledger]}; "
          f"hint form {ledger[0].get('retry_after_form')} {ledger[0].get('retry_after_sent_ms')} ms")

    c = client(mock.route("throttle3", '{ fault = "rate_429", times = 5 }'))
    seen = outcome(lambda: c.converse(modelId=MODEL, messages=MESSAGES))
    check("three throttles end in ThrottlingException after 3 attempts",
          seen == "ThrottlingException ThrottlingException" and len(mock.ledger("throttle3")) == 3,
          (seen, len(mock.ledger("throttle3"))))

    for name in ["throttlingException", "serviceUnavailableException", "modelStreamErrorException",
                 "internalServerException", "validationException"]:
        c = client(mock.route("exc", f'{{ fault = "stream_error", body = "{name}" }}'))
        try:
            streamed_text(c)
            check(f"in-stream {name} raises", False, "no exception")
        except EventStreamError as e:
            check(f"in-stream {name} surfaces as EventStreamError {name}",
                  e.response["Error"]["Code"] == name and len(mock.ledger("exc")) == 1, e.response["Error"])

    c = client(mock.route("crc", '{ fault = "malformed_event" }'))
    seen = outcome(lambda: streamed_text(c))
    check("a bad CRC raises a checksum error", "Checksum" in seen, seen)


FAULTS = ["ok", "rate_429", "quota_429", "payment_402", "overloaded", "server_500", "server_500_context",
          "bad_request", "auth", "policy", "stream_cut", "stream_error", "stream_stall", "slow_first_token",
          "malformed_event", "no_terminator", "prefill_rejected", "post_commit_timeout", "no_response",
          "connect_reset", "slow", "schema_missing"]


def fault_table(mock):
    print("\nfault | converse: what boto3 raised (attempts) | converse_stream: (attempts)")
    for i, fault in enumerate(FAULTS):
        # Holds and stalls keep their defaults (30 s, 3 s at --time-scale 0.1): past the 1 s read timeout.
        keys = {"slow": ", p50_ms = 10", "slow_first_token": ", first_token_ms = 100"}.get(fault, "")
        row = []
        for mode, call in (("plain", lambda c: c.converse(modelId=MODEL, messages=MESSAGES)["output"]["message"]
                            ["content"][0]["text"]), ("stream", streamed_text)):
            ns = f"t{i}{mode}"
            c = client(mock.route(ns, f'{{ fault = "{fault}", times = 5{keys} }}'))
            row.append(f"{outcome(lambda: call(c))} ({len(mock.ledger(ns))})")
        print(f"{fault} | {row[0]} | {row[1]}")


if __name__ == "__main__":
    sys.exit(main())
