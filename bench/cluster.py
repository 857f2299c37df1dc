#!/usr/bin/env python3
"""Figures and report for bench/cluster.sh (one JSON line per run, then the tables).

  cluster.py run DIR SCENARIO ROUND HZ TICKS_A TICKS_B TICKS_C   -> one JSON line (a cost run)
  cluster.py latency DIR SCENARIO                                -> one JSON line (a delay run)
  cluster.py ttff DIR STREAMS                                    -> JSON (first frames on B and on A)
  cluster.py show-run JSON / show-latency JSON / show-ttff FILE  -> human lines
  cluster.py report WORK MEDIA PLAYERS SECONDS ROUNDS RATE WORKERS LAT_PLAYERS LAT_SECONDS
                    READ_BATCH READ_MODE COMMIT DIRTY
      -> tables on stdout, WORK/cluster.json with everything
"""
import json
import math
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from relay_figures import fmt, load, loop_lag_ms, media_kbps, median, print_delay_table, pulls  # noqa: E402

COST_BAR = 1.15     # B's (C's) CPU-s/GB over a single node's
DELAY_BAR_MS = 100  # p99, publisher on A -> players on B
TTFF_BAR_MS = 300   # p50, a play on a node without a pull yet
NODES = ("a", "b", "c")
LOG_PROBLEM = re.compile(r"\b(warn|warning|error|critical)\b")


def log_problems(path, expected=None):
    """Warning and error lines of a server log while the bench ran (up to the line count taken
    before the nodes were stopped, PATH's .loglines), how many and the first few; and how many at
    the stop."""
    try:
        lines = open(path, errors="replace").read().splitlines()
    except OSError:
        return {"count": 0, "first": [], "at_stop": 0}
    try:
        cut = int(open(path[:-len(".log")] + ".loglines").read().strip())
    except (OSError, ValueError):
        cut = len(lines)
    bad = [l for l in lines[:cut] if LOG_PROBLEM.search(l[:40]) and not (expected and re.search(expected, l))]
    late = [l for l in lines[cut:] if LOG_PROBLEM.search(l[:40])]
    return {"count": len(bad), "first": bad[:5], "at_stop": len(late), "first_at_stop": late[:3]}


def players_of(d, n):
    j = load(f"{d}/play-{n}.json")
    if not j:
        return None, None
    return j.get("players", {}), j.get("bench_cpu", {})


def cmd_run(d, scenario, rnd, hz, ta, tb, tc):
    hz = int(hz)
    ticks = dict(zip(NODES, (int(ta), int(tb), int(tc))))
    nodes = {}
    for n in NODES:
        rec = {"cpu_s": ticks[n] / hz, "loop_lag_ms": loop_lag_ms(f"{d}/metrics-{n}.txt"),
               "log": log_problems(f"{d}/{n}.log")}
        p, b = players_of(d, n)
        if p is not None:
            gb = p.get("bytes_in", 0) / 1e9
            rec.update({"gb": gb, "cpu_per_gb": rec["cpu_s"] / gb if gb else None, "players": p.get("clients"),
                        "ok": p.get("ok"), "failed": p.get("failed"), "failure_reasons": p.get("failure_reasons"),
                        "stalls": p.get("stalls"), "mbps_in": p.get("mbps_in"),
                        "ttff_p50_ms": (p.get("ttff_ms") or {}).get("p50"),
                        "bench_cpu_percent": b.get("percent_of_one_core"),
                        "bench_loop_lag_max_ms": b.get("loop_lag_max_ms")})
        if n != "a":
            rec["pulls"] = pulls(f"{d}/relays-{n}.json")
        nodes[n] = rec
    clients_a = load(f"{d}/clients-a.json")
    # A's players of the stream at the end: the pulls of B and C in a cluster run, none in a single run
    a_players = sum(1 for c in clients_a if c.get("playing")) if isinstance(clients_a, list) else None
    print(json.dumps({"scenario": scenario, "round": int(rnd), "nodes": nodes, "a_players": a_players}))


