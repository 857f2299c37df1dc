#!/usr/bin/env python3
"""Records and reports for bench/http_compare.sh.

  http_compare.py meta OUT key=value...     the run's description -> OUT/meta.json
  http_compare.py record OUT key=value...   one server run -> OUT/results.jsonl, one line printed
  http_compare.py report OUT                the tables of medians (Markdown) from OUT/results.jsonl
"""
import json
import os
import re
import sys

# The run log and the table helpers are compare.py's, so both reports read the same.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import emit, fmt, load, med, ratio, run_command, server_figures  # noqa: E402

SERVERS = ("sluice", "nginx")


def kv_pairs(pairs):
    return dict(p.split("=", 1) for p in pairs)


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def to_ms(value, unit):
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]


def parse_wrk(text):
    """Requests, requests/s, latency percentiles (ms) and errors from `wrk --latency` output."""
    r = {"requests": 0, "rps": None, "p50": None, "p90": None, "p99": None, "errors": 0, "non2xx": 0}
    m = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m),\s+([\d.]+)(B|KB|MB|GB)", text)
    if m:
        r["requests"] = int(m.group(1))
    m = re.search(r"Requests/sec:\s+([\d.]+)", text)
    if m:
        r["rps"] = float(m.group(1))
    for pct in ("50", "90", "99"):
        m = re.search(r"^\s+%s%%\s+([\d.]+)(us|ms|s|m)\s*$" % pct, text, re.M)
        if m:
            r["p" + pct] = to_ms(m.group(1), m.group(2))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if m:
        r["errors"] = sum(int(x) for x in m.groups())
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if m:
        r["non2xx"] = int(m.group(1))
    return r


def parse_curl(path):
    """`-w '%{http_code} %{size} %{time_total}'` lines."""
    out = []
    for line in read(path).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0].isdigit():
            out.append({"code": int(parts[0]), "bytes": int(float(parts[1])), "time_s": float(parts[2])})
    return out


def meta(out, pairs):
    kv = kv_pairs(pairs)
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(kv, f, indent=1)


