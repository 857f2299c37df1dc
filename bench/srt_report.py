#!/usr/bin/env python3
"""Records and report for bench/srt.sh (SRT against RTMP on one Sluice loop).

  srt_report.py record OUT BENCH_JSON SERVER_LOG key=value...   one run -> OUT/results.jsonl, one line printed
  srt_report.py report OUT                                       the tables of medians and the bars (Markdown)
"""
import json
import os
import re
import statistics
import sys

CLOSE = re.compile(r'event=srt_close reason="([^"]*)" bytes_in=(\d+) bytes_out=(\d+) continuity_errors=(\d+)'
                   r' damaged_packets=(\d+)')
PUBLISH_END = re.compile(r'event=publish_end stream=(\S+) frames=(\d+) bytes=(\d+)')
PAYLOAD = 1316  # bytes of MPEG-TS per SRT data packet
SERVERS = ("sluice", "srs")
LABELS = {"sluice": "Sluice", "srs": "SRS"}


def append(out, rec):
    with open(os.path.join(out, "results.jsonl"), "a") as f:
        f.write(json.dumps(rec) + "\n")


def server_log_figures(path):
    """What the server's log says of the run: SRT closes (bytes, continuity errors), publications
    ended, and the warnings and errors (by event)."""
    fig = {"srt_closes": 0, "srt_bytes_in": 0, "srt_bytes_out": 0, "continuity_errors": 0, "damaged_packets": 0,
           "close_reasons": {}, "publish_ends": 0, "warnings": {}, "crash": False}
    try:
        lines = open(path, errors="replace").read().splitlines()
    except OSError:
        return fig
    for line in lines:
        m = CLOSE.search(line)
        if m:
            fig["srt_closes"] += 1
            fig["srt_bytes_in"] += int(m.group(2))
            fig["srt_bytes_out"] += int(m.group(3))
            fig["continuity_errors"] += int(m.group(4))
            fig["damaged_packets"] += int(m.group(5))
            reason = m.group(1)
            fig["close_reasons"][reason] = fig["close_reasons"].get(reason, 0) + 1
        if PUBLISH_END.search(line):
            fig["publish_ends"] += 1
        lvl = re.search(r"\[(warning|error|critical)\]", line)
        if lvl:
            ev = re.search(r"event=(\S+)", line)
            key = f"{lvl.group(1)} {ev.group(1) if ev else line[-80:]}"
            fig["warnings"][key] = fig["warnings"].get(key, 0) + 1
        if "AddressSanitizer" in line or "Segmentation fault" in line or "terminate called" in line:
            fig["crash"] = True
    return fig


def perf_stat(path):
    """perf stat -x, output: {event: count}."""
    counts = {}
    try:
        for line in open(path):
            parts = line.strip().split(",")
            if len(parts) >= 3 and parts[0] and not line.startswith("#"):
                try:
                    counts[parts[2]] = float(parts[0])
                except ValueError:
                    pass
    except OSError:
        pass
    return counts


def record(out, args):
    bench_json, server_log, pairs = args[0], args[1], args[2:]
    kv = dict(p.split("=", 1) for p in pairs)
    try:
        with open(bench_json) as f:
            bench = json.load(f)
    except (OSError, ValueError) as e:
        bench = {"error": str(e)}
    ticks = float(kv["ticks"])
    rec = {"srv": kv.get("server", "sluice"), "scenario": kv["scenario"], "proto": kv["proto"], "rep": int(kv["rep"]), "kind": kv.get("kind", "run"),
           "bench_rc": int(kv["bench_rc"]), "cpu_s": int(kv["cpu_ticks"]) / ticks,
           "wall_s": float(kv["t1"]) - float(kv["t0"]), "machine_busy_s": int(kv["busy_ticks"]) / ticks,
           "loadavg": kv["loadavg"], "note": kv["note"], "bench": bench,
           "server": server_log_figures(server_log) if kv.get("server", "sluice") == "sluice" else
                     server_log_figures("/dev/null")}
    if rec["kind"] == "stat":
        rec["perf"] = perf_stat(os.path.join(out, f"perf-stat-{rec['scenario']}-{rec['proto']}.csv"))
    append(out, rec)
    print(line_of(rec), flush=True)
    with open(os.path.join(out, "run.log"), "a") as f:
        f.write(line_of(rec) + "\n")


