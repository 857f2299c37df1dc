#!/usr/bin/env python3
"""Records and reports for bench/compare.sh.

  compare.py record OUT BENCH_JSON key=value...   one server run -> OUT/results.jsonl, one line printed
  compare.py floor OUT REP "floor n=... ..."       one floor run (bench/floor.c output line)
  compare.py report OUT                            the table of medians (Markdown) from OUT/results.jsonl
"""
import json
import math
import os
import statistics
import sys

SERVERS = ("sluice", "ref", "nginx")
LABELS = {"sluice": "sluice", "ref": "sluice@ref", "nginx": "nginx-rtmp"}


def emit(out, text):
    print(text, flush=True)
    with open(os.path.join(out, "run.log"), "a") as f:
        f.write(text + "\n")


def append(out, rec):
    with open(os.path.join(out, "results.jsonl"), "a") as f:
        f.write(json.dumps(rec) + "\n")


def record(out, bench_json, pairs):
    kv = dict(p.split("=", 1) for p in pairs)
    try:
        with open(bench_json) as f:
            bench = json.load(f)
    except (OSError, ValueError) as e:
        bench = {"error": str(e)}
    ticks = float(kv["ticks"])
    rec = {
        "scenario": kv["scenario"], "kind": kv["kind"], "server": kv["server"], "rep": int(kv["rep"]),
        "players": int(kv["players"]), "rate": int(kv["rate"]), "seconds": int(kv["seconds"]),
        "url": kv["url"], "bench_rc": int(kv["bench_rc"]),
        "cpu_s": int(kv["cpu_ticks"]) / ticks,
        "wall_s": float(kv["t1"]) - float(kv["t0"]),
        "machine_busy_s": int(kv["busy_ticks"]) / ticks,
        "idle_rss_kb": int(kv["idle_rss_kb"]),
        # the highest VmRSS seen by sampling every 0.25 s, VmHWM (the kernel's peak) and their max
        "sampled_rss_kb": int(kv["sampled_rss_kb"]), "hwm_kb": int(kv["hwm_kb"]),
        "peak_rss_kb": max(int(kv["sampled_rss_kb"]), int(kv["hwm_kb"])),
        "loadavg": kv["loadavg"], "note": kv["note"], "bench": bench,
    }
    p = bench.get("players", {})
    if not p and not rec["note"]:
        rec["note"] = "no bench summary (%s)" % bench.get("error", "?")
    append(out, rec)
    gb = p.get("bytes_in", 0) / 1e9
    bc = bench.get("bench_cpu", {})
    ttff = p.get("ttff_ms", {})
    line = (f"  {rec['scenario']:<13} {rec['server']:<6} rep {rec['rep']}: cpu {rec['cpu_s']:6.2f} s"
            f" = {rec['cpu_s'] / gb if gb else float('nan'):.2f} CPU-s/GB, {gb:.2f} GB ({p.get('mbps_in', 0):.0f} Mb/s),"
            f" rss {rec['idle_rss_kb'] / 1024:.1f}->{rec['peak_rss_kb'] / 1024:.1f} MB"
            f" ({(rec['peak_rss_kb'] - rec['idle_rss_kb']) / rec['players']:.1f} KB/player;"
            f" sampled {rec['sampled_rss_kb'] / 1024:.1f} MB = {(rec['sampled_rss_kb'] - rec['idle_rss_kb']) / rec['players']:.1f} KB/player),"
            f" ttff p50/p99 {ttff.get('p50', 0):.0f}/{ttff.get('p99', 0):.0f} ms,"
            f" ok {p.get('ok', 0)}/{rec['players']}, stalls {p.get('stalls', '?')}, failed {p.get('failed', '?')},"
            f" ended by server {p.get('ended_by_server', 0)},"
            f" bench {bc.get('percent_of_one_core', 0):.0f}% lag {bc.get('loop_lag_max_ms', 0):.0f} ms,"
            f" machine {rec['machine_busy_s'] / max(rec['wall_s'], 0.001) * 100:.0f}% (load {rec['loadavg']})")
    if rec["note"]:
        line += f" [{rec['note']}]"
    reasons = p.get("failure_reasons") or {}
    if isinstance(reasons, dict):
        for reason, n in reasons.items():
            line += f"\n      failed x{n}: {reason}"
    elif isinstance(reasons, list):
        for item in reasons:
            line += f"\n      failed: {item}"
    emit(out, line)


