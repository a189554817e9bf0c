"""What the loopback test targets (points_target.py, fake_gateway.py) share: the upstream URL from the
config the harness rendered, one forwarded POST, and a handler that answers with a body of known length."""
import http.server
import re
import urllib.error
import urllib.request


def upstream_of(config):
    """The `upstream = "URL"` of the rendered config ("-": none, "")."""
    text = open(config).read() if config != "-" else ""
    found = re.search(r'upstream = "([^"]*)"', text)
    return found.group(1) if found else ""


def forward(url, body, headers, timeout):
    """POST body to url; (status, content-type, body bytes), an HTTP error's too."""
    request = urllib.request.Request(url, data=body, method="POST", headers={"content-type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return reply.status, reply.headers.get("content-type", "application/json"), reply.read()
    except urllib.error.HTTPError as e:
        return e.code, "application/json", e.read()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, status, content_type, data, headers=None):
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def request_body(self):
        return self.rfile.read(int(self.headers.get("content-length", 0)))

    def log_message(self, *args):
        pass


def serve(port, handler):
    http.server.ThreadingHTTPServer(("127.0.0.1", port), handler).serve_forever()
