"""A tiny target for the http driver's cross-check test: it forwards each chat request once to the
case's primary route (its URL in the config the harness rendered) and answers as a gateway would,
with x-llmchaos-points. `honest` reports the point the ledger shows (the failed attempt 0 failed
closed, rule 1); `lie` claims it was retried; `wrong-route` puts attempt 0 on a route the mock did not
see it on; `silent` sends no x-llmchaos-points (ledger only); `relay` passes the upstream's answer on
as it came (its content-type too: a stream stays a stream, with or without its [DONE]).
Usage: points_target.py CONFIG PORT honest|lie|wrong-route|silent|relay"""
import http.server
import re
import sys
import urllib.error
import urllib.request

config, port, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
upstream = re.search(r'upstream = "([^"]+)"', open(config).read()).group(1)


class Target(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, status, headers, body, content_type="application/json"):
        data = body.encode()
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        if self.path != "/v1/chat/completions":
            return self.answer(404, {}, '{"error": {"message": "not found"}}')
        request = urllib.request.Request(upstream + "/chat/completions", data=body, method="POST", headers={
            "content-type": "application/json",
            "authorization": self.headers.get("authorization", ""),
            "idempotency-key": self.headers.get("idempotency-key", ""),
        })
        try:
            with urllib.request.urlopen(request, timeout=5) as reply:
                content_type = reply.headers.get("content-type", "application/json") if mode == "relay" else "application/json"
                return self.answer(200, {"x-llmchaos-action": "success", "x-llmchaos-points": ""}, reply.read().decode(),
                                   content_type)
        except urllib.error.HTTPError:
            headers = {"x-llmchaos-action": "fail_closed"}
            point = {"honest": "fail_closed primary 0 1", "lie": "retry primary 0 4", "wrong-route": "fail_closed backup 0 1"}
            if mode in point:
                headers["x-llmchaos-points"] = point[mode]
            return self.answer(502, headers, '{"error": {"message": "upstream failed"}}')

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", port), Target).serve_forever()