def floor(out, rep, line):
    kv = dict(x.split("=", 1) for x in line.split()[1:])
    n = int(kv["n"])
    rec = {"scenario": f"floor{n}", "kind": "floor", "server": "floor", "rep": int(rep), "players": n,
           "cpu_s": float(kv["writer_cpu_s"]), "bytes": int(kv["bytes"]), "wall_s": float(kv["seconds"]),
           "cpu_s_per_gb": float(kv["cpu_s_per_gb"]), "mbps": float(kv["mbps"]), "floor": kv, "note": ""}
    append(out, rec)
    emit(out, f"  floor{n:<8} floor  rep {rec['rep']}: writer cpu {rec['cpu_s']:.2f} s"
              f" = {rec['cpu_s_per_gb']:.3f} CPU-s/GB, {rec['bytes'] / 1e9:.2f} GB ({rec['mbps']:.0f} Mb/s),"
              f" {kv['sends_per_conn_per_s']} sends/conn/s of {kv['write_bytes']} bytes")


def med(values):
    values = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return statistics.median(values) if values else None


def fmt(v, digits=2):
    if v is None:
        return "-"
    if digits == 0:
        return f"{v:.1f}" if abs(v) < 10 else f"{v:.0f}"
    return f"{v:.{digits}f}"


def ratio(a, b, digits=2):
    if a is None or b is None or b == 0:
        return "-"
    r = a / b
    if r < 0.01:
        return "<0.01×"
    return f"{r:.{digits}f}×"


def metrics(rec):
    p = rec["bench"].get("players", {})
    gb = p.get("bytes_in", 0) / 1e9
    ttff = p.get("ttff_ms", {})
    return {
        "cpu_gb": rec["cpu_s"] / gb if gb else None,
        "cpu_pct": rec["cpu_s"] / rec["wall_s"] * 100 if rec["wall_s"] else None,
        "gb": gb,
        "mb_player": p.get("bytes_in", 0) / rec["players"] / 1e6,
        "mbps": p.get("mbps_in"),
        "peak_mb": rec["peak_rss_kb"] / 1024,
        "kb_player": (rec["peak_rss_kb"] - rec["idle_rss_kb"]) / rec["players"],
        "ttff50": ttff.get("p50") if ttff.get("count") else None,
        "ttff99": ttff.get("p99") if ttff.get("count") else None,
        "stalls": p.get("stalls"),
        "failed": p.get("failed"),
        "ended": p.get("ended_by_server", 0),
        "bench_pct": rec["bench"].get("bench_cpu", {}).get("percent_of_one_core"),
        "lag": rec["bench"].get("bench_cpu", {}).get("loop_lag_max_ms"),
        "busy_pct": rec["machine_busy_s"] / rec["wall_s"] * 100 if rec["wall_s"] else None,
        "load1": float(rec["loadavg"].split()[0]),
    }


