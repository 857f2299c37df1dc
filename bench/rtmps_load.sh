#!/usr/bin/env bash
# RTMPS fan-out cost against plain RTMP, in the same run of one server: one Sluice release server
# (workers: 1) with an RTMP, an RTMPS (self-signed certificate) and an HTTP listener (/metrics),
# one live stream of ~2.5 Mb/s published over plain RTMP by `sluice-bench publish`; then, ROUNDS
# times, PLAYERS players of that stream over rtmp:// and PLAYERS over rtmps:// (`sluice-bench
# play`, one run after the other; the order alternates between rounds). For each run: the
# server's CPU (utime + stime of the whole process, /proc/PID/stat) over the play window, ramp-up
# and TLS handshakes included, divided by the GB the players received (bytes_in of the bench's
# JSON: socket bytes, so over RTMPS the TLS record overhead, ~0.2%, counts as delivered). Also per
# run, the steady fan-out: the server's CPU over the window where every player is connected and
# past its joining burst, divided by what the server sent meanwhile (/metrics), so the TLS handshakes
# (stated on their own below) are not spread over however long the run was. Reports each run, the
# medians and both RTMPS / RTMP ratios against the bar (1.6x).
#
# Then the TLS handshake rate: `openssl s_time -new` (full handshakes, no resumption) against the
# RTMPS listener for 10 s, with the server's CPU over that window (less what the publisher alone
# costs) -> handshakes per server CPU-second, i.e. per core. The negotiated protocol, cipher and
# key exchange come from one `openssl s_client`.
#
# Usage: bench/rtmps_load.sh [PLAYERS] [SECONDS] [ROUNDS]   (defaults: 500 30 3)
# Environment: RTMPS_KEY=rsa (default: RSA 2048, the certificate docs/tls.md makes) or ec
# (ECDSA P-256); RTMPS_RATE=200 (players' ramp-up, connections/s); RTMPS_RECORD_LAYER=sluice (default)
# or openssl (who makes the TLS records the server sends, docs/tls.md); JOBS for the release build.
set -euo pipefail
players=${1:-500}
seconds=${2:-30}
rounds=${3:-3}
key_type=${RTMPS_KEY:-rsa}
rate=${RTMPS_RATE:-200}
record_layer=${RTMPS_RECORD_LAYER:-sluice}
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
make -C "$root" release >/dev/null
work=$(mktemp -d /tmp/sluice-bench-rtmps-XXXXXX)
pids=()
bench_trap_cleanup  # stops every PID in pids, removes $work
bin="$work/bin"
mkdir -p "$bin"
cp "$root/build/release/server/sluice" "$root/build/release/bench/load/sluice-bench" "$bin/"
hz=$(getconf CLK_TCK)

# A self-signed certificate for localhost.
case "$key_type" in
  rsa) newkey=(-newkey rsa:2048) ;;
  ec) newkey=(-newkey ec -pkeyopt ec_paramgen_curve:P-256) ;;
  *) echo "rtmps_load.sh: RTMPS_KEY must be rsa or ec" >&2; exit 2 ;;
esac
openssl req -x509 "${newkey[@]}" -nodes -days 2 -subj /CN=localhost -addext subjectAltName=DNS:localhost \
  -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null

media="$work/media.flv"
bench_make_media "$media" 20 2400k

port=$(bench_free_port); tport=$(bench_free_port); hport=$(bench_free_port)
cat > "$work/sluice.yaml" <<YAML
workers: 1
rtmp: { listen: 127.0.0.1:$port, chunk_size: 4096 }
rtmps: { listen: 127.0.0.1:$tport, cert: $work/cert.pem, key: $work/key.pem, record_layer: $record_layer }
http: { listen: 127.0.0.1:$hport }
apps:
  live: { type: live }
log: { level: warn }
YAML
"$bin/sluice" --config "$work/sluice.yaml" >"$work/server.log" 2>&1 &
server=$!; pids+=("$server")
bench_wait_port "$port" && bench_wait_port "$tport" && bench_wait_port "$hport" ||
  { echo "rtmps_load.sh: the server did not start:" >&2; cat "$work/server.log" >&2; exit 1; }

# The publisher lives for the whole script (killed by the cleanup).
"$bin/sluice-bench" publish -q -d $(( rounds * 2 * (seconds + 10) + 120 )) -f "$media" \
  "rtmp://127.0.0.1:$port/live/fan" >"$work/publish.txt" 2>&1 &
pids+=("$!")
sleep 4
# The publisher alone (ingest, timers): a baseline to show beside the players' windows.
idle0=$(bench_cpu_ticks "$server"); i0=$(date +%s.%N); sleep 5
idle1=$(bench_cpu_ticks "$server"); i1=$(date +%s.%N)

