#!/usr/bin/env bash
# Multi-core scaling: how many live players one worker loop serves stall-free, and how many two
# loops serve, each given the same CPU budget per loop.
#
# On a 2-core machine the load generator needs a core of its own, so "1 loop on 1 core against
# 2 loops on 2 cores" cannot be measured directly. Instead the server runs in a CPU cgroup with a
# quota of QUOTA cores per loop (cgroup v1 cpu.cfs_quota_us or v2 cpu.max): 1 loop gets QUOTA,
# 2 loops get 2 x QUOTA. Each level is a fresh server, one ffmpeg publisher of a 2.5 Mb/s stream
# and one sluice-bench process with N players for SECONDS; a level passes when every player
# played with no stall and no failure and received at least 95% of the stream's bit rate. The
# player count grows by STEP until a level fails; the result is the last level that passed, for
# each loop count, and their ratio (the issue's bar: 2 loops >= 1.8x the players of 1 loop).
#
# Usage: bench/scaling.sh [--quota CORES] [--seconds S] [--start N] [--step N] [--max N] [--out DIR]
#   defaults: --quota 0.25 --seconds 15 --start 400 --step 200 --max 4000
# Needs root (or sudo) to create the cgroup. Every run is bounded: SECONDS plus a few of set-up.
set -euo pipefail
quota=0.25
seconds=15
start=400
step=200
max=4000
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quota) quota=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --start) start=$2; shift 2 ;;
    --step) step=$2; shift 2 ;;
    --max) max=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "scaling.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
