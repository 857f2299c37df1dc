#!/usr/bin/env bash
# The access issue's first bar: a play hook must not stall the loop. One stream ("a") is measured
# with `sluice-bench latency` (publisher and 5 players in one process: per-message delay through
# the server) while 200 players join another stream ("b") at 100/s, each asking hooks.on_play,
# which answers after 50 ms. The same run without a hook is the reference. Prints the delay
# p50/p99/max of "a" for both, per repetition, and the joiners' time to first frame (which grows by
# the hook's 50 ms: proof the hook was asked). The max of "a" with a hook includes its own players'
# first messages, which waited for their own on_play answer.
#   bench/hook_latency.sh [BUILD_DIR=build/release] [REPS=2]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
build=${1:-build/release}
reps=${2:-2}
work=$(mktemp -d /tmp/sluice-hook-bench.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

bench_make_media "$work/src.flv" 30 1500k
hook_port=$(bench_free_port)
cat >"$work/hook.py" <<PY
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        time.sleep(0.05)
        self.send_response(200); self.send_header("Content-Length", "2"); self.end_headers(); self.wfile.write(b"{}")
ThreadingHTTPServer.request_queue_size = 512
ThreadingHTTPServer(("127.0.0.1", $hook_port), H).serve_forever()
PY
python3 "$work/hook.py" & pids+=($!)
bench_wait_port "$hook_port"

run() {  # run NAME HOOKS_YAML
  local name=$1 hooks=$2 port
  port=$(bench_free_port)
  printf 'rtmp: { listen: 127.0.0.1:%s }\napps: { live: { type: live } }\n%slog: { level: warn }\n' "$port" "$hooks" \
    >"$work/$name.yaml"
  "$build/server/sluice" -c "$work/$name.yaml" >"$work/$name.log" 2>&1 & local server=$!
  bench_wait_port "$port"
  "$build/bench/load/sluice-bench" publish -q -n 1 -d 30 -f "$work/src.flv" "rtmp://127.0.0.1:$port/live/b" \
    >/dev/null 2>&1 & local pub=$!
  sleep 1
  "$build/bench/load/sluice-bench" latency -q -n 5 -d 16 -f "$work/src.flv" --json "$work/$name.lat.json" \
    "rtmp://127.0.0.1:$port/live/a" >/dev/null 2>&1 & local lat=$!
  sleep 4
  "$build/bench/load/sluice-bench" play -q -n 200 --rate 100 -d 10 --json "$work/$name.join.json" \
    "rtmp://127.0.0.1:$port/live/b" >/dev/null 2>&1 || true
  wait "$lat" || true
  kill "$pub" 2>/dev/null || true; wait "$pub" 2>/dev/null || true
  kill "$server"; wait "$server" || true
  python3 - "$work/$name.lat.json" "$work/$name.join.json" "$name" <<'PY'
import json, sys
lat, join = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
d = lat["delay_ms"]; t = join["players"]["ttff_ms"]
print(f"{sys.argv[3]:>10}: stream a delay p50 {d['p50']:.1f} p99 {d['p99']:.1f} max {d['max']:.1f} ms | "
      f"200 joiners ok {join['players']['ok']}, ttff p50 {t['p50']:.0f} p99 {t['p99']:.0f} ms | "
      f"server loop: sluice-bench's own lag max {lat['bench_cpu']['loop_lag_max_ms']} ms")
PY
}

for i in $(seq "$reps"); do
  run "nohook$i" ""
  run "hook$i" "hooks: { on_play: http://127.0.0.1:$hook_port/play }"$'\n'
done
