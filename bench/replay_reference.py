#!/usr/bin/env python3
"""Plain-Python reference of `llmchaos replay` (offline): the same three policies, the same figures.

Usage: replay_reference.py TRACE [--timeout 2.5,3,3.5] [--json FILE]

Standard library only (no numpy): this is the baseline `bench/replay` compares against, and a second,
independent implementation of the policy definitions in experiments/README.md.
"""
import argparse
import csv
import json
import math
import sys
import time


def percentile(sorted_values, percent):
    """numpy.percentile's default ("linear"): interpolate between the two closest ranks."""
    n = len(sorted_values)
    if n == 0:
        return float("nan")
    h = (n - 1) * percent / 100.0
    i = math.floor(h)
    g = h - i
    if i + 1 >= n:
        return sorted_values[-1]
    a, b = sorted_values[i], sorted_values[i + 1]
    return b - (b - a) * (1.0 - g) if g >= 0.5 else a + (b - a) * g


def read_trace(path):
    """Rows as tuples (p1_sec, p1_ok, p2_sec, p2_ok, alt_sec, alt_ok)."""
    rows = []
    with open(path, newline="") as f:
        first = f.read(1)
        f.seek(0)
        if first == "{":
            for line in f:
                if not line.strip():
                    continue
                r = json.loads(line)
                p1, p2, alt = r["primary_1"], r["primary_2"], r["alternate"]
                rows.append((p1["sec"], p1["ok"], p2["sec"], p2["ok"], alt["sec"], alt["ok"]))
        else:
            def ok(v):
                return v.strip().lower() in ("true", "1")

            for r in csv.DictReader(f):
                rows.append((float(r["primary_1_sec"]), ok(r["primary_1_ok"]), float(r["primary_2_sec"]),
                             ok(r["primary_2_ok"]), float(r["alternate_sec"]), ok(r["alternate_ok"])))
    return rows


def evaluate(rows, policy, t):
    latencies = []
    extra = 0
    for p1_sec, p1_ok, p2_sec, p2_ok, alt_sec, alt_ok in rows:
        if policy == "wait" or (p1_ok and p1_sec <= t):
            if p1_ok:
                latencies.append(p1_sec)
            continue
        extra += 1
        sec, ok = (p2_sec, p2_ok) if policy == "retry" else (alt_sec, alt_ok)
        if ok:
            latencies.append(t + sec)
    latencies.sort()
    n = len(rows)
    return {
        "policy": policy,
        "timeout_sec": None if policy == "wait" else t,
        "requests": n,
        "successes": len(latencies),
        "success_rate": len(latencies) / n if n else 0.0,
        "p50_sec": percentile(latencies, 50),
        "p95_sec": percentile(latencies, 95),
        "p99_sec": percentile(latencies, 99),
        "max_sec": latencies[-1] if latencies else float("nan"),
        "extra_calls": extra,
        "extra_call_pct": 100.0 * extra / n if n else 0.0,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("trace")
    ap.add_argument("--timeout", default="2.5,3,3.5")
    ap.add_argument("--json")
    args = ap.parse_args()
    timeouts = [float(x) for x in args.timeout.split(",")]
    started = time.monotonic()
    rows = read_trace(args.trace)
    configs = [("wait", 0.0)] + [(p, t) for p in ("retry", "switch") for t in timeouts]
    results = [evaluate(rows, p, t) for p, t in configs]
    elapsed = time.monotonic() - started
    print(f"{'policy':<7} {'T (s)':>6} {'success':>8} {'p50':>7} {'p95':>7} {'p99':>7} {'max':>7} {'extra':>7}")
    for r in results:
        t = "-" if r["timeout_sec"] is None else f"{r['timeout_sec']:g}"
        print(f"{r['policy']:<7} {t:>6} {100 * r['success_rate']:7.2f}% {r['p50_sec']:7.3f} {r['p95_sec']:7.3f} "
              f"{r['p99_sec']:7.3f} {r['max_sec']:7.3f} {r['extra_call_pct']:6.2f}%")
    print(f"timing: read and evaluated {len(rows)} rows x {len(configs)} policies in {elapsed:.3f} s", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": results}, f)


if __name__ == "__main__":
    main()
