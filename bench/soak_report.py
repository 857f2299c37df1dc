#!/usr/bin/env python3
"""Summary, verdict and plot of a bench/soak.sh run.

Usage: soak_report.py DIR

DIR holds what soak.sh wrote: samples.csv (the server's RSS and CPU every interval), meta.json,
bench.json and bench.log (sluice-bench play: summary and progress lines), publisher.json
(sluice-bench publish). Writes DIR/summary.txt and DIR/soak.png, prints the summary, and exits 1
when the run failed (RSS not flat, a player failed or stalled, the publisher or the server died),
0 otherwise. The figures need only the standard library; the plot needs matplotlib (Debian's
python3-matplotlib) and is skipped with a note when it is missing. Run it again on a results
directory to redo the summary and the plot.

Flatness. VmRSS is RssAnon (heap, stacks: where a leak shows) + RssFile (the binary and shared
libraries' pages in memory) + RssShmem. RssFile can move without the server doing anything: the
kernel drops clean file pages under memory pressure, and this project's machines run DAMON
proactive reclaim, which pages out file pages left untouched for a minute. So the verdict fits
RssAnon, by least squares, over the second half of the run (after ramp-up and warm-up). RssAnon is
not smooth either: it moves in steps of 0.2-0.4 MB, down and up, at 500 players in runs without any
leak, and one such step in the middle of the window tilts the fitted line by 1.5 x step / window.
So the fitted rise across the second half (slope x its length) may be up to --allow-growth percent
of the mean VmRSS (default 5%, ~0.9 MB at 500 players, above the 0.6 MB one 0.4 MB step can give),
or --max-slope percent per 10 minutes (default 1%) times the half's length when that is more (runs
over 100 minutes). In KB/min the limit is therefore ~870 for a 2-minute check, ~175 for 10
minutes, ~30 for an hour at 500 players: short runs catch gross leaks (one byte per message per
player is ~2 MB/min), an hour catches ~16 bytes per message of the stream (~65 KB/min). The
standard error of the slope is printed as a measure of the noise.
"""
import csv
import json
import math
import os
import re
import sys

LAG_STARVED_MS = 500   # bench loop lag at which the bench itself was starved of CPU


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def fit(xs, ys):
    """Least-squares line: slope, intercept, standard error of the slope."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    icpt = my - slope * mx
    resid = sum((y - (icpt + slope * x)) ** 2 for x, y in zip(xs, ys))
    se = math.sqrt(resid / (n - 2) / sxx) if n > 2 else float("inf")
    return slope, icpt, se


def mb(kb):
    return kb / 1024.0


def progress(path):
    """(t, cumulative stalls, bench loop lag ms) from sluice-bench's once-a-second progress lines."""
    out = []
    try:
        with open(path) as f:
            for line in f:
                m = re.match(r"t=(\d+)s .*stalls=(\d+),.*lag=(\d+)ms", line)
                if m:
                    out.append((int(m.group(1)), int(m.group(2)), int(m.group(3))))
    except OSError:
        pass
    return out