def cmd_latency(d, scenario):
    j = load(f"{d}/latency.json", {})
    p = j.get("players", {})
    delay = j.get("delay_ms", {})
    rec = {"scenario": scenario, "delay_ms": {k: delay.get(k) for k in ("count", "p50", "p90", "p99", "max")},
           "unmatched": delay.get("unmatched"), "players": p.get("clients"), "ok": p.get("ok"),
           "failed": p.get("failed"), "failure_reasons": p.get("failure_reasons"), "stalls": p.get("stalls"),
           "ttff_p50_ms": (p.get("ttff_ms") or {}).get("p50"),
           "bench_cpu_percent": j.get("bench_cpu", {}).get("percent_of_one_core"),
           "pulls_b": pulls(f"{d}/relays-b.json"),
           # player 0, on purpose: the publisher's URL has no play key
           "log": {n: log_problems(f"{d}/{n}.log", r"event=play_rejected .*by=rules") for n in NODES}}
    print(json.dumps(rec))


def nearest_rank(values, q):
    values = sorted(values)
    return values[max(0, math.ceil(q * len(values)) - 1)] if values else None


def spread(values):
    return {"n": len(values), "p50": statistics.median(values) if values else None,
            "p90": nearest_rank(values, 0.9), "max": max(values) if values else None}


def cmd_ttff(d, streams):
    out = {"b": [], "a": [], "failed": {"b": [], "a": []}, "setup_ms_b": []}
    for i in range(int(streams)):
        for n in ("b", "a"):
            j = load(f"{d}/play-{n}-{i}.json", {})
            p = j.get("players", {})
            v = (p.get("ttff_ms") or {}).get("p50")
            if v is None or p.get("ok") != 1:
                out["failed"][n].append({"stream": f"t{i}", "failure_reasons": p.get("failure_reasons"),
                                         "text": open(f"{d}/play-{n}-{i}.txt", errors="replace").read()[-300:]
                                         if os.path.exists(f"{d}/play-{n}-{i}.txt") else None})
            else:
                out[n].append(v)
                if n == "b":
                    out["setup_ms_b"].append((p.get("setup_ms") or {}).get("p50"))
    out["on_b"] = spread(out["b"])
    out["on_a"] = spread(out["a"])
    out["setup_on_b"] = spread([v for v in out["setup_ms_b"] if v is not None])
    out["pulls_b"] = pulls(f"{d}/relays-b.json")
    out["log"] = {n: log_problems(f"{d}/{n}.log") for n in NODES}
    print(json.dumps(out))


def log_note(logs):
    bad = {n: l["count"] for n, l in logs.items() if l["count"]}
    return f", log warnings/errors {bad}" if bad else ""


def cmd_show_run(line):
    r = json.loads(line)
    parts = []
    for n in NODES:
        x = r["nodes"][n]
        if "gb" in x:
            parts.append(f"{n.upper()} {x['cpu_s']:.2f} CPU-s {x['gb']:.2f} GB {fmt(x['cpu_per_gb'])} CPU-s/GB "
                         f"ok={x['ok']} failed={x['failed']} stalls={x['stalls']} bench {fmt(x['bench_cpu_percent'], '.0f')}%")
        else:
            parts.append(f"{n.upper()} {x['cpu_s']:.2f} CPU-s")
    pl = [f"{n.upper()} pulls={(r['nodes'][n].get('pulls') or {}).get('pulls')}"
          f"/connects={(r['nodes'][n].get('pulls') or {}).get('connects')}" for n in ("b", "c")]
    print(f"  {r['scenario']:7} round {r['round']}: " + "; ".join(parts) +
          f"; {', '.join(pl)}, players on A at the end={r['a_players']}" + log_note({n: r['nodes'][n]['log'] for n in NODES}),
          flush=True)