out=${out:-/tmp/sluice-scaling-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
work=$(mktemp -d /tmp/sluice-scaling-work-XXXXXX)
pids=()
cgroup=""
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo

# The server's CPU cgroup: v2 (cpu.max) when the unified hierarchy has the cpu controller, else
# v1's cpu controller (cpu.cfs_quota_us).
cgroup_create() {
  local name="sluice-scaling-$$"
  if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
    grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control ||
      echo +cpu | $sudo tee /sys/fs/cgroup/cgroup.subtree_control >/dev/null
    cgroup=/sys/fs/cgroup/$name
    $sudo mkdir -p "$cgroup"
  elif [ -d /sys/fs/cgroup/cpu ]; then
    cgroup=/sys/fs/cgroup/cpu/$name
    $sudo mkdir -p "$cgroup"
  else
    echo "scaling.sh: no CPU cgroup controller found under /sys/fs/cgroup" >&2
    exit 1
  fi
}
cgroup_limit() {  # cgroup_limit CORES PID
  local us
  us=$(python3 -c "print(int(round($1 * 100000)))")
  if [ -f "$cgroup/cpu.max" ]; then
    echo "$us 100000" | $sudo tee "$cgroup/cpu.max" >/dev/null
  else
    echo 100000 | $sudo tee "$cgroup/cpu.cfs_period_us" >/dev/null
    echo "$us" | $sudo tee "$cgroup/cpu.cfs_quota_us" >/dev/null
  fi
  echo "$2" | $sudo tee "$cgroup/cgroup.procs" >/dev/null
}
cleanup() {
  bench_cleanup
  [ -n "$cgroup" ] && [ -d "$cgroup" ] && $sudo rmdir "$cgroup" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

make -C "$root" release >/dev/null
bin="$work/bin"
mkdir -p "$bin" "$work/media"
cp "$root/build/release/server/sluice" "$root/build/release/tools/bench/sluice-bench" "$bin/"
bench_make_media "$work/media/movie.flv" $(( seconds + 40 )) 2400k
kbps=$(ffprobe -v error -show_entries format=bit_rate -of csv=p=0 "$work/media/movie.flv")
kbps=$(( kbps / 1000 ))
cgroup_create
echo "scaling: stream $kbps kb/s, $quota cores per loop, $seconds s per level, players from $start by $step" \
  | tee "$out/summary.txt"

# level WORKERS PLAYERS: one run; prints the verdict line and returns 0 when the level passed.
level() {
  local workers=$1 players=$2 port server pub bench rc=0 cpu0 cpu1
  port=$(bench_free_port)
  SLUICE_WORKERS=$workers bench_sluice_config "$work/sluice.yaml" "$port" "$work/media"
  "$bin/sluice" --config "$work/sluice.yaml" >>"$out/server-$workers.log" 2>&1 &
  server=$!; pids+=("$server")
  bench_wait_port "$port" 10 || { echo "scaling: server did not start" >&2; return 2; }
  cgroup_limit "$(python3 -c "print($quota * $workers)")" "$server"
  ffmpeg -nostdin -loglevel error -re -stream_loop -1 -i "$work/media/movie.flv" -c copy -f flv \
    "rtmp://127.0.0.1:$port/live/bench" >>"$out/publisher.log" 2>&1 &
  pub=$!; pids+=("$pub")
  sleep 2.5
  cpu0=$(bench_cpu_ticks "$server")
  local json="$out/bench-$workers-$players.json"
  "$bin/sluice-bench" play -n "$players" --rate 400 -d "$seconds" -q --allow-failures "$players" --json "$json" \
    "rtmp://127.0.0.1:$port/live/bench" >"$out/bench-$workers-$players.txt" 2>&1 &
  bench=$!; pids+=("$bench")
  wait "$bench" || rc=$?
  cpu1=$(bench_cpu_ticks "$server")
  bench_stop "$pub"
  bench_stop "$server"
  python3 - "$json" "$workers" "$players" "$seconds" "$kbps" "$(( cpu1 - cpu0 ))" "$(getconf CLK_TCK)" "$quota" <<'PY'
import json, sys
path, workers, players, seconds, kbps, ticks, hz, quota = sys.argv[1:]
workers, players, seconds, kbps = int(workers), int(players), float(seconds), float(kbps)
try:
    s = json.load(open(path))
except (OSError, ValueError):
    print(f"  {workers} loop(s), {players} players: FAIL (no bench summary)")
    sys.exit(1)
p = s["players"]
# Live players also get the GOP cache at once, so a healthy run is at or above the stream's rate.
per_player = p["bytes_in"] * 8 / 1000 / max(p["ok"], 1) / seconds
ok = p["failed"] == 0 and p["stalls"] == 0 and p["ok"] == players and per_player >= 0.95 * kbps
cpu = int(ticks) / int(hz)
print(f"  {workers} loop(s), {players:5d} players: {'pass' if ok else 'FAIL'}  ok {p['ok']}, failed {p['failed']}, "
      f"stalls {p['stalls']}, {per_player:.0f} kb/s per player (stream {kbps:.0f}), "
      f"server {cpu / seconds * 100:.0f}% of a core (quota {float(quota) * workers * 100:.0f}%), "
      f"bench lag max {s.get('loop_lag_max_ms', 0):.0f} ms")
sys.exit(0 if ok else 1)
PY
}

declare -A best
for workers in 1 2; do
  best[$workers]=0
  n=$(( start * workers ))
  while [ "$n" -le "$max" ]; do
    passed=0
    level "$workers" "$n" >"$work/verdict" && passed=1
    tee -a "$out/summary.txt" <"$work/verdict"
    [ "$passed" -eq 1 ] || break
    best[$workers]=$n
    n=$(( n + step ))
  done
done
ratio=$(python3 -c "b1, b2 = ${best[1]}, ${best[2]}; print(f'{b2 / b1:.2f}x' if b1 else 'n/a')")
{
  echo "scaling result: 1 loop (${quota} cores): ${best[1]} players; 2 loops (2 x ${quota} cores): ${best[2]} players; ratio $ratio"
  echo "(last level that passed; the next one up failed or hit --max $max; details in $out)"
} | tee -a "$out/summary.txt"
