#!/usr/bin/env python3
"""Time a streamed chat completion, one request at a time on one keep-alive connection.

usage: stream_timing.py URL COUNT   (URL: http://127.0.0.1:PORT/ROUTE/v1/chat/completions)

Per request: the time to the first event (from the request's send to the arrival of the first
`data:` line) and the mean gap between consecutive events. Prints the medians over COUNT requests as
one line: `ttfe_us GAP_US events N`. The client's own cost is the same whichever server answers, so
bench/proxy reports differences between two servers measured this way, not the absolute figures.
Standard library only; loopback only.
"""
import http.client
import json
import statistics
import sys
import time
import urllib.parse


def one_stream(conn, path, body):
    sent = time.perf_counter_ns()
    conn.request("POST", path, body=body, headers={"Content-Type": "application/json",
                                                   "Authorization": "Bearer sk-bench"})
    resp = conn.getresponse()
    if resp.status != 200:
        raise SystemExit(f"stream_timing: status {resp.status}: {resp.read()[:200]!r}")
    arrivals = []
    while True:
        line = resp.readline()
        if not line:
            break
        if line.startswith(b"data:"):
            arrivals.append(time.perf_counter_ns())
    if len(arrivals) < 2:
        raise SystemExit(f"stream_timing: {len(arrivals)} event(s); a stream of several is needed")
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
    return (arrivals[0] - sent) / 1000, statistics.fmean(gaps) / 1000, len(arrivals)


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    url = urllib.parse.urlsplit(sys.argv[1])
    count = int(sys.argv[2])
    if url.hostname not in ("127.0.0.1", "::1", "localhost") or not 1 <= count <= 100000:
        raise SystemExit("stream_timing: a loopback URL and a COUNT of 1 to 100000")
    body = json.dumps({"model": "gpt-bench", "stream": True, "messages": [{"role": "user", "content": "hi"}]})
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    one_stream(conn, url.path, body)  # warm-up: connection set up, caches filled
    samples = [one_stream(conn, url.path, body) for _ in range(count)]
    conn.close()
    ttfe = statistics.median(s[0] for s in samples)
    gap = statistics.median(s[1] for s in samples)
    print(f"{ttfe:.1f} {gap:.1f} events {samples[0][2]}")


if __name__ == "__main__":
    main()