def report(out):
    with open(os.path.join(out, "meta.json")) as f:
        meta = json.load(f)
    recs = []
    with open(os.path.join(out, "results.jsonl")) as f:
        for line in f:
            if line.strip():
                recs.append(json.loads(line))
    floors = {}
    for r in recs:
        if r["kind"] == "floor":
            floors.setdefault(r["players"], []).append(r["cpu_s_per_gb"])
    floor_med = {n: med(v) for n, v in floors.items()}
    order = []
    for r in recs:
        if r["kind"] != "floor" and r["scenario"] not in order:
            order.append(r["scenario"])

    lines = []
    ref = meta.get("ref_commit") or ""
    lines.append(f"Sluice vs nginx-rtmp {meta['nginx_rtmp']} ({meta['nginx']}), one worker each, loopback; "
                 f"sluice {meta['sluice_commit']}" + (f", sluice@ref {ref}" if ref else "") +
                 f"; started {meta['started']}")
    lines.append(f"machine: {meta['machine']}")
    lines.append(f"media: 1280x720 25 fps H.264 + AAC, {meta['media_kbit']} kbit/s, GOP 2 s; "
                 f"{meta['reps']} repetition(s) per scenario, alternating sluice/" + ("ref/" if ref else "") + "nginx; medians; "
                 f"runs of {meta['live_s']} s (live), {meta['vod_s']} s (VOD), {meta['ttff_s']} s (ttff), "
                 f"floor {meta['floor_s']} s")
    lines.append(f"load at start: {meta['uptime_start'].strip()}")
    lines.append("")
    lines.append("| scenario | server | CPU-s/GB | × floor | CPU % of a core | GB delivered | MB/player "
                 "| peak RSS MB | RSS KB/player | TTFF p50 ms | TTFF p99 ms | stalls | failed |")
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    conditions = []
    for name in order:
        by = {s: [r for r in recs if r["scenario"] == name and r["server"] == s] for s in SERVERS}
        m = {}
        for s in SERVERS:
            ok = [r for r in by[s] if not r["note"]]
            ms = [metrics(r) for r in ok]
            m[s] = {k: med([x[k] for x in ms]) for k in (ms[0].keys() if ms else [])}
            m[s]["runs"] = ms
            m[s]["bad"] = [f"rep {r['rep']}: {r['note']}" for r in by[s] if r["note"]]
        first = (by["sluice"] or by["nginx"] or by["ref"])[0]
        players = first["players"]
        fl = floor_med.get(players) if first["kind"] != "ttff" else None
        for s in SERVERS:
            x = m[s]
            if not by[s]:
                continue  # not in this run (no --ref)
            if not x["runs"]:
                lines.append(f"| {name} | {s} | no valid run: {'; '.join(x['bad'])} |" + " |" * 11)
                continue
            per_rep = lambda k: "/".join(str(r[k]) if r[k] is not None else "?" for r in x["runs"])
            label = LABELS[s]
            lines.append(
                f"| {name} | {label} | {fmt(x['cpu_gb'])} | {ratio(x['cpu_gb'], fl, 1) if fl else '-'} "
                f"| {fmt(x['cpu_pct'], 0)} | {fmt(x['gb'])} | {fmt(x['mb_player'], 1)} | {fmt(x['peak_mb'], 1)} "
                f"| {fmt(x['kb_player'], 1)} | {fmt(x['ttff50'], 0)} | {fmt(x['ttff99'], 0)} "
                f"| {per_rep('stalls')} | {per_rep('failed')} |")
        a, b = m["sluice"], m["nginx"]
        if a["runs"] and b["runs"]:
            lines.append(
                f"| {name} | **sluice/nginx** | **{ratio(a['cpu_gb'], b['cpu_gb'])}** | | {ratio(a['cpu_pct'], b['cpu_pct'])} "
                f"| {ratio(a['gb'], b['gb'])} | | {ratio(a['peak_mb'], b['peak_mb'])} | {ratio(a['kb_player'], b['kb_player'])} "
                f"| {ratio(a['ttff50'], b['ttff50'])} | {ratio(a['ttff99'], b['ttff99'])} | | |")
        c = m["ref"]
        if a["runs"] and c["runs"]:
            lines.append(
                f"| {name} | **sluice/ref** | **{ratio(a['cpu_gb'], c['cpu_gb'])}** | | {ratio(a['cpu_pct'], c['cpu_pct'])} "
                f"| {ratio(a['gb'], c['gb'])} | | {ratio(a['peak_mb'], c['peak_mb'])} | {ratio(a['kb_player'], c['kb_player'])} "
                f"| {ratio(a['ttff50'], c['ttff50'])} | {ratio(a['ttff99'], c['ttff99'])} | | |")
        if fl is not None:
            lines.append(f"| {name} | kernel floor | {fmt(fl)} | 1.0× | | | | | | | | | |")
        runs = a["runs"] + b["runs"] + c["runs"]
        if runs:
            rng = lambda k, d=0: f"{fmt(min(r[k] for r in runs if r[k] is not None), d)}-{fmt(max(r[k] for r in runs if r[k] is not None), d)}"
            ended = {s: "/".join(str(r["ended"]) for r in m[s]["runs"]) for s in SERVERS}
            cond = (f"- {name}: load {rng('load1', 1)}, machine busy {rng('busy_pct')}% of {meta['machine'].split()[0]} cores "
                    f"(100% = one core), bench {rng('bench_pct')}% of a core, bench loop lag max {rng('lag')} ms")
            if any(r["ended"] for r in runs):
                cond += "; plays ended by the server: " + ", ".join(f"{LABELS[s]} {ended[s]}" for s in SERVERS if by[s])
            bad = a["bad"] + b["bad"] + c["bad"]
            if bad:
                cond += "; excluded: " + "; ".join(bad)
            conditions.append(cond)
    lines.append("")
    lines.append("CPU-s/GB: server CPU seconds (user+sys, /proc/PID/stat) over the bench run per GB the players "
                 "received. × floor: that over bench/floor.c at the same number of connections. RSS KB/player: "
                 "(peak RSS - RSS before the players connected) / players. Stalls and failed: per repetition.")
    lines.append("")
    lines.append("Conditions per scenario (all runs of every server):")
    lines.extend(conditions)
    if floors:
        lines.append("- kernel floor, CPU-s/GB by connections: " + ", ".join(
            f"{n}: {fmt(floor_med[n], 3)} ({'/'.join(fmt(v, 3) for v in floors[n])})" for n in sorted(floors)))
    print("\n".join(lines))


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    cmd, out = sys.argv[1], sys.argv[2]
    if cmd == "record":
        record(out, sys.argv[3], sys.argv[4:])
    elif cmd == "floor":
        floor(out, sys.argv[3], sys.argv[4])
    elif cmd == "report":
        report(out)
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