# Players are all connected after PLAYERS/RATE s; 3 s more let the last ones' GOP bursts pass.
ramp=$(( (players + rate - 1) / rate + 3 ))
(( seconds >= ramp + 5 )) || { echo "rtmps_load.sh: SECONDS must be at least $(( ramp + 5 )) for a steady window" >&2; exit 2; }
bytes_out() {  # what the server has sent on its open RTMP(S) connections: a gauge, which a player that
  # leaves takes its bytes out of, so a run's steady figure holds only when no player failed (column "failed")
  curl -s "http://127.0.0.1:$hport/metrics" | awk '/^sluice_rtmp_open_connection_bytes\{direction="out"\}/ {printf "%.0f\n", $2}'
}

run() {  # run PROTO(rtmp|rtmps) ROUND
  local proto=$1 round=$2 dir="$work/$1-$2" url cpu0 cpu1 t0 t1
  mkdir -p "$dir"
  if [ "$proto" = rtmp ]; then url="rtmp://127.0.0.1:$port/live/fan"; else url="rtmps://127.0.0.1:$tport/live/fan"; fi
  cpu0=$(bench_cpu_ticks "$server"); t0=$(date +%s.%N)
  "$bin/sluice-bench" play -n "$players" --rate "$rate" -d "$seconds" -q --allow-failures "$players" \
    --json "$dir/play.json" "$url" >"$dir/play.txt" 2>&1 &
  local bench=$!; pids+=("$bench")
  # The steady window: every player connected and past its joining burst, until 2 s before the end.
  sleep "$ramp"
  local s_cpu0 s_cpu1 s_t0 s_t1 s_b0 s_b1
  s_cpu0=$(bench_cpu_ticks "$server"); s_t0=$(date +%s.%N); s_b0=$(bytes_out)
  sleep $(( seconds - ramp - 2 ))
  s_cpu1=$(bench_cpu_ticks "$server"); s_t1=$(date +%s.%N); s_b1=$(bytes_out)
  wait "$bench" || true
  cpu1=$(bench_cpu_ticks "$server"); t1=$(date +%s.%N)
  curl -s "http://127.0.0.1:$hport/metrics" > "$dir/metrics.txt" || true
  python3 - "$dir" "$proto" "$round" "$(( cpu1 - cpu0 ))" "$hz" "$t0" "$t1" "$(( s_cpu1 - s_cpu0 ))" "$(( ${s_b1:-0} - ${s_b0:-0} ))" \
    "$s_t0" "$s_t1" >> "$work/runs.jsonl" <<'PY'
import json, re, sys
d, proto, rnd, ticks, hz, t0, t1, s_ticks, s_bytes, s_t0, s_t1 = sys.argv[1:]
steady_cpu = int(s_ticks) / int(hz)
j = json.load(open(f"{d}/play.json"))
p = j["players"]
cpu = int(ticks) / int(hz)
gb = p["bytes_in"] / 1e9
m = open(f"{d}/metrics.txt").read()
lag = re.search(r'sluice_loop_lag_seconds\{quantile="0.99"\} (\S+)', m)
tls = p.get("tls_handshake_ms") or {}
print(json.dumps({"proto": proto, "round": int(rnd), "cpu_s": cpu, "window_s": float(t1) - float(t0), "gb": gb,
                  "cpu_per_gb": cpu / gb if gb else float("nan"), "mbps": p["mbps_in"], "ok": p["ok"],
                  "failed": p["failed"], "reasons": p["failure_reasons"], "stalls": p["stalls"],
                  "bench_cpu_pct": j["bench_cpu"]["percent_of_one_core"],
                  "lag_p99_ms": float(lag.group(1)) * 1000 if lag else None,
                  "steady_cpu_s": steady_cpu, "steady_s": float(s_t1) - float(s_t0), "steady_gb": int(s_bytes) / 1e9,
                  "steady_cpu_per_gb": steady_cpu / (int(s_bytes) / 1e9) if int(s_bytes) > 0 else float("nan"),
                  "tls": j.get("tls", ""), "tls_hs_p50_ms": tls.get("p50"), "tls_hs_n": tls.get("count", 0)}))
PY
  tail -1 "$work/runs.jsonl" >&2
  sleep 2  # let the server close the players before the next window
}

for (( round = 1; round <= rounds; round++ )); do
  if (( round % 2 )); then run rtmp "$round"; run rtmps "$round"; else run rtmps "$round"; run rtmp "$round"; fi
done

# What one s_client negotiates with the server's defaults.
openssl s_client -connect "127.0.0.1:$tport" -servername localhost -brief </dev/null >"$work/s_client.txt" 2>&1 || true

hs0=$(bench_cpu_ticks "$server"); h0=$(date +%s.%N)
openssl s_time -connect "127.0.0.1:$tport" -new -time 10 >"$work/s_time.txt" 2>&1 </dev/null || true
hs1=$(bench_cpu_ticks "$server"); h1=$(date +%s.%N)

python3 - "$work" "$players" "$seconds" "$hz" "$key_type" "$(( idle1 - idle0 ))" "$i0" "$i1" "$(( hs1 - hs0 ))" "$h0" "$h1" "$record_layer" <<'PY'
import json, re, statistics, sys
work, players, seconds, hz, key_type, idle_t, i0, i1, hs_t, h0, h1, record_layer = sys.argv[1:]
hz = int(hz)
runs = [json.loads(l) for l in open(f"{work}/runs.jsonl")]
print(f"\nRTMPS vs RTMP live fan-out: 1 stream at ~2.5 Mb/s (published over RTMP), {players} players per run, "
      f"{seconds} s per run, Sluice release, workers: 1, certificate {key_type}, record_layer: {record_layer}")