def cmd_show_latency(line):
    r = json.loads(line)
    d = r["delay_ms"]
    print(f"  latency {r['scenario']:7}: delay p50={fmt(d['p50'], '.2f')} p99={fmt(d['p99'], '.2f')} "
          f"max={fmt(d['max'], '.2f')} ms (n={d['count']}), unmatched={r['unmatched']}, "
          f"players ok={r['ok']} failed={r['failed']} (1 refused on purpose){log_note(r['log'])}", flush=True)


def cmd_show_ttff(path):
    t = load(path)
    b, a = t["on_b"], t["on_a"]
    print(f"  ttff on B (no pull yet): {' '.join(fmt(v, '.0f') for v in t['b'])} ms -> p50 {fmt(b['p50'], '.1f')}, "
          f"failed {len(t['failed']['b'])}; on A: p50 {fmt(a['p50'], '.1f')}{log_note(t['log'])}", flush=True)


def cmd_report(work, media, players, seconds, rounds, rate, workers, lat_players, lat_seconds, read_batch,
               read_mode, commit, dirty):
    runs = [json.loads(l) for l in open(f"{work}/runs.jsonl")]
    lat = {r["scenario"]: r for r in (json.loads(l) for l in open(f"{work}/latency.jsonl"))}
    tt = load(f"{work}/ttff.json", {})
    kbps = media_kbps(media)
    print(f"\none stream of {kbps:.0f} kb/s published on A; {players} players per serving node, {seconds} s per run "
          f"(ramp {rate}/s), {rounds} round(s), workers: {workers} per node; players {read_mode}")
    print("| run | players on | CPU-s/GB (rounds) | median | GB per run | stalls | failed | loop lag p99 / max ms (worst round) |")
    print("|---|---|---|---:|---:|---:|---:|---|")
    rows = {"single": [("a", "A (itself)")], "cluster": [("b", "B (pull from A)"), ("c", "C (pull from A)")]}
    med = {}
    for sc in ("single", "cluster"):
        rs = [r for r in runs if r["scenario"] == sc]
        for n, label in rows[sc]:
            xs = [r["nodes"][n] for r in rs]
            med[f"{sc}_{n}"] = median(x.get("cpu_per_gb") for x in xs)
            lags = [x.get("loop_lag_ms") or {} for x in xs]
            p99 = max((l.get("0.99") for l in lags if l.get("0.99") is not None), default=None)
            mx = max((l.get("1") for l in lags if l.get("1") is not None), default=None)
            print(f"| {sc} | {label} | {' / '.join(fmt(x.get('cpu_per_gb')) for x in xs)} | {fmt(med[f'{sc}_{n}'])} | "
                  f"{fmt(median(x.get('gb') for x in xs), '.2f')} | {sum(x.get('stalls') or 0 for x in xs)} | "
                  f"{sum(x.get('failed') or 0 for x in xs)} | {fmt(p99, '.1f')} / {fmt(mx, '.1f')} |")
    cl = [r for r in runs if r["scenario"] == "cluster"]
    print(f"\nA's CPU-s in the cluster runs (the publisher and the pulls of B and C): "
          f"{' / '.join(format(r['nodes']['a']['cpu_s'], '.2f') for r in cl)}; "
          f"A's players at the end (the pulls): {' / '.join(str(r['a_players']) for r in cl)}; "
          f"pulls (connects) on B: {' / '.join(str((r['nodes']['b'].get('pulls') or {}).get('connects')) for r in cl)}, "
          f"on C: {' / '.join(str((r['nodes']['c'].get('pulls') or {}).get('connects')) for r in cl)}")
    ratios = {"b": [], "c": []}
    for rnd in sorted({r["round"] for r in runs}):
        s = next((r for r in runs if r["round"] == rnd and r["scenario"] == "single"), None)
        c = next((r for r in runs if r["round"] == rnd and r["scenario"] == "cluster"), None)
        if not (s and c and s["nodes"]["a"].get("cpu_per_gb")):
            continue
        for n in ("b", "c"):
            v = c["nodes"][n].get("cpu_per_gb")
            ratios[n].append(None if v is None else v / s["nodes"]["a"]["cpu_per_gb"])
    cost = {}
    for n in ("b", "c"):
        m = median(ratios[n])
        cost[n] = {"per_round": ratios[n], "median": m, "pass": m is not None and m <= COST_BAR}
        print(f"{n.upper()} / single A, CPU-s per GB delivered, per round: {' / '.join(fmt(x) for x in ratios[n])}; "
              f"median {fmt(m)}x (bar <= {COST_BAR:.2f}: {'PASS' if cost[n]['pass'] else 'FAIL'})")

    print(f"\ndelay, publisher on A -> {lat_players} players, {lat_seconds} s, every audio/video message:")
    added = print_delay_table(lat, (("single", "A (single node)"), ("cluster", "B (A -> B)")), "added by the hop")
    p99 = (lat.get("cluster") or {}).get("delay_ms", {}).get("p99")
    delay_ok = p99 is not None and p99 < DELAY_BAR_MS
    print(f"\np99 publisher on A -> players on B: {fmt(p99, '.2f')} ms (bar < {DELAY_BAR_MS} ms: "
          f"{'PASS' if delay_ok else 'FAIL'})")

    ob, oa = tt.get("on_b", {}), tt.get("on_a", {})
    print("\ntime to first frame (play command -> first video picture), one player per fresh stream of A:")
    print("| player on | samples | p50 ms | p90 ms | max ms | failed |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, s, n in (("B (lookup + pull + GOP cache)", ob, "b"), ("A (the owner, for comparison)", oa, "a")):
        print(f"| {label} | {s.get('n')} | {fmt(s.get('p50'), '.1f')} | {fmt(s.get('p90'), '.1f')} | "
              f"{fmt(s.get('max'), '.1f')} | {len(tt.get('failed', {}).get(n, []))} |")
    su = tt.get("setup_on_b") or {}
    print(f"(before the play command, the connection, handshake and connect on B took p50 {fmt(su.get('p50'), '.1f')} ms, "
          f"max {fmt(su.get('max'), '.1f')} ms)")
    ttff_ok = ob.get("p50") is not None and ob.get("n", 0) >= 9 and ob["p50"] < TTFF_BAR_MS
    print(f"\nttff p50 on B: {fmt(ob.get('p50'), '.1f')} ms (bar < {TTFF_BAR_MS} ms: {'PASS' if ttff_ok else 'FAIL'})")

    result = {
        "config": {"players_per_node": int(players), "seconds": int(seconds), "rounds": int(rounds),
                   "ramp_per_s": int(rate), "workers": int(workers), "media_kbps": kbps, "lease_s": 10,
                   "latency_players": int(lat_players), "latency_seconds": int(lat_seconds),
                   "read_batch_ms": int(read_batch), "read_mode": read_mode, "commit": commit,
                   "tree_files_changed": int(dirty), "cpus": os.cpu_count()},
        "runs": runs,
        "median_cpu_per_gb": med,
        "cost_over_single": {"b": cost["b"], "c": cost["c"], "bar": COST_BAR},
        "latency": {"single": lat.get("single"), "cluster": lat.get("cluster"), "added_ms": added,
                    "bar_p99_ms": DELAY_BAR_MS, "pass": delay_ok},
        "ttff": dict(tt, bar_p50_ms=TTFF_BAR_MS, **{"pass": ttff_ok}),
    }
    with open(f"{work}/cluster.json", "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")


def main(argv):
    cmds = {"run": cmd_run, "latency": cmd_latency, "ttff": cmd_ttff, "show-run": cmd_show_run,
            "show-latency": cmd_show_latency, "show-ttff": cmd_show_ttff, "report": cmd_report}
    if len(argv) < 2 or argv[1] not in cmds:
        sys.exit(__doc__)
    cmds[argv[1]](*argv[2:])


if __name__ == "__main__":
    main(sys.argv)
