"""What bench/relay_edge.py and bench/cluster.py both read and print: JSON files, a node's loop lag
and pulls, the media's bit rate, medians, and the delay table of two scenarios (a stream played on
its own node, and one hop away)."""
import json
import os
import re
import statistics
import subprocess


def load(path, default=None):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def loop_lag_ms(path):
    """sluice_loop_lag_seconds quantiles from a /metrics dump, in ms, the worst worker's (None when absent)."""
    try:
        text = open(path).read()
    except OSError:
        return None
    out = {}
    for q in ("0.5", "0.99", "1"):
        vals = [float(v) for v in re.findall(r'sluice_loop_lag_seconds\{[^}]*quantile="%s"[^}]*\} (\S+)' % re.escape(q), text)]
        if vals:
            out[q] = max(vals) * 1000
    return out or None


def pulls(path):
    """A node's pulls from /api/v1/relays: how many, cluster ones, connects, failures, bytes, states."""
    relays = load(path)
    if not isinstance(relays, dict):
        return None
    p = relays.get("pull", [])
    return {"pulls": len(p), "cluster": sum(1 for x in p if x.get("cluster")),
            "connects": sum(x.get("connects", 0) for x in p), "failures": sum(x.get("failures", 0) for x in p),
            "bytes_in": sum(x.get("bytes_in", 0) for x in p),
            "upstreams": sorted({str(x.get("upstream")) for x in p}), "states": [x.get("state") for x in p]}


def media_kbps(path):
    try:
        out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=bit_rate", "-of", "json", path],
                             capture_output=True, text=True, check=True).stdout
        return float(json.loads(out)["format"]["bit_rate"]) / 1000
    except (OSError, subprocess.CalledProcessError, KeyError, ValueError):
        return os.path.getsize(path) * 8 / 20 / 1000  # bench_make_media makes 20 s


def fmt(v, spec=".3f"):
    return "-" if v is None else format(v, spec)


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def print_delay_table(lat, rows, hop_label):
    """One row per (scenario, label) of `rows` (the near one first), then what the hop adds; returns
    the added ms per quantile (empty without both scenarios)."""
    print("| players on | p50 ms | p90 ms | p99 ms | max ms | messages | unmatched | ok / failed |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for sc, label in rows:
        r = lat.get(sc)
        if not r:
            continue
        d = r["delay_ms"]
        print(f"| {label} | {fmt(d['p50'], '.2f')} | {fmt(d['p90'], '.2f')} | {fmt(d['p99'], '.2f')} | "
              f"{fmt(d['max'], '.2f')} | {d['count']} | {r['unmatched']} | {r['ok']} / {r['failed']} |")
    added = {}
    near, far = rows[0][0], rows[1][0]
    if near in lat and far in lat:
        for q in ("p50", "p90", "p99", "max"):
            a, b = lat[near]["delay_ms"].get(q), lat[far]["delay_ms"].get(q)
            added[q] = None if a is None or b is None else b - a
        print(f"| {hop_label} | {fmt(added['p50'], '.2f')} | {fmt(added['p90'], '.2f')} | "
              f"{fmt(added['p99'], '.2f')} | {fmt(added['max'], '.2f')} | | | |")
    return added