def record(out, pairs):
    kv = kv_pairs(pairs)
    rec = {"kind": kv["kind"], "server": kv["server"], "rep": int(kv["rep"])}
    rec.update(server_figures(kv))
    kind = rec["kind"]
    busy = rec["machine_busy_s"] / max(rec["wall_s"], 0.001) * 100
    tail = f"machine {busy:.0f}% (load {rec['loadavg']})"
    if kind == "small":
        w = parse_wrk(read(kv["wrk"]))
        rec.update(w)
        rec["connections"] = int(kv["connections"])
        rec["scenario"] = kv.get("scenario", "small")
        rec["expect_status"] = int(kv.get("expect_status", 200))
        # notfound: every answer is a 404, which wrk counts as non-2xx.
        want_non2xx = w["requests"] if rec["expect_status"] >= 300 else 0
        if not rec["note"] and (not w["rps"] or w["non2xx"] != want_non2xx or w["errors"]):
            rec["note"] = (f"wrk: {w['requests']} requests, {w['non2xx']} non-2xx (expected {want_non2xx}),"
                           f" {w['errors']} socket errors")
        if kv.get("streams"):
            rec["streams"] = int(kv["streams"])
            rec["answer_bytes"] = int(kv.get("answer_bytes") or 0)
            rec["ingest_cpu_pct"] = float(kv["ingest_cpu_pct"]) if kv.get("ingest_cpu_pct") else None
            if rec["streams"] != 20 and not rec["note"]:
                rec["note"] = f"the API listed {rec['streams']} streams, not 20"
        us = rec["cpu_s"] / w["requests"] * 1e6 if w["requests"] else float("nan")
        line = (f"  {rec['scenario']:<11} {rec['server']:<6} rep {rec['rep']}: {w['rps'] or 0:.0f} req/s,"
                f" cpu {rec['cpu_s']:.2f} s"
                f" = {us:.1f} us/request ({rec['cpu_s'] / rec['wall_s'] * 100:.0f}% of a core), latency p50/p99"
                f" {w['p50'] or 0:.2f}/{w['p99'] or 0:.2f} ms, rss {rec['peak_rss_kb'] / 1024:.1f} MB, {tail}")
        if "streams" in rec:
            line += (f", {rec['streams']} streams listed ({rec['answer_bytes']} bytes),"
                     f" ingest alone {rec['ingest_cpu_pct'] if rec['ingest_cpu_pct'] is not None else '?'}% of a core")
    elif kind in ("large", "upload"):
        files = [p for p in kv.get("curl", "").split(",") if p]
        results = [r for p in files for r in parse_curl(p)]
        expect = int(kv["expect_bytes"])
        ok = [r for r in results if r["code"] in ((201, 204) if kind == "upload" else (200,)) and r["bytes"] == expect]
        rec["transfers"] = results
        rec["expected_transfers"] = len(files)
        rec["bytes"] = sum(r["bytes"] for r in ok)
        if kind == "upload":
            rec["stored_bytes"] = int(kv.get("stored_bytes", 0))
            if ok and rec["stored_bytes"] != expect and not rec["note"]:
                rec["note"] = f"stored {rec['stored_bytes']} bytes, expected {expect}"
        if not rec["note"] and (len(ok) != len(files) or not files):
            rec["note"] = "transfers: " + (", ".join(f"HTTP {r['code']} {r['bytes']} bytes" for r in results) or "none")
        # Throughput: all bytes over the time of the slowest transfer (curl's time_total: the
        # transfers start together, so that is the batch's wall time without process start-up).
        slowest = max((r["time_s"] for r in ok), default=0)
        rec["mbps"] = rec["bytes"] / 1e6 / slowest if slowest else None
        gb = rec["bytes"] / 1e9
        line = (f"  {kind:<6} {rec['server']:<6} rep {rec['rep']}: {rec['mbps'] or 0:.0f} MB/s, {gb:.2f} GB,"
                f" cpu {rec['cpu_s']:.2f} s = {rec['cpu_s'] / gb if gb else float('nan'):.3f} CPU-s/GB"
                f" ({rec['cpu_s'] / rec['wall_s'] * 100:.0f}% of a core), rss {rec['idle_rss_kb'] / 1024:.1f}->"
                f"{rec['peak_rss_kb'] / 1024:.1f} MB, {tail}")
    elif kind == "flv":
        try:
            with open(kv["bench_json"]) as f:
                bench = json.load(f)
        except (OSError, ValueError) as e:
            bench = {"error": str(e)}
        rec.update({"scenario": kv["scenario"], "client": kv["client"], "players": int(kv["players"]),
                    "seconds": int(kv["seconds"]), "bench_rc": int(kv["bench_rc"]), "bench": bench})
        p = bench.get("players", {})
        if not p and not rec["note"]:
            rec["note"] = "no bench summary (%s)" % bench.get("error", "?")
        gb = p.get("bytes_in", 0) / 1e9
        ttff = p.get("ttff_ms", {})
        bc = bench.get("bench_cpu", {})
        line = (f"  {rec['scenario']:<7} {rec['client']:<8} rep {rec['rep']}: cpu {rec['cpu_s']:.2f} s"
                f" = {rec['cpu_s'] / gb if gb else float('nan'):.2f} CPU-s/GB, {gb:.2f} GB,"
                f" rss {rec['idle_rss_kb'] / 1024:.1f}->{rec['peak_rss_kb'] / 1024:.1f} MB"
                f" ({(rec['peak_rss_kb'] - rec['idle_rss_kb']) / rec['players']:.1f} KB/reader),"
                f" ttff p50/p99 {ttff.get('p50', 0):.1f}/{ttff.get('p99', 0):.1f} ms, ok {p.get('ok', 0)}/{rec['players']},"
                f" stalls {p.get('stalls', '?')}, failed {p.get('failed', '?')},"
                f" bench {bc.get('percent_of_one_core', 0):.0f}% lag {bc.get('loop_lag_max_ms', 0):.0f} ms, {tail}")
        for reason, n in (p.get("failure_reasons") or {}).items():
            line += f"\n      failed x{n}: {reason}"
    else:
        raise SystemExit(f"unknown kind {kind}")
    if rec["note"]:
        line += f" [{rec['note']}]"
    with open(os.path.join(out, "results.jsonl"), "a") as f:
        f.write(json.dumps(rec) + "\n")
    emit(out, line)


