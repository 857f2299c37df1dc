#!/usr/bin/env python3
"""Figures and report for bench/relay_edge.sh (one JSON line per run, then the tables).

  relay_edge.py run DIR SCENARIO ROUND HZ ORIGIN_TICKS EDGE_TICKS   -> one JSON line (a cost run)
  relay_edge.py latency DIR SCENARIO                                -> one JSON line (a delay run)
  relay_edge.py show-run JSON / show-latency JSON                   -> one human line
  relay_edge.py report WORK MEDIA PLAYERS SECONDS ROUNDS RATE WORKERS LAT_PLAYERS LAT_SECONDS
      -> tables on stdout, WORK/relay_edge.json with everything
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from relay_figures import fmt, load, loop_lag_ms, media_kbps, median, print_delay_table, pulls  # noqa: E402

COST_BAR = 1.10     # edge CPU-s/GB over origin CPU-s/GB
DELAY_BAR_MS = 100  # p99 through origin -> edge


def cmd_run(d, scenario, rnd, hz, origin_ticks, edge_ticks):
    hz = int(hz)
    p = load(f"{d}/play.json")["players"]
    b = load(f"{d}/play.json").get("bench_cpu", {})
    gb = p["bytes_in"] / 1e9
    origin_cpu = int(origin_ticks) / hz
    edge_cpu = int(edge_ticks) / hz
    server_cpu = edge_cpu if scenario == "edge" else origin_cpu  # the server the players used
    rec = {"scenario": scenario, "round": int(rnd), "cpu_s": server_cpu, "gb": gb,
           "cpu_per_gb": server_cpu / gb if gb else None, "origin_cpu_s": origin_cpu,
           "ok": p["ok"], "failed": p["failed"], "failure_reasons": p.get("failure_reasons"),
           "stalls": p["stalls"], "mbps_in": p.get("mbps_in"), "ttff_p50_ms": (p.get("ttff_ms") or {}).get("p50"),
           "bench_cpu_percent": b.get("percent_of_one_core"), "loop_lag_ms": loop_lag_ms(f"{d}/metrics.txt")}
    if scenario == "edge":
        rec["edge_cpu_s"] = edge_cpu
        rec["upstream"] = pulls(f"{d}/relays.json")
    print(json.dumps(rec))


def cmd_latency(d, scenario):
    j = load(f"{d}/latency.json", {})
    p = j.get("players", {})
    delay = j.get("delay_ms", {})
    rec = {"scenario": scenario, "delay_ms": {k: delay.get(k) for k in ("count", "p50", "p90", "p99", "max")},
           "unmatched": delay.get("unmatched"), "players": p.get("clients"), "ok": p.get("ok"),
           "failed": p.get("failed"), "failure_reasons": p.get("failure_reasons"), "stalls": p.get("stalls"),
           "ttff_p50_ms": (p.get("ttff_ms") or {}).get("p50"),
           "bench_cpu_percent": j.get("bench_cpu", {}).get("percent_of_one_core")}
    if scenario == "edge":
        rec["upstream"] = pulls(f"{d}/relays.json")
    print(json.dumps(rec))


def cmd_show_run(line):
    r = json.loads(line)
    extra = ""
    if r["scenario"] == "edge":
        u = r.get("upstream") or {}
        extra = f", origin {r['origin_cpu_s']:.2f} CPU-s for its upstream player, upstream pulls={u.get('pulls')} connects={u.get('connects')}"
    print(f"  {r['scenario']:6} round {r['round']}: {r['cpu_s']:.2f} CPU-s, {r['gb']:.3f} GB, "
          f"{fmt(r['cpu_per_gb'])} CPU-s/GB, ok={r['ok']} failed={r['failed']} stalls={r['stalls']}, "
          f"bench {fmt(r['bench_cpu_percent'], '.0f')}% of a core{extra}", flush=True)


def cmd_show_latency(line):
    r = json.loads(line)
    d = r["delay_ms"]
    print(f"  latency {r['scenario']:6}: delay p50={fmt(d['p50'], '.2f')} p99={fmt(d['p99'], '.2f')} "
          f"max={fmt(d['max'], '.2f')} ms (n={d['count']}), unmatched={r['unmatched']}, "
          f"players ok={r['ok']} failed={r['failed']} (1 refused on purpose)", flush=True)


def cmd_report(work, media, players, seconds, rounds, rate, workers, lat_players, lat_seconds):
    runs = [json.loads(l) for l in open(f"{work}/runs.jsonl")]
    lat = {r["scenario"]: r for r in (json.loads(l) for l in open(f"{work}/latency.jsonl"))}
    kbps = media_kbps(media)
    print(f"\none stream of {kbps:.0f} kb/s, {players} players, {seconds} s per run (ramp {rate}/s), "
          f"{rounds} round(s), workers: {workers} per server")
    print("| players on | CPU-s/GB (runs) | median | GB delivered | stalls | failed | origin CPU-s (upstream only) | upstream connects |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    med = {}
    for sc in ("origin", "edge"):
        rs = [r for r in runs if r["scenario"] == sc]
        med[sc] = median(r["cpu_per_gb"] for r in rs)
        each = " / ".join(fmt(r["cpu_per_gb"]) for r in rs)
        if sc == "edge":
            up_cpu = " / ".join(f"{r['origin_cpu_s']:.2f}" for r in rs)
            conns = " / ".join(str((r.get("upstream") or {}).get("connects", "?")) for r in rs)
        else:
            up_cpu = conns = "-"
        print(f"| {sc} | {each} | {fmt(med[sc])} | {median(r['gb'] for r in rs):.2f} | "
              f"{sum(r['stalls'] for r in rs)} | {sum(r['failed'] for r in rs)} | {up_cpu} | {conns} |")
    ratios = []
    for rnd in sorted({r["round"] for r in runs}):
        o = next((r for r in runs if r["round"] == rnd and r["scenario"] == "origin"), None)
        e = next((r for r in runs if r["round"] == rnd and r["scenario"] == "edge"), None)
        if o and e and o["cpu_per_gb"] and e["cpu_per_gb"] is not None:
            ratios.append(e["cpu_per_gb"] / o["cpu_per_gb"])
    ratio = median(ratios)
    cost_ok = ratio is not None and ratio <= COST_BAR
    print(f"\nedge / origin, CPU-s per GB delivered, per round: {' / '.join(f'{x:.3f}' for x in ratios)}; "
          f"median {fmt(ratio)}x (bar <= {COST_BAR:.2f}: {'PASS' if cost_ok else 'FAIL'})")

    print(f"\ndelay, publisher on the origin -> {lat_players} players, {lat_seconds} s, every audio/video message:")
    added = print_delay_table(lat, (("origin", "origin"), ("edge", "edge (origin -> edge)")), "added by the edge")
    edge_p99 = (lat.get("edge") or {}).get("delay_ms", {}).get("p99")
    delay_ok = edge_p99 is not None and edge_p99 < DELAY_BAR_MS
    print(f"\nend-to-end p99 through origin -> edge: {fmt(edge_p99, '.2f')} ms "
          f"(bar < {DELAY_BAR_MS} ms: {'PASS' if delay_ok else 'FAIL'})")

    result = {
        "config": {"players": int(players), "seconds": int(seconds), "rounds": int(rounds), "ramp_per_s": int(rate),
                   "workers": int(workers), "media_kbps": kbps, "latency_players": int(lat_players),
                   "latency_seconds": int(lat_seconds)},
        "runs": runs,
        "median_cpu_per_gb": med,
        "edge_over_origin": {"per_round": ratios, "median": ratio, "bar": COST_BAR, "pass": cost_ok},
        "latency": {"origin": lat.get("origin"), "edge": lat.get("edge"), "added_ms": added,
                    "bar_p99_ms": DELAY_BAR_MS, "pass": delay_ok},
    }
    with open(f"{work}/relay_edge.json", "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")


def main(argv):
    cmds = {"run": cmd_run, "latency": cmd_latency, "show-run": cmd_show_run,
            "show-latency": cmd_show_latency, "report": cmd_report}
    if len(argv) < 2 or argv[1] not in cmds:
        sys.exit(__doc__)
    cmds[argv[1]](*argv[2:])


if __name__ == "__main__":
    main(sys.argv)
