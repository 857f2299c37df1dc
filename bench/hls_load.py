#!/usr/bin/env python3
"""Helper of bench/hls_load.sh: one JSON line per load run (record), and the report (report)."""
import json
import statistics
import sys


def record(d, kind, rnd, ticks, hz, t0, t1, peak_kb, load):
    j = json.load(open(f"{d}/bench.json"))
    p = j["players"]
    cpu = int(ticks) / int(hz)
    gb = p["bytes_in"] / 1e9
    hls = p.get("hls", {})
    elapsed = j["elapsed_s"] or 1
    print(json.dumps({
        "kind": kind, "round": int(rnd), "cpu_s": cpu, "window_s": float(t1) - float(t0), "gb": gb,
        "cpu_per_gb": cpu / gb if gb else float("nan"), "mbps": p["mbps_in"], "ok": p["ok"], "failed": p["failed"],
        "reasons": p["failure_reasons"], "stalls": p["stalls"], "clients_with_stalls": p["clients_with_stalls"],
        "peak_rss_mb": int(peak_kb) / 1024, "load1": float(load),
        "bench_cpu_pct": j["bench_cpu"]["percent_of_one_core"], "bench_lag_ms": j["bench_cpu"]["loop_lag_max_ms"],
        "ttff_p50": p["ttff_ms"]["p50"], "messages": p["messages_in"],
        "requests_per_s": (p["messages_in"] + hls.get("playlists", 0)) / elapsed if kind == "hls" else None,
        "playlists": hls.get("playlists"), "http_errors": hls.get("http_errors"),
        "fell_behind": hls.get("fell_behind"), "clients_fell_behind": hls.get("clients_fell_behind"),
        "connects": hls.get("connects"),
        "pdt": j.get("hls_latency_ms", {}).get("pdt"),
    }))


def fmt(v, spec=".2f"):
    return "-" if v is None else format(v, spec)


def latency_line(out, name, what, bar_ms):
    try:
        j = json.load(open(f"{out}/latency-{name}.json"))
    except (OSError, ValueError):
        return f"| {what} | (no result) | | | | | | |"
    lat = j["hls_latency_ms"]
    pub, p = lat["publish"], j["players"]
    hls = p.get("hls", {})
    verdict = "PASS" if pub["count"] and pub["max"] < bar_ms else "FAIL"
    return (f"| {what} | {p['clients']} ({p['ok']} ok) | {pub['count']} {lat['unit']}s | {pub['p50']:.0f} | {pub['p90']:.0f} | "
            f"{pub['p99']:.0f} | {pub['max']:.0f} | < {bar_ms / 1000:g} s: {verdict} (max) | {hls.get('clients_fell_behind')} | "
            f"{hls.get('http_errors')} | {p['stalls']} | {j['bench_cpu']['percent_of_one_core']:.0f} |")


def report(out, readers, seconds, rate):
    runs = [json.loads(l) for l in open(f"{out}/runs.jsonl")]
    probe = json.load(open(f"{out}/probe.json"))
    print(f"HLS vs HTTP-FLV: 1 stream of ~2.5 Mb/s, {readers} readers per run, {seconds} s per run (ramp {rate}/s "
          f"included), Sluice release, workers: 1; LL-HLS 2 s segments, 200 ms parts\n")
    print("| kind | round | server CPU-s | GB delivered | CPU-s/GB | Mb/s | ok | failed | stalls | fell behind (readers) "
          "| http errors | req/s | peak RSS MB | bench CPU % | bench lag ms | load1 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in runs:
        print(f"| {r['kind']} | {r['round']} | {r['cpu_s']:.2f} | {r['gb']:.3f} | {r['cpu_per_gb']:.3f} | {r['mbps']:.0f} | "
              f"{r['ok']} | {r['failed']} | {r['stalls']} | {fmt(r['clients_fell_behind'], 'd')} | "
              f"{fmt(r['http_errors'], 'd')} | {fmt(r['requests_per_s'], '.0f')} | {r['peak_rss_mb']:.1f} | "
              f"{r['bench_cpu_pct']:.0f} | {r['bench_lag_ms']:.0f} | {r['load1']:.2f} |")
    for r in runs:
        for reason, n in r["reasons"].items():
            print(f"  {r['kind']} round {r['round']}: failed x{n}: {reason}")
    med = {k: statistics.median(r["cpu_per_gb"] for r in runs if r["kind"] == k) for k in ("flv", "hls")}
    ratio = med["hls"] / med["flv"]
    print(f"\nmedian server CPU-s per GB delivered: HTTP-FLV {med['flv']:.3f}, LL-HLS {med['hls']:.3f}")
    print(f"LL-HLS / HTTP-FLV: {ratio:.2f}x (bar: at most 1.3x): {'PASS' if ratio <= 1.3 else 'FAIL'}")
    idle_rate = probe["idle_ticks"] / probe["hz"] / probe["idle_s"]
    def net(r):
        return max(r["cpu_s"] - idle_rate * r["window_s"], 0) / r["gb"]
    nmed = {k: statistics.median(net(r) for r in runs if r["kind"] == k) for k in ("flv", "hls")}
    print(f"the publisher alone costs the server {100 * idle_rate:.1f}% of a core; less that: HTTP-FLV {nmed['flv']:.3f}, "
          f"LL-HLS {nmed['hls']:.3f} CPU-s/GB, {nmed['hls'] / max(nmed['flv'], 1e-9):.2f}x")
    behind = sum(r["clients_fell_behind"] or 0 for r in runs if r["kind"] == "hls")
    print(f"LL-HLS readers that fell behind, all rounds: {behind} (bar: none): {'PASS' if behind == 0 else 'FAIL'}")
    mux = (probe["rss_muxer_kb"] - probe["rss_no_muxer_kb"]) / 1024
    print(f"server RSS, publisher only (no muxer): {probe['rss_no_muxer_kb'] / 1024:.1f} MB; with the LL-HLS muxer "
          f"and one reader, window full: {probe['rss_muxer_kb'] / 1024:.1f} MB; per stream: {mux:.1f} MB")
    pk = {k: statistics.median(r["peak_rss_mb"] for r in runs if r["kind"] == k) for k in ("flv", "hls")}
    print(f"median peak RSS under load: HTTP-FLV {pk['flv']:.1f} MB, LL-HLS {pk['hls']:.1f} MB")
    print("\nLatency (publisher in the bench process; part or segment fully received - send time of its first sample), ms:\n")
    print("| what | readers | measured | p50 | p90 | p99 | max | bar | fell behind | http errors | stalls | bench CPU % |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|")
    print(latency_line(out, "ll20", "LL-HLS, 200 ms parts", 2000))
    print(latency_line(out, "ts20", "HLS MPEG-TS, 2 s segments", 6000))
    print(latency_line(out, "fmp4seg20", "HLS fMP4, 2 s segments", 6000))
    print(latency_line(out, "ll-load", f"LL-HLS, {readers} readers at once", 2000))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "record":
        record(*args)
    elif cmd == "report":
        report(*args)
    else:
        sys.exit(f"hls_load.py: unknown command {cmd}")
