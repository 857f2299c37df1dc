#!/usr/bin/env python3
"""Records and reports for bench/compare.sh.

  compare.py record OUT BENCH_JSON key=value...   one server run -> OUT/results.jsonl, one line printed
  compare.py na OUT key=value...                   a run that cannot be made (SRS and VOD): recorded as n/a
  compare.py floor OUT REP "floor n=... ..."       one floor run (bench/floor.c output line)
  compare.py report OUT                            the tables of medians (Markdown) from OUT/results.jsonl
  compare.py curve-record OUT LOAD_JSON PROBE_JSON key=value...   one bench/latency_curve.sh run
  compare.py curve-report OUT                      the cost/latency table (Markdown) + OUT/curve.json
"""
import json
import math
import os
import statistics
import sys

SERVERS = ("sluice", "ref", "srs", "nginx")
LABELS = {"sluice": "sluice", "ref": "sluice@ref", "srs": "SRS", "nginx": "nginx-rtmp"}


def emit(out, text):
    print(text, flush=True)
    with open(os.path.join(out, "run.log"), "a") as f:
        f.write(text + "\n")


def append(out, rec):
    with open(os.path.join(out, "results.jsonl"), "a") as f:
        f.write(json.dumps(rec) + "\n")


def server_figures(kv):
    """What every run measured of the server (compare.sh and http_compare.sh pass the same keys):
    its CPU and the machine's, wall time, memory, load, the run's note."""
    ticks = float(kv["ticks"])
    return {
        "cpu_s": int(kv["cpu_ticks"]) / ticks,
        "wall_s": float(kv["t1"]) - float(kv["t0"]),
        "machine_busy_s": int(kv["busy_ticks"]) / ticks,
        "idle_rss_kb": int(kv["idle_rss_kb"]),
        # the highest VmRSS seen by sampling every 0.25 s, VmHWM (the kernel's peak) and their max
        "sampled_rss_kb": int(kv["sampled_rss_kb"]), "hwm_kb": int(kv["hwm_kb"]),
        "peak_rss_kb": max(int(kv["sampled_rss_kb"]), int(kv["hwm_kb"])),
        "loadavg": kv["loadavg"], "note": kv["note"],
    }


def run_command(doc, commands):
    """argv: COMMAND OUT [ARGS...]; commands maps COMMAND to a function of (out, args)."""
    if len(sys.argv) < 3 or sys.argv[1] not in commands:
        print(doc, file=sys.stderr)
        sys.exit(2)
    commands[sys.argv[1]](sys.argv[2], sys.argv[3:])


def record(out, bench_json, pairs):
    kv = dict(p.split("=", 1) for p in pairs)
    try:
        with open(bench_json) as f:
            bench = json.load(f)
    except (OSError, ValueError) as e:
        bench = {"error": str(e)}
    rec = {
        "scenario": kv["scenario"], "kind": kv["kind"], "server": kv["server"], "rep": int(kv["rep"]),
        "players": int(kv["players"]), "rate": int(kv["rate"]), "seconds": int(kv["seconds"]),
        "url": kv["url"], "bench_rc": int(kv["bench_rc"]),
    }
    rec.update(server_figures(kv))
    rec["bench"] = bench
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


def not_applicable(out, pairs):
    kv = dict(p.split("=", 1) for p in pairs)
    rec = {"scenario": kv["scenario"], "kind": kv["kind"], "server": kv["server"], "rep": int(kv["rep"]),
           "players": int(kv["players"]), "na": True, "note": kv["note"]}
    append(out, rec)
    emit(out, f"  {rec['scenario']:<13} {rec['server']:<6} rep {rec['rep']}: {rec['note']}")


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


def load(out):
    with open(os.path.join(out, "meta.json")) as f:
        meta = json.load(f)
    recs = []
    with open(os.path.join(out, "results.jsonl")) as f:
        for line in f:
            if line.strip():
                recs.append(json.loads(line))
    return meta, recs


