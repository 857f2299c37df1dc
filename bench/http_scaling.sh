#!/usr/bin/env bash
# HTTP on every loop: small answers per second from one worker loop and from two, each given the
# same CPU budget per loop (the method of bench/scaling.sh: each loop's thread in a CPU cgroup of its
# own with a quota of QUOTA cores, since on a 2-core machine the load generator needs CPU of its
# own; --shared-quota: one quota of loops x QUOTA for the whole server).
#
# Scenarios (wrk, one thread, CONNECTIONS connections, SECONDS each):
#   tiny        a 9-byte file, keep-alive
#   tiny-close  the same, one request per connection (wrk -H "Connection: close" reconnects)
#   small       a 4 KiB file, keep-alive
#   api         GET /api/v1/server (answered by worker 0 for every loop)
# For each repetition and scenario, 1 loop then 2 loops, each on a fresh server; the result is the
# median req/s of each and their ratio (the issue's bar: 2 loops >= 1.8x one).
#
# Usage: bench/http_scaling.sh [--quota CORES] [--seconds S] [--reps N] [--connections C] [--shared-quota] [--out DIR]
#                              [SCENARIO...]
#   defaults: --quota 0.4 --seconds 8 --reps 3 --connections 50, scenarios tiny tiny-close small api
# Needs root (or sudo) for the cgroup, and wrk (apt-get install wrk). Each run is bounded by
# SECONDS plus a few of set-up.
set -euo pipefail
shared_quota=0
quota=0.4
seconds=8
reps=3
connections=50
out=""
scenarios=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quota) quota=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --shared-quota) shared_quota=1; shift ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    tiny|tiny-close|small|api) scenarios+=("$1"); shift ;;
    *) echo "http_scaling.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done
[ ${#scenarios[@]} -gt 0 ] || scenarios=(tiny tiny-close small api)
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
command -v wrk >/dev/null || bench_apt_install http_scaling wrk
out=${out:-/tmp/sluice-http-scaling-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
work=$(mktemp -d /tmp/sluice-http-scaling-work-XXXXXX)
pids=()
bench_trap_cleanup

make -C "$root" release >/dev/null
bin="$work/bin"
mkdir -p "$bin" "$work/media"
cp "$root/build/release/server/sluice" "$bin/"
printf 'hello!!!\n' >"$work/media/tiny.mp4"   # 9 bytes
head -c 4096 /dev/urandom >"$work/media/small.mp4"
bench_cgroup_create http-scaling
echo "http_scaling: $quota cores per loop, $seconds s per run, $connections connections, $reps repetitions" \
  | tee "$out/summary.txt"

# run SCENARIO WORKERS REP: one fresh server, one wrk; appends "SCENARIO WORKERS REP REQ_PER_S CPU_S" to results.
run() {
  local scenario=$1 workers=$2 rep=$3 port hport server path close=() txt cpu0 cpu1
  port=$(bench_free_port)
  hport=$(bench_free_port)
  SLUICE_HTTP_PORT=$hport SLUICE_WORKERS=$workers bench_sluice_config "$work/sluice.yaml" "$port" "$work/media"
  "$bin/sluice" --config "$work/sluice.yaml" >>"$out/server-$workers.log" 2>&1 &
  server=$!; pids+=("$server")
  bench_wait_port "$hport" 10 || { echo "http_scaling: server did not start" >&2; return 2; }
  if [ "$shared_quota" -eq 1 ]; then
    bench_cgroup_limit "$(python3 -c "print($quota * $workers)")" "$server"
  else
    bench_cgroup_limit_loops "$quota" "$server" "$workers"
  fi
  case "$scenario" in
    tiny) path=/vod/tiny.mp4 ;;
    tiny-close) path=/vod/tiny.mp4; close=(-H "Connection: close") ;;
    small) path=/vod/small.mp4 ;;
    api) path=/api/v1/server ;;
  esac
  txt="$out/wrk-$scenario-$workers-$rep.txt"
  cpu0=$(bench_cpu_ticks "$server")
  timeout $(( seconds + 30 )) wrk -t1 -c"$connections" -d"${seconds}s" --timeout 5s \
    ${close[@]+"${close[@]}"} "http://127.0.0.1:$hport$path" >"$txt" 2>&1 || true
  cpu1=$(bench_cpu_ticks "$server")
  bench_stop "$server"
  local rps
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$txt")
  # Answers that are not 2xx (a broken run) make the figure meaningless.
  if grep -q "Non-2xx or 3xx responses" "$txt"; then rps=0; fi
  echo "$scenario $workers $rep ${rps:-0} $(python3 -c "print(($cpu1 - $cpu0) / $(getconf CLK_TCK))")" >>"$out/results.txt"
  printf '  %-10s %d loop(s) rep %d: %s req/s\n' "$scenario" "$workers" "$rep" "${rps:-0}" | tee -a "$out/summary.txt"
}

for rep in $(seq 1 "$reps"); do
  for scenario in "${scenarios[@]}"; do
    run "$scenario" 1 "$rep"
    run "$scenario" 2 "$rep"
  done
done

python3 - "$out/results.txt" "$quota" "$seconds" <<'PY' | tee -a "$out/summary.txt"
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
quota, seconds = float(sys.argv[2]), float(sys.argv[3])
order = []
for r in rows:
    if r[0] not in order:
        order.append(r[0])
print(f"\n| scenario | 1 loop ({quota:g} core) req/s | 2 loops ({2 * quota:g} core) req/s | ratio | CPU-s per 1000 req, 1 / 2 loops |")
print("|---|---:|---:|---:|---:|")
for s in order:
    one = [float(r[3]) for r in rows if r[0] == s and r[1] == "1"]
    two = [float(r[3]) for r in rows if r[0] == s and r[1] == "2"]
    cpu1 = [float(r[4]) / max(float(r[3]) * seconds, 1) * 1000 for r in rows if r[0] == s and r[1] == "1"]
    cpu2 = [float(r[4]) / max(float(r[3]) * seconds, 1) * 1000 for r in rows if r[0] == s and r[1] == "2"]
    m1, m2 = statistics.median(one), statistics.median(two)
    ratio = f"**{m2 / m1:.2f}x**" if m1 else "n/a"
    print(f"| {s} | {m1:.0f} | {m2:.0f} | {ratio} | {statistics.median(cpu1):.3f} / {statistics.median(cpu2):.3f} |")
PY
echo "(medians of $reps; runs in $out)"
