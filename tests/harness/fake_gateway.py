"""A fake third-party gateway for the http driver's tests: it behaves as real gateways did when
llmchaos was pointed at them (issue 14). It speaks OpenAI chat to the harness and forwards to the
case's openai routes (their URLs in the config the harness rendered, or in the x-fake-config header).
Modes (one or more, comma-separated):
  catchall     every POST under /v1/ is proxied to the primary route, the harness's drain included
               (as a gateway with a catch-all /v1/* proxy does)
  healthcheck  before each chat request, one probe of the primary's completion path with an
               Idempotency-Key of its own (foreign traffic)
  broken       a streamed answer is read whole from the upstream, then the gateway answers 500 (a
               gateway bug after a healthy upstream answer)
  header       routes by the x-fake-config header (JSON: {"targets": [{"sdk_base_url"}...],
               "backup": "URL or empty", "case": "..."}): the first target, then the fallback on a 4xx/5xx
Usage: fake_gateway.py CONFIG PORT MODES"""
import json
import sys

from relay import Handler, forward as relay_forward, serve, upstream_of

config, port, modes = sys.argv[1], int(sys.argv[2]), set(sys.argv[3].split(","))
upstream = upstream_of(config)


def forward(url, body, key, stream):
    return relay_forward(url, body, {"authorization": "Bearer sk-fake", "idempotency-key": key,
                                     "accept": "text/event-stream" if stream else "application/json"}, timeout=10)


class Gateway(Handler):
    def do_POST(self):
        body = self.request_body()
        key = self.headers.get("idempotency-key", "")
        if self.path != "/v1/chat/completions":
            if "catchall" in modes and self.path.startswith("/v1/"):
                status, ctype, data = forward(upstream + self.path[3:], body, key, False)
                return self.answer(status, ctype, data)
            return self.answer(404, "application/json", b'{"error": {"message": "not found"}}')
        stream = bool(json.loads(body or b"{}").get("stream"))
        targets = [upstream]
        if "header" in modes:
            cfg = json.loads(self.headers.get("x-fake-config", "{}"))
            targets = [t["sdk_base_url"] for t in cfg["targets"][:1]] + ([cfg["backup"]] if cfg.get("backup") else [])
        if "healthcheck" in modes:
            forward(targets[0] + "/chat/completions", body, "health-probe", False)
        for url in targets:
            status, ctype, data = forward(url + "/chat/completions", body, key, stream)
            if status < 400:
                break
        if "broken" in modes and stream and status == 200:
            return self.answer(500, "application/json", b'{"error": {"message": "TypeError: immutable"}}')
        return self.answer(status, ctype, data)


serve(port, Gateway)