def read_mode(meta):
    # Results from before READ_BATCH_MS were made with sluice-bench's default, 100 ms batches.
    return meta.get("read_mode") or "reads in 100 ms batches (sluice-bench's default; not recorded)"


def report(out):
    meta, recs = load(out)
    floors = {}
    for r in recs:
        if r["kind"] == "floor":
            floors.setdefault(r["players"], []).append(r["cpu_s_per_gb"])
    floor_med = {n: med(v) for n, v in floors.items()}
    order = []
    for r in recs:
        if r["kind"] != "floor" and r["scenario"] not in order:
            order.append(r["scenario"])
    present = [s for s in SERVERS if any(r["server"] == s for r in recs)]

    lines = []
    ref = meta.get("ref_commit") or ""
    peers = []
    if "srs" in present:
        mw = f"{meta['srs_mw_latency']} ms" if meta.get("srs_mw_latency") else "350 ms (default)"
        msgs = meta.get("srs_mw_msgs") or "8 (default)"
        peers.append(f"SRS {meta.get('srs', '?')} (mw_latency {mw}, mw_msgs {msgs})")
    peers.append(f"nginx-rtmp {meta['nginx_rtmp']} ({meta['nginx']})")
    lines.append(f"Sluice vs {' and '.join(peers)}, one worker each, loopback; "
                 f"sluice {meta['sluice_commit']}" + (f", sluice@ref {ref}" if ref else "") +
                 f"; started {meta['started']}")
    lines.append(f"machine: {meta['machine']}")
    lines.append(f"media: 1280x720 25 fps H.264 + AAC, {meta['media_kbit']} kbit/s, GOP 2 s; "
                 f"{meta['reps']} repetition(s) per scenario, alternating {'/'.join(present)}; medians; "
                 f"runs of {meta['live_s']} s (live), {meta['vod_s']} s (VOD), {meta['ttff_s']} s (ttff), "
                 f"floor {meta['floor_s']} s")
    lines.append(f"players (sluice-bench play): {read_mode(meta)}")
    if "srs" not in present:
        lines.append("SRS: not in this run (bench/peers/build_srs.sh builds it), no SRS column")
    lines.append(f"load at start: {meta['uptime_start'].strip()}")
    lines.append("")

    m, by, fl_of = {}, {}, {}
    for name in order:
        by[name] = {s: [r for r in recs if r["scenario"] == name and r["server"] == s] for s in SERVERS}
        m[name] = {}
        for s in SERVERS:
            ok = [r for r in by[name][s] if not r["note"]]
            ms = [metrics(r) for r in ok]
            x = {k: med([y[k] for y in ms]) for k in (ms[0].keys() if ms else [])}
            x["runs"] = ms
            x["na"] = [r["note"] for r in by[name][s] if r.get("na")]
            x["bad"] = [f"rep {r['rep']}: {r['note']}" for r in by[name][s] if r["note"] and not r.get("na")]
            m[name][s] = x
        first = next(r for s in SERVERS for r in by[name][s])
        fl_of[name] = floor_med.get(first["players"]) if first["kind"] != "ttff" else None

    # The summary: one column per server, the ratios beside.
    cols = list(present)
    head = "| scenario | " + " | ".join(f"{LABELS[s]} CPU-s/GB" for s in cols)
    head += "".join(f" | sluice/{LABELS[p]}" for p in present if p != "sluice") + " | kernel floor "
    head += "| " + " | ".join(f"{LABELS[s]} RSS KB/player" for s in cols)
    head += " | " + " | ".join(f"{LABELS[s]} TTFF p50 ms" for s in cols) + " |"
    lines.append(head)
    ncols = head.count("|") - 1
    lines.append("|---|" + "---:|" * (ncols - 1))

    def cell(name, s, k, digits=2):
        x = m[name][s]
        if x["runs"]:
            return fmt(x[k], digits)
        if x["na"]:
            return "n/a"
        return "-"

    def ratio_cell(name, s, k):
        a, b = m[name]["sluice"], m[name][s]
        if b["na"] and not b["runs"]:
            return "n/a"
        if a["runs"] and b["runs"]:
            return ratio(a[k], b[k])
        return "-"

    bold = lambda v: v if v in ("n/a", "-") else f"**{v}**"
    for name in order:
        row = f"| {name} | " + " | ".join(cell(name, s, "cpu_gb") for s in cols)
        row += "".join(f" | {bold(ratio_cell(name, p, 'cpu_gb'))}" for p in present if p != "sluice")
        row += f" | {fmt(fl_of[name])} | " + " | ".join(cell(name, s, "kb_player", 1) for s in cols)
        row += " | " + " | ".join(cell(name, s, "ttff50", 0) for s in cols) + " |"
        lines.append(row)
    lines.append("")

    lines.append("| scenario | server | CPU-s/GB | × floor | CPU % of a core | GB delivered | MB/player "
                 "| peak RSS MB | RSS KB/player | TTFF p50 ms | TTFF p99 ms | stalls | failed |")
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    conditions = []
    for name in order:
        mm, fl = m[name], fl_of[name]
        for s in SERVERS:
            x = mm[s]
            if not by[name][s]:
                continue  # not in this run (no --ref, SRS not built)
            if not x["runs"]:
                why = "; ".join(sorted(set(x["na"]))) if x["na"] else "no valid run: " + "; ".join(x["bad"])
                lines.append(f"| {name} | {LABELS[s]} | {why} |" + " |" * 10)
                continue
            per_rep = lambda k: "/".join(str(r[k]) if r[k] is not None else "?" for r in x["runs"])
            lines.append(
                f"| {name} | {LABELS[s]} | {fmt(x['cpu_gb'])} | {ratio(x['cpu_gb'], fl, 1) if fl else '-'} "
                f"| {fmt(x['cpu_pct'], 0)} | {fmt(x['gb'])} | {fmt(x['mb_player'], 1)} | {fmt(x['peak_mb'], 1)} "
                f"| {fmt(x['kb_player'], 1)} | {fmt(x['ttff50'], 0)} | {fmt(x['ttff99'], 0)} "
                f"| {per_rep('stalls')} | {per_rep('failed')} |")
        a = mm["sluice"]
        for other, label in (("srs", "sluice/SRS"), ("nginx", "sluice/nginx"), ("ref", "sluice/ref")):
            c = mm[other]
            if a["runs"] and c["runs"]:
                lines.append(
                    f"| {name} | **{label}** | **{ratio(a['cpu_gb'], c['cpu_gb'])}** | | {ratio(a['cpu_pct'], c['cpu_pct'])} "
                    f"| {ratio(a['gb'], c['gb'])} | | {ratio(a['peak_mb'], c['peak_mb'])} | {ratio(a['kb_player'], c['kb_player'])} "
                    f"| {ratio(a['ttff50'], c['ttff50'])} | {ratio(a['ttff99'], c['ttff99'])} | | |")
        if fl is not None:
            lines.append(f"| {name} | kernel floor | {fmt(fl)} | 1.0× | | | | | | | | | |")
        runs = [r for s in SERVERS for r in mm[s]["runs"]]
        if runs:
            rng = lambda k, d=0: f"{fmt(min(r[k] for r in runs if r[k] is not None), d)}-{fmt(max(r[k] for r in runs if r[k] is not None), d)}"
            ended = {s: "/".join(str(r["ended"]) for r in mm[s]["runs"]) for s in SERVERS}
            cond = (f"- {name}: load {rng('load1', 1)}, machine busy {rng('busy_pct')}% of {meta['machine'].split()[0]} cores "
                    f"(100% = one core), bench {rng('bench_pct')}% of a core, bench loop lag max {rng('lag')} ms")
            if any(r["ended"] for r in runs):
                cond += "; plays ended by the server: " + ", ".join(
                    f"{LABELS[s]} {ended[s]}" for s in SERVERS if mm[s]["runs"])
            bad = [b for s in SERVERS for b in mm[s]["bad"]]
            if bad:
                cond += "; excluded: " + "; ".join(bad)
            conditions.append(cond)
    lines.append("")
    lines.append("CPU-s/GB: server CPU seconds (user+sys, /proc/PID/stat) over the bench run per GB the players "
                 "received. × floor: that over bench/floor.c at the same number of connections. RSS KB/player: "
                 "(peak RSS - RSS before the players connected) / players. Stalls and failed: per repetition. "
                 "n/a: the server cannot play that scenario (SRS serves no files over RTMP).")
    lines.append("")
    lines.append("Conditions per scenario (all runs of every server):")
    lines.extend(conditions)
    if floors:
        lines.append("- kernel floor, CPU-s/GB by connections: " + ", ".join(
            f"{n}: {fmt(floor_med[n], 3)} ({'/'.join(fmt(v, 3) for v in floors[n])})" for n in sorted(floors)))
    print("\n".join(lines))


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return {"error": str(e)}