print("| proto | round | server CPU-s | GB delivered | CPU-s/GB | steady CPU-s/GB | Mb/s | ok | failed | stalls | bench CPU % | loop lag p99 ms |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in runs:
    lag = "-" if r["lag_p99_ms"] is None else f"{r['lag_p99_ms']:.1f}"
    print(f"| {r['proto']} | {r['round']} | {r['cpu_s']:.2f} | {r['gb']:.3f} | {r['cpu_per_gb']:.3f} | "
          f"{r['steady_cpu_per_gb']:.3f} | {r['mbps']:.0f} | "
          f"{r['ok']} | {r['failed']} | {r['stalls']} | {r['bench_cpu_pct']:.0f} | {lag} |")
for r in runs:
    for reason, n in r["reasons"].items():
        print(f"  {r['proto']} round {r['round']}: failed x{n}: {reason}")
med = {p: statistics.median(r["cpu_per_gb"] for r in runs if r["proto"] == p) for p in ("rtmp", "rtmps")}
ratio = med["rtmps"] / med["rtmp"]
print(f"\nmedian server CPU-s per GB delivered: RTMP {med['rtmp']:.3f}, RTMPS {med['rtmps']:.3f}")
print(f"RTMPS / RTMP over the whole window (ramp-up and {players} TLS handshakes included): {ratio:.2f}x "
      f"(bar: at most 1.6x): {'PASS' if ratio <= 1.6 else 'FAIL'}")
steady = {p: statistics.median(r["steady_cpu_per_gb"] for r in runs if r["proto"] == p) for p in ("rtmp", "rtmps")}
s_ratio = steady["rtmps"] / steady["rtmp"]
print(f"steady fan-out (every player connected, {runs[0]['steady_s']:.0f} s windows; server CPU over the bytes it "
      f"sent): RTMP {steady['rtmp']:.3f}, RTMPS {steady['rtmps']:.3f} CPU-s/GB, RTMPS / RTMP {s_ratio:.2f}x "
      f"(bar: at most 1.6x): {'PASS' if s_ratio <= 1.6 else 'FAIL'}")
idle_rate = int(idle_t) / hz / (float(i1) - float(i0))  # server CPU-s per second with the publisher alone
def net(r):  # the run's CPU less what the publisher alone costs over the same window, per GB
    return max(r["cpu_s"] - idle_rate * r["window_s"], 0) / r["gb"]
net_med = {p: statistics.median(net(r) for r in runs if r["proto"] == p) for p in ("rtmp", "rtmps")}
print(f"the publisher alone costs the server {100 * idle_rate:.1f}% of a core; less that: RTMP {net_med['rtmp']:.3f}, "
      f"RTMPS {net_med['rtmps']:.3f} CPU-s/GB, {net_med['rtmps'] / max(net_med['rtmp'], 1e-9):.2f}x")
tls = [r for r in runs if r["proto"] == "rtmps" and r["tls"]]
if tls:
    hs = [r["tls_hs_p50_ms"] for r in tls if r["tls_hs_p50_ms"] is not None]
    print(f"sluice-bench over rtmps://: {tls[0]['tls']}; TLS handshake (TCP connected -> TLS done) p50 "
          f"{statistics.median(hs):.2f} ms (median over runs)")

sc = open(f"{work}/s_client.txt").read()
def field(name):
    m = re.search(rf"^{name}: (.*)$", sc, re.M)
    return m.group(1).strip() if m else "?"
cert = "RSA 2048" if key_type == "rsa" else "ECDSA P-256"
print(f"\nopenssl s_client ({cert} certificate): {field('Protocol version')}, {field('Ciphersuite')}, "
      f"server temp key {field('Server Temp Key')}, signature {field('Signature type')}")
st = open(f"{work}/s_time.txt").read()
m = re.search(r"(\d+) connections in (\S+) real seconds", st)
if not m:
    print("openssl s_time: no result:\n" + st)
    sys.exit(0)
conns, real = int(m.group(1)), float(m.group(2))
window = float(h1) - float(h0)
cpu = int(hs_t) / hz
cpu_hs = max(cpu - idle_rate * window, 1e-9)
print(f"openssl s_time -new -time 10: {conns} full handshakes in {real:.1f} s = {conns / real:.0f}/s; "
      f"server CPU {cpu:.2f} s over {window:.1f} s ({100 * cpu / window:.0f}% of a core; "
      f"the publisher alone: {100 * idle_rate:.1f}%)")
print(f"TLS handshakes per server CPU-second (per core): {conns / cpu_hs:.0f} "
      f"({conns / cpu:.0f} without subtracting the publisher)")
if cpu / window < 0.9:
    print("  note: the server was not saturated (s_time, one connection at a time, shares the machine), so the "
          "rate per CPU-second is the figure that says what one core can do")
PY
