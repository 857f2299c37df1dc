#!/usr/bin/env bash
# Multi-core scaling: how many live players one worker loop serves stall-free, and how many two
# loops serve, each given the same CPU budget per loop.
#
# On a 2-core machine the load generator needs a core of its own, so "1 loop on 1 core against
# 2 loops on 2 cores" cannot be measured directly. Instead the server runs in a CPU cgroup with a
# quota of QUOTA cores per loop: each loop's thread in a cgroup of its own with QUOTA (cgroup v1
# cpu.cfs_quota_us, bench/lib.sh bench_cgroup_limit_loops), so 1 loop gets QUOTA and 2 loops get
# QUOTA each, and neither can spend the other's. --shared-quota puts the whole server under one
# quota of loops x QUOTA instead (the method before 2026-12-05; also the fallback on cgroup v2),
# where one loop may use up the period's quota and stall the other. Each level is a fresh server, one ffmpeg publisher of a 2.5 Mb/s stream
# and one sluice-bench process with N players for SECONDS; a level passes when every player
# played with no stall and no failure and, once the ramp-up (400 players/s) is over, the players
# together received at least 97% of N times the stream's bit rate (the mean of the bench's
# per-second figures from 3 s after the ramp to the end): a server short of CPU falls behind
# there long before its players' buffers run dry. The
# player count grows by STEP until a level fails, or falls by STEP until one passes when the first
# level fails (a level runs longer than SECONDS when the ramp would leave less than 8 s of steady
# state); the result is the last level that passed, for each loop count, and their ratio (the
# issue's bar: 2 loops >= 1.8x the players of 1 loop). With per-loop quotas each level's line also
# gives each loop's share of a core over the run (ramp included) and the share of CFS periods in
# which its quota ran out ("throttled").
#
# --http-flv: the players are HTTP-FLV readers (sluice-bench on http://.../live/bench.flv) instead of
# RTMP players; every loop accepts HTTP itself (docs/http.md, "HTTP on every loop").
#
# --reps N: N searches per loop count, interleaved (1 loop, 2 loops; then 2 loops, 1 loop; ...) so
# that the machine's drift over the minutes hits both alike. A repetition after the first starts
# two steps below that loop count's last result. The result is each repetition's ratio, and the
# medians of the player counts and of the ratios (the issue's "medians of >= 3 repetitions").
#
# --pin: the server on CPU 0, the load client and the publisher on CPU 1 (taskset), so that the
# server's loops (QUOTA each, far below a core) never wait for the load client's core and the
# client's reading never waits for the server's. Without it the scheduler mixes them.
#
# --bitrate B: the video bitrate of the generated stream (+ 128k AAC). At 2400k (default, ~2.5 Mb/s)
# the load client on the same two cores runs out before two loops at 0.25 core do; a lower one
# moves the limit back to the server (more readers for the same bytes).
#
# Usage: bench/scaling.sh [--quota CORES] [--seconds S] [--start N] [--step N] [--max N] [--loops "1 2"] [--http-flv]
#                         [--bitrate B] [--shared-quota] [--reps N] [--pin] [--out DIR]
#   defaults: --quota 0.25 --seconds 20 --start 400 --step 200 --max 6000 --loops "1 2" --bitrate 2400k --reps 1
#   (a loop count L starts at L x START players)
# Needs root (or sudo) to create the cgroup. Every run is bounded: SECONDS plus a few of set-up.
set -euo pipefail
shared_quota=0
quota=0.25
seconds=20
start=400
step=200
max=6000
loops="1 2"
out=""
http_flv=0
bitrate=2400k
reps=1
pin=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quota) quota=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --start) start=$2; shift 2 ;;
    --step) step=$2; shift 2 ;;
    --max) max=$2; shift 2 ;;
    --loops) loops=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --shared-quota) shared_quota=1; shift ;;
    --http-flv) http_flv=1; shift ;;
    --bitrate) bitrate=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --pin) pin=1; shift ;;
    -h|--help) sed -n '2,44p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "scaling.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