def curve_record(out, load_json, probe_json, pairs):
    kv = dict(p.split("=", 1) for p in pairs)
    load, probe = read_json(load_json), read_json(probe_json)
    ticks = float(kv["ticks"])
    lp, pp = load.get("players", {}), probe.get("players", {})
    delay = probe.get("delay_ms", {})
    rec = {
        "server": kv["server"], "value": kv["value"], "setting": kv["setting"], "rep": int(kv["rep"]),
        "players": int(kv["players"]), "probes": int(kv["probes"]),
        "load_rc": int(kv["load_rc"]), "probe_rc": int(kv["probe_rc"]),
        "cpu_s": int(kv["cpu_ticks"]) / ticks, "wall_s": float(kv["t1"]) - float(kv["t0"]),
        "machine_busy_s": int(kv["busy_ticks"]) / ticks,
        "bytes": lp.get("bytes_in", 0) + pp.get("bytes_in", 0),
        "idle_rss_kb": int(kv["idle_rss_kb"]), "hwm_kb": int(kv["hwm_kb"]),
        "peak_rss_kb": max(int(kv["sampled_rss_kb"]), int(kv["hwm_kb"])),
        "loadavg": kv["loadavg"], "note": kv["note"], "load": load, "probe": probe,
    }
    if not rec["note"]:
        if not lp:
            rec["note"] = "no load summary (%s)" % load.get("error", "?")
        elif not delay.get("count"):
            rec["note"] = "no delay measured (%s)" % probe.get("error", "probes received nothing")
    gb = rec["bytes"] / 1e9
    rec["cpu_gb"] = rec["cpu_s"] / gb if gb else None
    append(out, rec)
    lbc, pbc = load.get("bench_cpu", {}), probe.get("bench_cpu", {})
    matched = delay.get("count", 0)
    unmatched = delay.get("unmatched", 0)
    line = (f"  {rec['server']:<6} {rec['value']:<8} rep {rec['rep']}: cpu {rec['cpu_s']:6.2f} s"
            f" = {rec['cpu_gb'] if rec['cpu_gb'] is not None else float('nan'):.3f} CPU-s/GB, {gb:.2f} GB,"
            f" delay p50/p99/max {delay.get('p50', 0):.1f}/{delay.get('p99', 0):.1f}/{delay.get('max', 0):.0f} ms"
            f" ({matched} messages, unmatched {unmatched}),"
            f" players ok {lp.get('ok', 0)}/{rec['players']} stalls {lp.get('stalls', '?')} failed {lp.get('failed', '?')},"
            f" probes ok {pp.get('ok', 0)}/{rec['probes']},"
            f" rss {rec['idle_rss_kb'] / 1024:.1f}->{rec['peak_rss_kb'] / 1024:.1f} MB,"
            f" bench {lbc.get('percent_of_one_core', 0):.0f}% lag {lbc.get('loop_lag_max_ms', 0):.0f} ms,"
            f" probe bench lag {pbc.get('loop_lag_max_ms', 0):.0f} ms,"
            f" machine {rec['machine_busy_s'] / max(rec['wall_s'], 0.001) * 100:.0f}% (load {rec['loadavg']})"
            f" [{rec['setting']}]")
    if rec["note"]:
        line += f" [{rec['note']}]"
    emit(out, line)