def common(rec):
    return {
        "cpu_pct": rec["cpu_s"] / rec["wall_s"] * 100 if rec["wall_s"] else None,
        "peak_mb": rec["peak_rss_kb"] / 1024,
        "busy_pct": rec["machine_busy_s"] / rec["wall_s"] * 100 if rec["wall_s"] else None,
        "load1": float(rec["loadavg"].split()[0]) if rec["loadavg"] else None,
    }


def metrics(rec):
    m = common(rec)
    kind = rec["kind"]
    if kind == "small":
        m.update({"rps": rec["rps"], "us_req": rec["cpu_s"] / rec["requests"] * 1e6 if rec["requests"] else None,
                  "p50": rec["p50"], "p99": rec["p99"]})
        if "streams" in rec:
            m.update({"answer_bytes": rec["answer_bytes"], "ingest_pct": rec["ingest_cpu_pct"]})
    elif kind in ("large", "upload"):
        gb = rec["bytes"] / 1e9
        m.update({"mbps": rec["mbps"], "cpu_gb": rec["cpu_s"] / gb if gb else None, "gb": gb})
    elif kind == "flv":
        p = rec["bench"].get("players", {})
        gb = p.get("bytes_in", 0) / 1e9
        ttff = p.get("ttff_ms", {})
        bc = rec["bench"].get("bench_cpu", {})
        m.update({
            "cpu_gb": rec["cpu_s"] / gb if gb else None, "gb": gb,
            "kb_player": (rec["peak_rss_kb"] - rec["idle_rss_kb"]) / rec["players"],
            "ttff50": ttff.get("p50") if ttff.get("count") else None,
            "ttff99": ttff.get("p99") if ttff.get("count") else None,
            "stalls": p.get("stalls"), "failed": p.get("failed"),
            "bench_pct": bc.get("percent_of_one_core"), "lag": bc.get("loop_lag_max_ms"),
        })
    return m


def medians(recs):
    ok = [r for r in recs if not r["note"]]
    ms = [metrics(r) for r in ok]
    x = {k: med([m[k] for m in ms]) for k in (ms[0].keys() if ms else [])}
    x["runs"] = ms
    x["bad"] = [f"rep {r['rep']}: {r['note']}" for r in recs if r["note"]]
    return x


def rng(runs, k, d=0):
    vals = [r[k] for r in runs if r.get(k) is not None]
    if not vals:
        return "-"
    return f"{fmt(min(vals), d)}-{fmt(max(vals), d)}"


def conditions(name, runs, bad, meta):
    cores = meta["machine"].split()[0]
    c = (f"- {name}: load {rng(runs, 'load1', 1)}, machine busy {rng(runs, 'busy_pct')}% of {cores} cores "
         f"(100% = one core)")
    if runs and any("ingest_pct" in r for r in runs):
        c += (f", /api/v1/streams answer {rng(runs, 'answer_bytes')} bytes, Sluice's CPU for the 20 streams' ingest"
              f" alone {rng(runs, 'ingest_pct')}% of a core (included in its CPU per request)")
    if runs and "bench_pct" in runs[0]:
        c += f", bench {rng(runs, 'bench_pct')}% of a core, bench loop lag max {rng(runs, 'lag')} ms"
    if bad:
        c += "; excluded: " + "; ".join(bad)
    return c


def bar(name, a, b):
    """One line: does the scenario meet issue 16's bar (medians, Sluice a against nginx b)?"""
    rps = a["rps"] / b["rps"] if a["rps"] and b["rps"] else None
    cpu = a["us_req"] / b["us_req"] if a["us_req"] and b["us_req"] else None
    if rps is None:
        return f"- {name}: no figures"
    if name == "api":
        ok = rps >= 0.8
        return f"- {name}: requests/s {rps:.2f}x (bar 0.8x): {'met' if ok else 'MISSED'}"
    ok_rps, ok_cpu = rps >= 1.0, cpu is not None and cpu <= 1.0
    verdict = "met" if ok_rps and ok_cpu else "MISSED (" + ", ".join(
        w for w, ok in (("requests/s", ok_rps), ("CPU per request", ok_cpu)) if not ok) + ")"
    cpu_s = f"{cpu:.2f}x" if cpu is not None else "-"
    return f"- {name}: requests/s {rps:.2f}x (bar 1.0x), CPU per request {cpu_s} (bar 1.0x): {verdict}"