def gb_of(rec):
    b = rec["bench"]
    if rec["scenario"] == "ingest":
        return b.get("publishers", {}).get("bytes_out", 0) / 1e9
    if rec["scenario"].startswith("fanout"):
        return b.get("players", {}).get("bytes_in", 0) / 1e9
    return 0


def cpu_per_gb(rec):
    gb = gb_of(rec)
    return rec["cpu_s"] / gb if gb else float("nan")


def lost_bytes(rec):
    """SRT ingest: bytes the publishers sent that the server's connections did not receive."""
    return rec["bench"].get("publishers", {}).get("bytes_out", 0) - rec["server"]["srt_bytes_in"]


def line_of(rec):
    b, s = rec["bench"], rec["server"]
    head = f"  {rec.get('srv', 'sluice'):<6} {rec['scenario']:<9} {rec['proto']:<4} rep {rec['rep']}"
    if rec["kind"] != "run":
        head += f" ({rec['kind']})"
    bc = b.get("bench_cpu", {})
    tail = f"bench cpu {bc.get('total_s', 0):.1f} s, lag max {bc.get('loop_lag_max_ms', 0):.0f} ms, load {rec['loadavg']}"
    if rec["note"]:
        tail += f"; NOTE {rec['note']}"
    srt = b.get("srt", {})
    if rec["scenario"] == "ingest":
        p = b.get("publishers", {})
        loss = ""
        if rec["proto"] == "srt" and rec.get("srv", "sluice") == "sluice":
            loss = (f", server got {s['srt_bytes_in']} of {p.get('bytes_out', 0)} bytes (lost {lost_bytes(rec)}),"
                    f" cc errors {s['continuity_errors']}, dropped {srt.get('packets_dropped_send', 0)},"
                    f" retransmitted {srt.get('packets_retransmitted', 0)}")
        return (f"{head}: cpu {rec['cpu_s']:.2f} s = {cpu_per_gb(rec):.2f} CPU-s/GB of {gb_of(rec):.3f} GB,"
                f" ok {p.get('ok', 0)}/{p.get('clients', 0)}, worst lateness {p.get('max_send_late_ms', 0):.0f} ms{loss}; {tail}")
    if rec["scenario"].startswith("fanout"):
        p = b.get("players", {})
        extra = ""
        if rec["proto"] == "srt":
            extra = (f", srt lost {srt.get('packets_lost_receive', 0)} dropped {srt.get('packets_dropped_receive', 0)},"
                     f" sync errors {srt.get('ts_sync_errors', 0)}")
        return (f"{head}: cpu {rec['cpu_s']:.2f} s = {cpu_per_gb(rec):.2f} CPU-s/GB of {gb_of(rec):.2f} GB"
                f" ({p.get('mbps_in', 0):.0f} Mb/s), ok {p.get('ok', 0)}/{p.get('clients', 0)},"
                f" failed {p.get('failed', 0)}, stalls {p.get('stalls', 0)}"
                f" (readers {p.get('clients_with_stalls', 0)}), ended {p.get('ended_by_server', 0)}{extra}; {tail}")
    d = b.get("delay_ms", {})
    return (f"{head}: delay p50 {d.get('p50', 0):.1f} p90 {d.get('p90', 0):.1f} p99 {d.get('p99', 0):.1f}"
            f" max {d.get('max', 0):.1f} ms (n={d.get('count', 0)}, unmatched {d.get('unmatched', 0)}),"
            f" players ok {b.get('players', {}).get('ok', 0)}, stalls {b.get('players', {}).get('stalls', 0)}; {tail}")


def med(values):
    values = [v for v in values if v == v]
    return statistics.median(values) if values else float("nan")


def fmt(v, digits=2):
    return "n/a" if v != v else f"{v:.{digits}f}"