def curve_key(rec):
    return (rec["server"], rec["value"])


def curve_label(server, value):
    if server == "sluice":
        if value == "adaptive":
            return ("Sluice", "adaptive (defaults)")
        if value.startswith("a"):
            return ("Sluice", f"adaptive, ceiling {value[1:]} ms")
        if value.startswith("b"):
            return ("Sluice", f"adaptive, budget {value[1:]} writes/s")
        return ("Sluice", f"hold {value} ms (fixed)")
    lat, _, msgs = value.partition("/")
    return ("SRS", f"mw_latency {lat} ms" + (f", mw_msgs {msgs}" if msgs else ""))


def curve_report(out):
    meta, recs = load(out)
    keys = []
    for r in recs:
        if curve_key(r) not in keys:
            keys.append(curve_key(r))
    rows = []
    for k in keys:
        runs = [r for r in recs if curve_key(r) == k]
        ok = [r for r in runs if not r["note"]]
        d = [r["probe"].get("delay_ms", {}) for r in ok]
        lp = [r["load"].get("players", {}) for r in ok]
        row = {
            "server": k[0], "value": k[1], "setting": runs[0]["setting"], "runs": len(runs), "valid": len(ok),
            "cpu_s_per_gb": med([r["cpu_gb"] for r in ok]),
            "cpu_s_per_gb_runs": [r["cpu_gb"] for r in ok],
            "cpu_pct": med([r["cpu_s"] / r["wall_s"] * 100 for r in ok if r["wall_s"]]),
            "delay_p50_ms": med([x.get("p50") for x in d]), "delay_p90_ms": med([x.get("p90") for x in d]),
            "delay_p99_ms": med([x.get("p99") for x in d]), "delay_max_ms": med([x.get("max") for x in d]),
            "delay_p99_ms_runs": [x.get("p99") for x in d],
            "delay_messages": sum(x.get("count", 0) for x in d),
            "unmatched": sum(x.get("unmatched", 0) for x in d),
            "kb_player": med([(r["peak_rss_kb"] - r["idle_rss_kb"]) / r["players"] for r in ok]),
            "stalls": [x.get("stalls") for x in lp], "failed": [x.get("failed") for x in lp],
            "excluded": [f"rep {r['rep']}: {r['note']}" for r in runs if r["note"]],
        }
        rows.append(row)
    lines = [f"Cost/latency curve, live: {meta['players']} players ({meta['read_mode']}) + {meta['probes']} delay "
             f"probes, one stream of {meta['media_kbit']} kbit/s, runs of {meta['seconds']} s; "
             f"sluice {meta['sluice_commit']}"
             + (f" (build/release of {meta['sluice_built']})" if meta.get("sluice_built") else "")
             + f", SRS {meta.get('srs') or 'not built'}"
             + (f" (mw_msgs {meta['srs_mw_msgs']})" if meta.get("srs_mw_msgs") else "")
             + f"; {meta['reps']} repetition(s), points alternated, medians; started {meta['started']}",
             f"machine: {meta['machine']}; load at start: {meta['uptime_start'].strip()}", "",
             "| server | setting | CPU-s/GB | CPU-s/GB per run | CPU % of a core | delay p50 ms | p90 ms | p99 ms "
             "| max ms | p99 per run | RSS KB/player | stalls | failed | config |",
             "|---|---|---:|---|---:|---:|---:|---:|---:|---|---:|---|---|---|"]
    for row in rows:
        who, what = curve_label(row["server"], row["value"])
        if not row["valid"]:
            lines.append(f"| {who} | {what} | no valid run: {'; '.join(row['excluded'])} |" + " |" * 11)
            continue
        per = lambda xs, d=2: "/".join(fmt(x, d) for x in xs)
        lines.append(
            f"| {who} | {what} | {fmt(row['cpu_s_per_gb'], 3)} | {per(row['cpu_s_per_gb_runs'], 3)} | {fmt(row['cpu_pct'], 0)} "
            f"| {fmt(row['delay_p50_ms'], 1)} | {fmt(row['delay_p90_ms'], 1)} | {fmt(row['delay_p99_ms'], 1)} "
            f"| {fmt(row['delay_max_ms'], 0)} | {per(row['delay_p99_ms_runs'], 1)} | {fmt(row['kb_player'], 1)} "
            f"| {'/'.join(str(x) for x in row['stalls'])} | {'/'.join(str(x) for x in row['failed'])} "
            f"| `{row['setting'].strip()}` |")
    # At each SRS point: the cheapest Sluice point that adds no more delay (p99).
    srs_rows = [r for r in rows if r["server"] == "srs" and r["valid"]]
    sl_rows = [r for r in rows if r["server"] == "sluice" and r["valid"]]
    if srs_rows and sl_rows:
        lines.append("")
        lines.append("At each SRS point, the cheapest Sluice point with a p99 delay no higher:")
        for sr in srs_rows:
            fit = [r for r in sl_rows if r["delay_p99_ms"] is not None and sr["delay_p99_ms"] is not None
                   and r["delay_p99_ms"] <= sr["delay_p99_ms"] and r["cpu_s_per_gb"] is not None]
            head = f"- SRS {curve_label('srs', sr['value'])[1]} (p99 {fmt(sr['delay_p99_ms'], 1)} ms, {fmt(sr['cpu_s_per_gb'], 3)} CPU-s/GB): "
            if not fit:
                lines.append(head + "no Sluice point adds that little delay")
                continue
            best = min(fit, key=lambda r: r["cpu_s_per_gb"])
            lines.append(head + f"Sluice {curve_label('sluice', best['value'])[1]}, p99 {fmt(best['delay_p99_ms'], 1)} ms, "
                         f"{fmt(best['cpu_s_per_gb'], 3)} CPU-s/GB = **{ratio(best['cpu_s_per_gb'], sr['cpu_s_per_gb'])}** SRS's"
                         + (" (at or below SRS)" if best["cpu_s_per_gb"] <= sr["cpu_s_per_gb"] else " (above SRS)"))
    lines.append("")
    lines.append("CPU-s/GB: the server's utime + stime over the run per GB all players and probes received. Delay: "
                 "arrival - send of every audio/video message at the probes (sluice-bench latency, publisher and "
                 "probes in one process), p50/p90/p99/max per run, medians over the runs. RSS KB/player: (peak RSS - "
                 "RSS before the players connected) / players. Stalls and failed: the load players, per run.")
    excluded = [f"{curve_label(r['server'], r['value'])[0]} {r['value']}: {'; '.join(r['excluded'])}" for r in rows if r["excluded"]]
    if excluded:
        lines.append("Excluded runs: " + " | ".join(excluded))
    unmatched = [f"{curve_label(r['server'], r['value'])[0]} {r['value']}: {r['unmatched']}" for r in rows if r["unmatched"]]
    if unmatched:
        lines.append("Unmatched probe messages (not in the delay figures): " + ", ".join(unmatched))
    with open(os.path.join(out, "curve.json"), "w") as f:
        json.dump({"meta": meta, "points": rows}, f, indent=1)
    print("\n".join(lines))


def main():
    run_command(__doc__, {
        "record": lambda out, args: record(out, args[0], args[1:]),
        "curve-record": lambda out, args: curve_record(out, args[0], args[1], args[2:]),
        "curve-report": lambda out, args: curve_report(out),
        "na": not_applicable,
        "floor": lambda out, args: floor(out, args[0], args[1]),
        "report": lambda out, args: report(out),
    })


if __name__ == "__main__":
    main()