def stall_seconds(prog):
    """[(t, new stalls, bench starved?)] for each progress line that counted new stalls."""
    res, prev_stalls, prev_lag = [], 0, 0
    for t, stalls, lag in prog:
        if stalls > prev_stalls:
            res.append((t, stalls - prev_stalls, max(lag, prev_lag) >= LAG_STARVED_MS))
        prev_stalls, prev_lag = stalls, lag
    return res


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    d = sys.argv[1]
    meta = load_json(os.path.join(d, "meta.json")) or {}
    bench = load_json(os.path.join(d, "bench.json"))
    pub = load_json(os.path.join(d, "publisher.json"))
    with open(os.path.join(d, "samples.csv")) as f:
        rows = [{k: float(v) for k, v in r.items()} for r in csv.DictReader(f)]
    stalls_at = stall_seconds(progress(os.path.join(d, "bench.log")))

    duration = float(meta.get("duration_s", 600))
    players_asked = int(meta.get("players", 0))
    rate = float(meta.get("rate", 250)) or 1.0
    hz = float(meta.get("clk_tck", 100))
    max_slope_pct = float(meta.get("max_slope_pct_per_10min", 1.0))
    allow_growth_pct = float(meta.get("allow_growth_pct", 5.0))
    failures = []

    # Steady state: every player connected (ramp-up = players / rate) and 30 s to settle, but no
    # later than half-way. The flatness verdict uses the second half of the run only.
    ramp_s = players_asked / rate
    steady_t = min(ramp_s + 30.0, duration / 2)
    half_t = duration / 2
    steady = [r for r in rows if r["t_s"] >= steady_t]
    second = [r for r in rows if r["t_s"] >= half_t]
    lines = []
    add = lines.append

    add(f"Sluice soak: {players_asked} players of one live stream, {duration:.0f} s asked, "
        f"sample every {meta.get('interval_s', '?')} s" + (f", nice {meta['nice']}" if meta.get("nice") else ""))
    add(f"  sluice {meta.get('sluice_version', '?')}; {meta.get('machine', '?')}; ended {meta.get('ended', '?')}")
    add(f"  media: {meta.get('media_kbit', '?')} kb/s (H.264 {meta.get('bitrate', '?')} + AAC 128k), "
        f"60 s looped by sluice-bench publish; ramp-up {rate:.0f}/s ({ramp_s:.1f} s)")
    if rows:
        add(f"  sampled: {rows[-1]['t_s']:.0f} s, {len(rows)} samples; steady state from "
            f"t={steady_t:.0f} s; RSS fit over t>={half_t:.0f} s ({len(second)} samples)")

    # --- players and publisher ---
    mbps = None
    if bench and "players" in bench:
        p = bench["players"]
        mbps = p["mbps_in"]
        add(f"players: asked {p['clients']}, connected {p['started']}, playing at the end (ok) {p['ok']}, "
            f"failed {p['failed']}, stalls {p['stalls']} (players with stalls {p['clients_with_stalls']}), "
            f"non-monotonic timestamps {p['non_monotonic']}")
        for reason, count in (p.get("failure_reasons") or {}).items():
            add(f"  failed x{count}: {reason}")
        add(f"delivered: {p['bytes_in'] / 1e9:.2f} GB, {mbps:.1f} Mb/s over {bench.get('elapsed_s', 0):.0f} s "
            f"({mbps / max(p['clients'], 1):.2f} Mb/s per player); ttff p50/p99 "
            f"{p['ttff_ms']['p50']:.1f}/{p['ttff_ms']['p99']:.1f} ms")
        bc = bench.get("bench_cpu", {})
        if bc:
            add(f"bench: {bc.get('percent_of_one_core', 0):.0f}% of a core, max rss "
                f"{bc.get('max_rss_kb', 0) / 1024:.0f} MB, loop lag max {bc.get('loop_lag_max_ms', 0):.0f} ms "
                f"({bc.get('loop_lag_over_50ms', 0)} ticks > 50 ms late)")
        if stalls_at:
            starved = sum(n for _, n, s in stalls_at if s)
            total = sum(n for _, n, _ in stalls_at)
            add(f"  stalls were counted in {len(stalls_at)} second(s) (t={', '.join(str(t) for t, _, _ in stalls_at[:12])}"
                f"{', ...' if len(stalls_at) > 12 else ''}); {starved} of {total} in a second in which the bench's "
                f"own loop was >= {LAG_STARVED_MS} ms late, i.e. the bench was short of CPU and those say more about "
                f"the machine than about the server")
        if p["failed"] > 0:
            failures.append(f"{p['failed']} player(s) failed")
        if p["ok"] < p["clients"]:
            failures.append(f"only {p['ok']} of {p['clients']} players playing at the end")
        if p["stalls"] > 0:
            failures.append(f"{p['stalls']} stall(s) in {p['clients_with_stalls']} player(s)")
    else:
        failures.append("no bench summary (bench.json)")
    if int(meta.get("bench_rc", 0)) != 0:
        failures.append(f"sluice-bench play exited with {meta.get('bench_rc')}")
    if pub and "publishers" in pub:
        q = pub["publishers"]
        add(f"publisher: failed {q['failed']}, file loops {q.get('loops', 0)}, worst send lateness "
            f"{q.get('max_send_late_ms', 0):.0f} ms")
        if q["failed"] > 0:
            failures.append("the publisher failed")
    else:
        failures.append("no publisher summary (publisher.json)")
    if not int(meta.get("publisher_alive_at_end", 1)):
        failures.append("the publisher had exited before the end")
    if not int(meta.get("server_alive", 1)):
        failures.append("sluice died")

    # --- server RSS and CPU ---
    fits = None
    cpu_mean = None
    if len(second) >= 4 and len(steady) >= 2:
        xs = [r["t_s"] / 60.0 for r in second]
        anon = fit(xs, [r["anon_kb"] for r in second])
        rss = fit(xs, [r["rss_kb"] for r in second])
        mean_rss = sum(r["rss_kb"] for r in second) / len(second)
        half_min = max(duration - half_t, 1e-9) / 60.0
        limit = max(max_slope_pct / 100.0 * mean_rss / 10.0,             # KB per minute
                    allow_growth_pct / 100.0 * mean_rss / half_min)
        fits = (anon, rss, limit)
        start, end = steady[0], rows[-1]
        cpu_steady = (end["cpu_ticks"] - start["cpu_ticks"]) / hz / max(end["t_s"] - start["t_s"], 1e-9) * 100
        cpu_all = [r["cpu_pct"] for r in steady]
        cpu_mean = cpu_steady
        add(f"server RSS (VmRSS): idle (publisher only) {mb(meta.get('idle_rss_kb', 0)):.1f} MB, "
            f"start of steady state {mb(start['rss_kb']):.1f} MB (t={start['t_s']:.0f} s), "
            f"end {mb(end['rss_kb']):.1f} MB, max {mb(max(r['rss_kb'] for r in rows)):.1f} MB, "
            f"after the players left {mb(meta.get('after_rss_kb', 0)):.1f} MB")
        add(f"  of which anonymous (RssAnon): idle {mb(meta.get('idle_anon_kb', 0)):.1f} MB, start "
            f"{mb(start['anon_kb']):.1f}, end {mb(end['anon_kb']):.1f}, max {mb(max(r['anon_kb'] for r in rows)):.1f}, "
            f"after {mb(meta.get('after_anon_kb', 0)):.1f}; file-backed (RssFile) "
            f"{mb(min(r['file_kb'] for r in rows)):.1f}-{mb(max(r['file_kb'] for r in rows)):.1f} MB")
        add(f"RSS slope over the second half: RssAnon {anon[0]:+.1f} KB/min (standard error {anon[2]:.1f}), "
            f"VmRSS {rss[0]:+.1f} KB/min ({rss[2]:.1f}); "
            f"RssAnon = {anon[0] * 10 / mean_rss * 100:+.2f}% of the {mb(mean_rss):.1f} MB RSS per 10 min")
        add(f"  fitted RssAnon rise across the second half: {anon[0] * half_min:+.0f} KB "
            f"({anon[0] * half_min / mean_rss * 100:+.2f}% of RSS); limit {limit:.1f} KB/min, i.e. "
            f"{limit * half_min:.0f} KB (the larger of {allow_growth_pct:g}% of RSS across the half and "
            f"{max_slope_pct:g}% of RSS per 10 min)")
        add(f"server CPU: mean {cpu_steady:.1f}% of one core in steady state (per interval "
            f"{min(cpu_all):.1f}-{max(cpu_all):.1f}%)"
            + (f", {cpu_steady / 100 / mbps * 1e3 * 8:.2f} CPU-s per GB delivered" if mbps else ""))
        add(f"server fds: start of steady state {start['fds']:.0f}, end {end['fds']:.0f}, "
            f"after the players left {meta.get('after_fds', 0)}; threads {end['threads']:.0f}")
        busy = [r["machine_busy_pct"] for r in rows]
        add(f"machine: busy {min(busy):.0f}-{max(busy):.0f}% (mean {sum(busy) / len(busy):.0f}%; 100% = one core, "
            f"all processes), load average {min(r['load1'] for r in rows):.2f}-{max(r['load1'] for r in rows):.2f}")
        if anon[0] > limit:
            failures.append(f"RSS not flat: RssAnon {anon[0]:+.1f} KB/min over the second half "
                            f"(limit {limit:.1f})")
    else:
        failures.append(f"too few samples for a verdict ({len(rows)} in all, {len(second)} in the second half)")

    verdict = "PASS" if not failures else "FAIL: " + "; ".join(failures)
    add(f"verdict: {verdict}")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(d, "summary.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)

    if rows:
        plot(d, rows, steady_t, half_t, fits, stalls_at, players_asked, meta, mbps, not failures, cpu_mean)
    return 0 if not failures else 1


def plot(d, rows, steady_t, half_t, fits, stalls_at, players, meta, mbps, passed, cpu_mean):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(no plot: matplotlib is missing; apt-get install python3-matplotlib)")
        return
    t = [r["t_s"] / 60.0 for r in rows]
    tmax = max(max(t), duration_min(meta))
    fig, (ax1, ax2) = plt.subplots(2, 1, sharex=True, figsize=(10, 6.5), dpi=100)
    fig.suptitle(f"Sluice soak: {players} players of a {meta.get('media_kbit', '?')} kb/s live stream"
                 + (f", {mbps:.0f} Mb/s delivered" if mbps else "")
                 + f" - {'PASS' if passed else 'FAIL (see summary.txt)'}", fontsize=11)
    ax1.plot(t, [mb(r["rss_kb"]) for r in rows], color="tab:blue", lw=1.2, marker=".", ms=3, label="VmRSS")
    ax1.plot(t, [mb(r["anon_kb"]) for r in rows], color="tab:purple", lw=1.2, marker=".", ms=3,
             label="RssAnon (heap)")
    if fits:
        (slope, icpt, se), _, limit = fits
        xs = [x for x in t if x >= half_t / 60.0]
        ax1.plot(xs, [mb(icpt + slope * x) for x in xs], color="tab:red", lw=2,
                 label=f"RssAnon fit, second half: {slope:+.1f} ± {se:.1f} KB/min (limit {limit:.1f})")
    ax1.set_ylabel("server memory (MB)")
    hi = max(mb(r["rss_kb"]) for r in rows)
    ax1.set_ylim(0, hi * 1.3 + 1)
    cpu = [r["cpu_pct"] for r in rows]
    ax2.plot(t, cpu, color="tab:green", lw=1.2, marker=".", ms=3, label="server CPU (utime + stime) per interval")
    if cpu_mean is not None:
        ax2.axhline(cpu_mean, color="tab:green", ls="--", lw=1, alpha=0.7, label=f"steady-state mean {cpu_mean:.1f}%")
    top = max(cpu) * 1.35 + 1
    ax2.set_ylim(0, top)
    if stalls_at:
        for i, (s, n, starved) in enumerate(stalls_at):
            ax2.axvline(s / 60.0, ymax=0.06, color="tab:orange" if starved else "tab:red", lw=2,
                        label=("player stalls (orange: bench starved of CPU)" if i == 0 else None))
    ax2.set_ylabel("server CPU (% of one core)")
    ax2.set_xlabel("minutes since the players started")
    for ax in (ax1, ax2):
        ax.axvline(steady_t / 60.0, color="grey", ls=":", lw=1)
        ax.axvspan(half_t / 60.0, tmax, color="grey", alpha=0.08)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper left", fontsize=8, ncol=2)
    ax1.annotate("steady state from here", (steady_t / 60.0, 0.03), xycoords=("data", "axes fraction"),
                 fontsize=8, color="grey", xytext=(3, 0), textcoords="offset points")
    ax1.annotate("second half (fitted)", (half_t / 60.0, 0.10), xycoords=("data", "axes fraction"),
                 fontsize=8, color="grey", xytext=(3, 0), textcoords="offset points")
    ax2.set_xlim(0, tmax)
    fig.tight_layout()
    fig.savefig(os.path.join(d, "soak.png"))
    print(f"plot: {os.path.join(d, 'soak.png')}")


def duration_min(meta):
    return float(meta.get("duration_s", 0)) / 60.0


if __name__ == "__main__":
    sys.exit(main())
