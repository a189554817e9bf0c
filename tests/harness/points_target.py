"""A tiny target for the http driver's cross-check test: it forwards each chat request once to the
case's primary route (its URL in the config the harness rendered) and answers as a gateway would,
with x-llmchaos-points. `honest` reports the point the ledger shows (the failed attempt 0 failed
closed, rule 1); `lie` claims it was retried; `wrong-route` puts attempt 0 on a route the mock did not
see it on; `silent` sends no x-llmchaos-points (ledger only); `relay` passes the upstream's answer on
as it came (its content-type too: a stream stays a stream, with or without its [DONE]).
Usage: points_target.py CONFIG PORT honest|lie|wrong-route|silent|relay"""
import sys

from relay import Handler, forward, serve, upstream_of

config, port, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
upstream = upstream_of(config)
NOT_FOUND = b'{"error": {"message": "not found"}}'


class Target(Handler):
    def do_POST(self):
        body = self.request_body()
        if self.path != "/v1/chat/completions":
            return self.answer(404, "application/json", NOT_FOUND)
        status, content_type, data = forward(upstream + "/chat/completions", body, {
            "authorization": self.headers.get("authorization", ""),
            "idempotency-key": self.headers.get("idempotency-key", ""),
        }, timeout=5)
        if status < 400:
            content_type = content_type if mode == "relay" else "application/json"
            return self.answer(200, content_type, data, {"x-llmchaos-action": "success", "x-llmchaos-points": ""})
        headers = {"x-llmchaos-action": "fail_closed"}
        point = {"honest": "fail_closed primary 0 1", "lie": "retry primary 0 4", "wrong-route": "fail_closed backup 0 1"}
        if mode in point:
            headers["x-llmchaos-points"] = point[mode]
        return self.answer(502, "application/json", b'{"error": {"message": "upstream failed"}}', headers)


serve(port, Target)