def fanout_section(pick, scenario, n, rate, bars):
    if not (pick(scenario, "srt") or pick(scenario, "rtmp")):
        return
    print(f"## Fan-out ({scenario}): {n} readers of one {rate} stream\n")
    print("| server | protocol | server CPU-s | GB delivered | CPU-s/GB | Mb/s | readers ok | failed | stalls | SRT drops |"
          " TTFF p50 ms | bench CPU-s | bench lag max ms |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    P = lambda r: r["bench"].get("players", {})
    for srv in SERVERS:
        for name, rs in (("SRT", pick(scenario, "srt", srv)), ("RTMP", pick(scenario, "rtmp", srv))):
            if not rs:
                continue
            drops = sum(r["bench"].get("srt", {}).get("packets_dropped_receive", 0) for r in rs) if name == "SRT" else "-"
            print(f"| {LABELS[srv]} | {name} | {fmt(med([r['cpu_s'] for r in rs]))} | {fmt(med([gb_of(r) for r in rs]))} |"
                  f" {fmt(med([cpu_per_gb(r) for r in rs]))} | {fmt(med([P(r).get('mbps_in', 0) for r in rs]), 0)} |"
                  f" {min(P(r).get('ok', 0) for r in rs)}/{n} | {sum(P(r).get('failed', 0) for r in rs)} |"
                  f" {sum(P(r).get('stalls', 0) for r in rs)} | {drops} |"
                  f" {fmt(med([P(r).get('ttff_ms', {}).get('p50', 0) for r in rs]), 0)} |"
                  f" {fmt(med([r['bench'].get('bench_cpu', {}).get('total_s', 0) for r in rs]), 1)} |"
                  f" {fmt(max(r['bench'].get('bench_cpu', {}).get('loop_lag_max_ms', 0) for r in rs), 0)} |")
    print()
    for srv in SERVERS:
        srt, rtmp = pick(scenario, "srt", srv), pick(scenario, "rtmp", srv)
        if srt and rtmp:
            ratio = med([cpu_per_gb(r) for r in srt]) / med([cpu_per_gb(r) for r in rtmp])
            print(f"{LABELS[srv]} SRT / RTMP: {ratio:.2f}x per GB delivered (bar 2x).")
            if srv == "sluice":
                bars.append((f"{scenario}: CPU-s/GB SRT <= 2x RTMP", f"{ratio:.2f}x", ratio <= 2))
    srt = pick(scenario, "srt")
    if srt:
        st = sum(P(r).get("stalls", 0) for r in srt)
        S = lambda k: sum(r["bench"].get("srt", {}).get(k, 0) for r in srt)
        print(f"\nSluice's SRT readers, all repetitions: stalls {st}; packets lost on the way {S('packets_lost_receive')}"
              f" (then retransmitted by the server, or dropped), dropped as too late {S('packets_dropped_receive')};"
              f" MPEG-TS sync errors {S('ts_sync_errors')}.")
        bars.append((f"{scenario}: no stalls", f"{st} stalls, {S('packets_dropped_receive')} packets dropped",
                     st == 0))
    runs = pick(scenario, "srt") + pick(scenario, "rtmp")
    cc = [r["server"]["continuity_errors"] for r in runs]
    if any(cc):
        print(f"\nThe stream's publisher at the server (Sluice's srt_close lines): continuity errors per run "
              f"(SRT runs, then RTMP runs) {cc}: MPEG-TS the server lost on the way in, while the machine was saturated.")
    print()


def report(out, _args):
    meta = json.load(open(os.path.join(out, "meta.json")))
    recs = [json.loads(line) for line in open(os.path.join(out, "results.jsonl"))]
    runs = [r for r in recs if r["kind"] == "run"]
    pick = lambda sc, proto, srv="sluice": [r for r in runs if r["scenario"] == sc and r["proto"] == proto
                                            and r.get("srv", "sluice") == srv]
    lat = meta["srt_latency_ms"]
    print(f"# SRT against RTMP, one Sluice loop ({meta['started']})\n")
    print(f"Sluice {meta['sluice']}; libsrt {meta['libsrt']};{' SRS ' + meta['srs'] + ' (SRT on the same libsrt);' if meta.get('srs') else ''} {meta['machine']}; srt.latency {lat} ms; "
          f"media {meta['media_kbit']}k H.264 + 128k AAC, TS {meta['ts_bytes']} B / FLV {meta['flv_bytes']} B for "
          f"{meta['media_s']} s (TS is {100 * (meta['ts_bytes'] / meta['flv_bytes'] - 1):.1f}% larger); "
          f"{meta['reps']} repetitions of {meta['seconds']} s, medians"
          f"{'; servers and bench at nice ' + meta['nice'] if meta.get('nice') else ''}; load at start "
          f"{meta.get('uptime_start', '?').split('load average:')[-1].strip()}.\n")
    bars = []

    srt, rtmp = pick("ingest", "srt"), pick("ingest", "rtmp")
    if srt or rtmp:
        n = meta["publishers"]
        print(f"## Ingest: {n} publishers of ~5 Mb/s\n")
        print("| server | protocol | server CPU-s | GB ingested | CPU-s/GB | publishers ok | worst send lateness ms | bench CPU-s |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for srv in SERVERS:
            for name, rs in (("SRT", pick("ingest", "srt", srv)), ("RTMP", pick("ingest", "rtmp", srv))):
                if not rs:
                    continue
                print(f"| {LABELS[srv]} | {name} | {fmt(med([r['cpu_s'] for r in rs]))} | {fmt(med([gb_of(r) for r in rs]), 3)} |"
                      f" {fmt(med([cpu_per_gb(r) for r in rs]))} |"
                      f" {min(r['bench'].get('publishers', {}).get('ok', 0) for r in rs)}/{n} |"
                      f" {fmt(max(r['bench'].get('publishers', {}).get('max_send_late_ms', 0) for r in rs), 0)} |"
                      f" {fmt(med([r['bench'].get('bench_cpu', {}).get('total_s', 0) for r in rs]), 1)} |")
        print()
        for srv in SERVERS:
            s_, r_ = pick("ingest", "srt", srv), pick("ingest", "rtmp", srv)
            if s_ and r_:
                ratio = med([cpu_per_gb(r) for r in s_]) / med([cpu_per_gb(r) for r in r_])
                ratio_s = med([r["cpu_s"] for r in s_]) / med([r["cpu_s"] for r in r_])
                print(f"{LABELS[srv]} SRT / RTMP: {ratio:.2f}x per GB ingested (bar 1.3x), {ratio_s:.2f}x per second of "
                      f"the same media.")
                if srv == "sluice":
                    bars.append(("ingest CPU-s/GB SRT <= 1.3x RTMP", f"{ratio:.2f}x", ratio <= 1.3))
        if srt:
            lost = [lost_bytes(r) for r in srt]
            cc = sum(r["server"]["continuity_errors"] for r in srt)
            drops = sum(r["bench"].get("srt", {}).get("packets_dropped_send", 0) for r in srt)
            retr = [r["bench"].get("srt", {}).get("packets_retransmitted", 0) for r in srt]
            sent = sum(r["bench"].get("publishers", {}).get("bytes_out", 0) for r in srt)
            print(f"\nLoss (Sluice, SRT, all repetitions): {sent} bytes sent, {sum(lost)} not received by the server "
                  f"(per repetition {lost}); continuity errors {cc}; packets dropped as too late {drops}; "
                  f"retransmissions {retr}.")
            bars.append(("ingest: no loss", f"{sum(lost)} bytes lost, {cc} cc errors, {drops} drops",
                         sum(lost) == 0 and cc == 0 and drops == 0))
        print()

    for scenario, n, rate in (("fanout", meta["readers"], "~5 Mb/s"), ("fanout500", 500, "~1 Mb/s")):
        fanout_section(pick, scenario, n, rate, bars)

    srt, rtmp = pick("delay", "srt"), pick("delay", "rtmp")
    if srt or rtmp:
        print("## Delay: a publisher and 20 RTMP players in one process\n")
        print("| publisher | p50 ms | p90 ms | p99 ms | max ms | frames | unmatched |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for name, rs in (("SRT (latency %d ms)" % lat, srt), ("RTMP", rtmp)):
            if not rs:
                continue
            D = lambda r: r["bench"].get("delay_ms", {})
            print(f"| {name} | {fmt(med([D(r).get('p50', 0) for r in rs]), 1)} | {fmt(med([D(r).get('p90', 0) for r in rs]), 1)} |"
                  f" {fmt(med([D(r).get('p99', 0) for r in rs]), 1)} | {fmt(max(D(r).get('max', 0) for r in rs), 1)} |"
                  f" {sum(D(r).get('count', 0) for r in rs)} | {sum(D(r).get('unmatched', 0) for r in rs)} |")
        if srt:
            p99 = med([r["bench"].get("delay_ms", {}).get("p99", 0) for r in srt])
            wait = srt[0]["bench"].get("srt", {}).get("ts_file", {}).get("pes_end_wait_ms", {})
            print(f"\nSRT: the delay runs from the moment the publisher handed libsrt the frame's last byte; a video "
                  f"frame is whole for the server's demuxer only at the next video PES start (in this file "
                  f"p50 {fmt(wait.get('p50', float('nan')), 1)} ms, p99 {fmt(wait.get('p99', float('nan')), 1)} ms later).")
            bars.append((f"delay p99 <= {lat} + 50 ms", f"{p99:.1f} ms", p99 <= lat + 50))
        print()

    stats = [r for r in recs if r["kind"] == "stat"]
    if stats:
        print("## The server's system calls and threads (perf stat, 8 s of steady state, per second)\n")
        print("| run | CPU (cores) | context switches | futex | sendmsg | recvmsg | epoll_wait | read + write |"
              " io_uring_enter | Mb/s | SRT data packets | syscalls per GB |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in stats:
            c = r.get("perf", {})
            g = lambda e: c.get(f"syscalls:sys_enter_{e}", 0) / 8
            b = r["bench"]
            mbps = (b.get("publishers", {}).get("mbps_out", 0) if r["scenario"] == "ingest"
                    else b.get("players", {}).get("mbps_in", 0))
            names = ("sendmsg", "sendmmsg", "sendto", "writev", "write", "io_uring_enter", "recvmsg", "recvfrom",
                     "read", "futex", "epoll_wait")
            calls = sum(g(e) for e in names)
            per_gb = calls / (mbps / 8 / 1000) if mbps else float("nan")
            pkts = f"{mbps * 1e6 / 8 / PAYLOAD:.0f}" if r["proto"] == "srt" else "-"
            cores = c.get("task-clock", 0) / 8 / 1000  # msec over 8 s
            print(f"| {r['scenario']} {r['proto'].upper()} | {cores:.2f} | {c.get('context-switches', 0) / 8:.0f} |"
                  f" {g('futex'):.0f} | {g('sendmsg'):.0f} | {g('recvmsg'):.0f} | {g('epoll_wait'):.0f} |"
                  f" {g('read') + g('write'):.0f} | {g('io_uring_enter'):.0f} | {mbps:.0f} | {pkts} | {fmt(per_gb, 0)} |")
        print()

    if bars:
        print("## Bars\n")
        for what, value, ok in bars:
            print(f"- {what}: {value}: {'met' if ok else 'NOT met'}")
        print()
    notes = [r for r in recs if r["note"] or r["server"]["crash"] or r["bench_rc"] not in (0,)]
    for r in notes:
        print(f"- note: {r.get('srv', 'sluice')} {r['scenario']} {r['proto']} rep {r['rep']}: rc {r['bench_rc']} {r['note']}"
              f"{' server crashed' if r['server']['crash'] else ''}")
    warn = {}
    for r in recs:
        for k, v in r["server"]["warnings"].items():
            warn[f"{r['scenario']} {r['proto']}: {k}"] = warn.get(f"{r['scenario']} {r['proto']}: {k}", 0) + v
    if warn:
        print("\nServer warnings and errors (all runs):")
        for k, v in sorted(warn.items()):
            print(f"- {k}: {v}")


COMMANDS = {"record": record, "report": report}

if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in COMMANDS:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    COMMANDS[sys.argv[1]](sys.argv[2], sys.argv[3:])