out=${out:-/tmp/sluice-scaling-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
work=$(mktemp -d /tmp/sluice-scaling-work-XXXXXX)
pids=()

bench_trap_cleanup

make -C "$root" release >/dev/null
bin="$work/bin"
mkdir -p "$bin" "$work/media"
cp "$root/build/release/server/sluice" "$root/build/release/bench/load/sluice-bench" "$bin/"
bench_make_media "$work/media/movie.flv" $(( seconds + 40 )) "$bitrate"
kbps=$(ffprobe -v error -show_entries format=bit_rate -of csv=p=0 "$work/media/movie.flv")
kbps=$(( kbps / 1000 ))
bench_cgroup_create scaling
on_server=() on_client=()
if [ "$pin" -eq 1 ]; then
  [ "$(nproc)" -ge 2 ] || { echo "scaling: --pin needs two CPUs" >&2; exit 2; }
  on_server=(taskset -c 0) on_client=(taskset -c 1)
fi
echo "scaling: $([ "$http_flv" -eq 1 ] && echo "HTTP-FLV readers" || echo "RTMP players"), stream $kbps kb/s, $quota cores per loop, $seconds s per level, players from $start by $step, $reps repetition(s)$([ "$pin" -eq 1 ] && echo ", server on CPU 0 and client on CPU 1")" \
  | tee "$out/summary.txt"

# level WORKERS PLAYERS: one run; prints the verdict line and returns 0 when the level passed.
level() {
  local workers=$1 players=$2 port hport server pub bench rc=0 cpu0 cpu1 seconds=$seconds url mode
  # At least 8 s of steady state after the ramp (400 players/s) and its 3 s of settling.
  [ "$seconds" -ge $(( players / 400 + 11 )) ] || seconds=$(( players / 400 + 11 ))
  port=$(bench_free_port)
  hport=$(bench_free_port)
  url="rtmp://127.0.0.1:$port/live/bench" mode=play
  [ "$http_flv" -eq 0 ] || url="http://127.0.0.1:$hport/live/bench.flv" mode=http-flv
  SLUICE_HTTP_PORT=$hport SLUICE_WORKERS=$workers bench_sluice_config "$work/sluice.yaml" "$port" "$work/media"
  "${on_server[@]}" "$bin/sluice" --config "$work/sluice.yaml" >>"$out/server-$workers.log" 2>&1 &
  server=$!; pids+=("$server")
  bench_wait_port "$port" 10 || { echo "scaling: server did not start" >&2; return 2; }
  if [ "$shared_quota" -eq 1 ]; then
    bench_cgroup_limit "$(python3 -c "print($quota * $workers)")" "$server"
  else
    bench_cgroup_limit_loops "$quota" "$server" "$workers"
  fi
  bench_publish "$work/media/movie.flv" "rtmp://127.0.0.1:$port/live/bench" "$out/publisher.log"
  pub=$!; pids+=("$pub")
  [ "$pin" -eq 0 ] || taskset -pc 1 "$pub" >/dev/null
  sleep 2.5
  cpu0=$(bench_cpu_ticks "$server")
  local loops0="" loops1=""
  [ "$shared_quota" -eq 1 ] || loops0=$(bench_cgroup_loop_stats "$server" "$workers" | paste -sd,)
  local json="$out/bench-$workers-$players-r$rep.json"
  "${on_client[@]}" "$bin/sluice-bench" "$mode" -n "$players" --rate 400 -d "$seconds" --allow-failures "$players" --json "$json" \
    "$url" >"$out/bench-$workers-$players-r$rep.txt" 2>&1 &
  bench=$!; pids+=("$bench")
  wait "$bench" || rc=$?
  cpu1=$(bench_cpu_ticks "$server")
  [ "$shared_quota" -eq 1 ] || loops1=$(bench_cgroup_loop_stats "$server" "$workers" | paste -sd,)
  bench_stop "$pub"
  bench_stop "$server"
  python3 - "$json" "$workers" "$players" "$seconds" "$kbps" "$(( cpu1 - cpu0 ))" "$(getconf CLK_TCK)" "$quota" \
    "$out/bench-$workers-$players-r$rep.txt" "$loops0" "$loops1" <<'PY'
import json, re, sys
path, workers, players, seconds, kbps, ticks, hz, quota, progress, loops0, loops1 = sys.argv[1:]
workers, players, seconds, kbps = int(workers), int(players), float(seconds), float(kbps)
try:
    s = json.load(open(path))
except (OSError, ValueError):
    print(f"  {workers} loop(s), {players} players: FAIL (no bench summary)")
    sys.exit(1)
p = s["players"]
# The bench's progress lines: "t=12s players=N/N ok, 6293.1 Mb/s, ...", one per second.
rates = [(int(t), float(m)) for t, m in re.findall(r"^t=(\d+)s players=\S+ ok, ([\d.]+) Mb/s", open(progress).read(), re.M)]
steady_from = players / 400 + 3
steady = [m for t, m in rates if steady_from <= t < seconds]
need = 0.97 * players * kbps / 1000
got = sum(steady) / len(steady) if steady else 0.0
ok = p["failed"] == 0 and p["stalls"] == 0 and p["ok"] == players and len(steady) >= 3 and got >= need
cpu = int(ticks) / int(hz)
lag = s.get("bench_cpu", {}).get("loop_lag_max_ms", 0)
# Each loop's share of a core and the share of CFS periods in which its quota ran out.
per_loop = ""
if loops0 and loops1:
    rows = [[int(x) for x in a.split()] + [int(x) for x in b.split()] for a, b in zip(loops0.split(","), loops1.split(","))]
    per_loop = ", loops " + "/".join(f"{(t1 - t0) / int(hz) / seconds * 100:.1f}%" for t0, _, _, t1, _, _ in rows)
    per_loop += " throttled " + "/".join(f"{(h1 - h0) / max(p1 - p0, 1) * 100:.0f}%" for _, p0, h0, _, p1, h1 in rows)
print(f"  {workers} loop(s), {players:5d} players: {'pass' if ok else 'FAIL'}  ok {p['ok']}, failed {p['failed']}, "
      f"stalls {p['stalls']}, steady {got:.0f} Mb/s of {need / 0.97:.0f} ({len(steady)} s), "
      f"server {cpu / seconds * 100:.0f}% of a core (quota {float(quota) * workers * 100:.0f}%), bench lag max {lag:.0f} ms{per_loop}")
sys.exit(0 if ok else 1)
PY
}

# search WORKERS FROM: steps up from FROM players until a level fails, or down from FROM until one
# passes when FROM itself fails; sets found to the last level that passed (0: none did).
found=0
search() {
  local workers=$1 n=$2 dir=up passed
  found=0
  while [ "$n" -le "$max" ] && [ "$n" -gt 0 ]; do
    passed=0
    level "$workers" "$n" >"$work/verdict" && passed=1
    tee -a "$out/summary.txt" <"$work/verdict"
    if [ "$passed" -eq 1 ]; then
      found=$n
      [ "$dir" = up ] || break
      n=$(( n + step ))
    elif [ "$dir" = up ] && [ "$n" -eq "$2" ]; then
      dir=down
      n=$(( n - step ))
    elif [ "$dir" = up ]; then
      break
    else
      n=$(( n - step ))
    fi
  done
}

declare -A last
results=()   # "rep workers players"
for rep in $(seq 1 "$reps"); do
  order=$loops
  [ $(( rep % 2 )) -eq 1 ] || order=$(echo "$loops" | tr ' ' '\n' | tac | tr '\n' ' ')
  for workers in $order; do
    from=$(( start * workers ))
    [ -z "${last[$workers]:-}" ] || [ "${last[$workers]}" -eq 0 ] ||
      from=$(( last[$workers] - 2 * step > step ? last[$workers] - 2 * step : step ))
    echo "repetition $rep, $workers loop(s), from $from players" | tee -a "$out/summary.txt"
    search "$workers" "$from"
    last[$workers]=$found
    results+=("$rep $workers ${last[$workers]}")
  done
done
python3 - "$quota" "$max" "$out" "${results[@]}" <<'PY' | tee -a "$out/summary.txt"
import statistics, sys
quota, limit, out = sys.argv[1:4]
best = {}
for row in sys.argv[4:]:
    rep, workers, players = map(int, row.split())
    best.setdefault(rep, {})[workers] = players
ratios = []
for rep in sorted(best):
    b = best[rep]
    line = ", ".join(f"{w} loop(s) {n}" for w, n in sorted(b.items()))
    if b.get(1) and b.get(2):
        ratios.append(b[2] / b[1])
        line += f", ratio {ratios[-1]:.2f}x"
    print(f"repetition {rep}: {line}")
medians = {}
for w in sorted({w for b in best.values() for w in b}):
    medians[w] = statistics.median(b[w] for b in best.values() if w in b)
text = "; ".join(f"{w} loop(s) ({quota} cores each): {medians[w]:.0f} players" for w in medians)
if ratios and medians.get(1) and medians.get(2):
    text += f"; ratio of the medians {medians[2] / medians[1]:.2f}x, median ratio {statistics.median(ratios):.2f}x"
print(f"scaling result (medians of {len(best)}): {text}")
print(f"(last level that passed in each search; the next one up failed or hit --max {limit}; details in {out})")
PY