def report(out):
    meta, recs = load(out)
    L = []
    L.append(f"Sluice vs {meta['nginx']} (one worker, sendfile on), loopback; sluice {meta['sluice_commit']}; "
             f"{meta['wrk']}, {meta['curl']}; started {meta['started']}")
    L.append(f"machine: {meta['machine']}")
    L.append(f"{meta['reps']} repetition(s), alternating sluice/nginx, fresh server per run; medians")
    L.append(f"load at start: {meta['uptime_start'].strip()}")
    cond = []
    label = {"sluice": "sluice", "nginx": "nginx"}

    small = [r for r in recs if r["kind"] == "small"]
    if small:
        L.append("")
        L.append(f"Small answers: wrk -t1, {meta['connections']} connections, {meta['small_s']} s. small: a 4 KiB file, "
                 f"tiny: a 9-byte file; keep-alive, or -close: one request per connection (Connection: close); "
                 f"notfound: a missing file, 404 from both; api: Sluice's GET /api/v1/streams with 20 live streams "
                 f"beside nginx's 4 KiB file (keep-alive)")
        L.append("")
        L.append("| scenario | server | requests/s | CPU µs/request | CPU % of a core | latency p50 ms | latency p99 ms "
                 "| peak RSS MB |")
        L.append("|---|---|---:|---:|---:|---:|---:|---:|")
        order = []
        for r in small:
            name = r.get("scenario", "small")
            if name not in order:
                order.append(name)
        bars = []
        for name in order:
            m = {s: medians([r for r in small if r["server"] == s and r.get("scenario", "small") == name])
                 for s in SERVERS}
            for s in SERVERS:
                x = m[s]
                who = "nginx, 4 KiB file" if (name, s) == ("api", "nginx") else label[s]
                if not x["runs"]:
                    L.append(f"| {name} | {who} | no valid run: {'; '.join(x['bad'])} | | | | | |")
                    continue
                L.append(f"| {name} | {who} | {fmt(x['rps'], 0)} | {fmt(x['us_req'], 1)} | {fmt(x['cpu_pct'], 0)} "
                         f"| {fmt(x['p50'])} | {fmt(x['p99'])} | {fmt(x['peak_mb'], 1)} |")
            a, b = m["sluice"], m["nginx"]
            if a["runs"] and b["runs"]:
                L.append(f"| {name} | **sluice/nginx** | **{ratio(a['rps'], b['rps'])}** "
                         f"| **{ratio(a['us_req'], b['us_req'])}** | {ratio(a['cpu_pct'], b['cpu_pct'])} "
                         f"| {ratio(a['p50'], b['p50'])} | {ratio(a['p99'], b['p99'])} | {ratio(a['peak_mb'], b['peak_mb'])} |")
                bars.append(bar(name, a, b))
            cond.append(conditions(name, a["runs"] + b["runs"], a["bad"] + b["bad"], meta))
        if bars:
            L.append("")
            L.append("Bars of issue 16 (files and 404: requests/s >= 1.0x and CPU per request <= 1.0x nginx's; "
                     "api: requests/s >= 0.8x nginx's 4 KiB file):")
            L.extend(bars)

    for kind, title in (("large", f"Large file download: {meta['large_mib']} MiB, {meta['downloads']} parallel curl to /dev/null"),
                        ("upload", f"Upload: PUT of {meta['upload_mib']} MiB with curl -T, Authorization: Bearer")):
        rs = [r for r in recs if r["kind"] == kind]
        if not rs:
            continue
        L.append("")
        L.append(title)
        L.append("")
        L.append("| server | MB/s | CPU-s/GB | CPU % of a core | peak RSS MB |")
        L.append("|---|---:|---:|---:|---:|")
        m = {s: medians([r for r in rs if r["server"] == s]) for s in SERVERS}
        for s in SERVERS:
            x = m[s]
            if not x["runs"]:
                why = "; ".join(x["bad"]) or ("not measured (nginx built without the dav module)" if kind == "upload" else "no run")
                L.append(f"| {label[s]} | {why} | | | |")
                continue
            L.append(f"| {label[s]} | {fmt(x['mbps'], 0)} | {fmt(x['cpu_gb'], 3)} | {fmt(x['cpu_pct'], 0)} | {fmt(x['peak_mb'], 1)} |")
        a, b = m["sluice"], m["nginx"]
        if a["runs"] and b["runs"]:
            L.append(f"| **sluice/nginx** | **{ratio(a['mbps'], b['mbps'])}** | **{ratio(a['cpu_gb'], b['cpu_gb'])}** "
                     f"| {ratio(a['cpu_pct'], b['cpu_pct'])} | {ratio(a['peak_mb'], b['peak_mb'])} |")
        cond.append(conditions(kind, a["runs"] + b["runs"], a["bad"] + b["bad"], meta))

    flv = [r for r in recs if r["kind"] == "flv"]
    if flv:
        L.append("")
        L.append(f"Live, Sluice only: HTTP-FLV readers (sluice-bench http-flv) beside RTMP players (sluice-bench play) "
                 f"of the same publisher, {meta['flv_s']} s runs")
        L.append("")
        L.append("| scenario | readers | CPU-s/GB | CPU % of a core | GB delivered | peak RSS MB | RSS KB/reader "
                 "| TTFF p50 ms | TTFF p99 ms | stalls | failed |")
        L.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        order = []
        for r in flv:
            if r["scenario"] not in order:
                order.append(r["scenario"])
        for name in order:
            m = {c: medians([r for r in flv if r["scenario"] == name and r["client"] == c]) for c in ("http-flv", "rtmp")}
            for c in ("http-flv", "rtmp"):
                x = m[c]
                if not x["runs"]:
                    L.append(f"| {name} | {c} | no valid run: {'; '.join(x['bad'])} |" + " |" * 8)
                    continue
                per_rep = lambda k: "/".join(str(r[k]) if r[k] is not None else "?" for r in x["runs"])
                L.append(f"| {name} | {c} | {fmt(x['cpu_gb'])} | {fmt(x['cpu_pct'], 0)} | {fmt(x['gb'])} "
                         f"| {fmt(x['peak_mb'], 1)} | {fmt(x['kb_player'], 1)} | {fmt(x['ttff50'], 1)} | {fmt(x['ttff99'], 1)} "
                         f"| {per_rep('stalls')} | {per_rep('failed')} |")
            a, b = m["http-flv"], m["rtmp"]
            if a["runs"] and b["runs"]:
                L.append(f"| {name} | **http-flv/rtmp** | **{ratio(a['cpu_gb'], b['cpu_gb'])}** | {ratio(a['cpu_pct'], b['cpu_pct'])} "
                         f"| {ratio(a['gb'], b['gb'])} | {ratio(a['peak_mb'], b['peak_mb'])} | {ratio(a['kb_player'], b['kb_player'])} "
                         f"| | | | |")
            cond.append(conditions(name, a["runs"] + b["runs"], a["bad"] + b["bad"], meta))

    L.append("")
    L.append("CPU: the server's user+sys CPU time (/proc/PID/stat, all threads) from just before the load starts to "
             "just after it ends. CPU µs/request: that over the requests wrk completed. CPU-s/GB: that over the bytes "
             "transferred. MB/s: all bytes over curl's time_total of the slowest transfer (the parallel downloads start "
             "together; for the upload it includes Sluice's fsync before it answers). Ratios are of the medians: above 1× is more (better for requests/s and MB/s, "
             "worse for CPU and RSS).")
    L.append("")
    L.append("Conditions (all runs):")
    L.extend(cond)
    print("\n".join(L))


def main():
    run_command(__doc__, {"meta": meta, "record": record, "report": lambda out, args: report(out)})


if __name__ == "__main__":
    main()
