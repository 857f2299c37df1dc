#!/usr/bin/env bash
# Records the seed corpus of the fuzz targets (tests/fuzz/README.md) from real programs:
#  - a 1 s clip (lavfi testsrc + sine, 32x32, x264 or x265 + AAC) that ffmpeg writes as FLV and MP4;
#  - the bytes ffmpeg, rtmpdump and GStreamer send when they publish and play, as tools/rtmp-capture
#    saves them;
#  - the FLV rtmpdump records while the server plays the x265 MP4 as VOD (Enhanced RTMP HEVC).
# tools/cut-fuzz-seeds.py then cuts these into tests/fuzz/corpus/<target>/. The handshake/ and
# session/ seeds are left alone.
#
# Usage: tools/record-fuzz-seeds.sh [BUILD_DIR]
#   BUILD_DIR (default build/asan) must have server/sluice and tools/rtmp-capture built.
# The same ffmpeg, x264 and x265 versions give the same files: the encodes run single-threaded and
# bitexact, without host metadata.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build/asan}" && pwd)
for tool in ffmpeg rtmpdump gst-launch-1.0 python3 timeout; do
  command -v "$tool" >/dev/null || { echo "record-fuzz-seeds: $tool is missing (tools/install-deps.sh test)" >&2; exit 1; }
done
for bin in server/sluice tools/rtmp-capture; do
  [ -x "$build/$bin" ] || { echo "record-fuzz-seeds: build $build/$bin first" >&2; exit 1; }
done

work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# One fixed port: the URL (and so the port) is part of what clients send in connect.
port=${SLUICE_SEED_PORT:-19350}
if python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.5)' "$port" 2>/dev/null; then
  echo "record-fuzz-seeds: port $port is in use (set SLUICE_SEED_PORT)" >&2; exit 1
fi
wait_for() {  # wait_for FILE TEXT: until FILE contains TEXT (at most 10 s)
  for _ in $(seq 100); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "record-fuzz-seeds: no \"$2\" in $1" >&2; exit 1
}

enc() { ffmpeg -hide_banner -loglevel error -y "$@"; }
exact=(-fflags +bitexact -flags:v +bitexact -flags:a +bitexact -map_metadata -1)
video=(-f lavfi -i testsrc=size=32x32:rate=5:duration=1)
audio=(-f lavfi -i sine=frequency=440:sample_rate=8000:duration=1)
x264=(-c:v libx264 -preset ultrafast -g 3 -crf 51 -threads 1)
x265=(-c:v libx265 -preset ultrafast -crf 51 -tag:v hvc1
      -x265-params log-level=none:keyint=3:pools=1:frame-threads=1:info=0)
aac=(-c:a aac -b:a 8k -ac 1)
enc "${video[@]}" "${audio[@]}" "${x264[@]}" "${aac[@]}" "${exact[@]}" -f flv "$work/avc-aac.flv"
enc "${video[@]}" "${audio[@]}" "${x264[@]}" "${aac[@]}" "${exact[@]}" -flvflags add_keyframe_index \
    -f flv "$work/avc-aac-keyframe-index.flv"
enc "${audio[@]}" "${aac[@]}" "${exact[@]}" -f flv "$work/aac.flv"
enc "${video[@]}" "${audio[@]}" "${x264[@]}" "${aac[@]}" "${exact[@]}" -f mp4 "$work/avc-aac.mp4"
enc "${video[@]}" "${audio[@]}" "${x264[@]}" "${aac[@]}" "${exact[@]}" -movflags +faststart \
    -f mp4 "$work/avc-aac-faststart.mp4"
enc "${video[@]}" "${audio[@]}" "${x265[@]}" "${aac[@]}" "${exact[@]}" -f mp4 "$work/hevc.mp4"
enc "${audio[@]}" "${aac[@]}" "${exact[@]}" -f mp4 "$work/aac.m4a"

# capture NAME CLIENT ARGS...: runs the client against rtmp-capture, URL standing for its address;
# the client's bytes (handshake included) go to NAME.rtmp.
capture() {
  local name=$1 pid
  shift
  "$build/tools/rtmp-capture" "$port" --save "$work/$name.rtmp" --media 1000 --timeout 20 >"$work/$name.log" &
  pid=$!
  wait_for "$work/$name.log" listening
  timeout -k 5 20 "${@/URL/rtmp://127.0.0.1:$port/live/seed}" >/dev/null 2>&1 || true
  wait "$pid"
}
capture ffmpeg-publish ffmpeg -hide_banner -i "$work/avc-aac.flv" -c copy -f flv URL
# Media timestamps from 16778 s on, past 0xFFFFFF ms: extended timestamps.
capture ffmpeg-publish-extended-timestamp ffmpeg -hide_banner -i "$work/avc-aac.flv" -c copy \
    -output_ts_offset 16778 -f flv URL
capture ffmpeg-play ffmpeg -hide_banner -i URL -f null -
capture rtmpdump-play rtmpdump -q -r URL -o /dev/null
# GStreamer: rtmpsink is librtmp (128-byte chunks), rtmp2sink its own implementation.
capture gst-rtmpsink-publish gst-launch-1.0 -q filesrc location="$work/avc-aac.flv" ! typefind ! rtmpsink location=URL
capture gst-rtmp2sink-publish gst-launch-1.0 -q flvmux name=m streamable=true ! rtmp2sink async-connect=false location=URL \
    filesrc location="$work/avc-aac.flv" ! flvdemux name=d d.video ! queue ! h264parse ! m.video \
    d.audio ! queue ! aacparse ! m.audio

# The server's VOD of the x265 clip, recorded by rtmpdump.
mkdir "$work/media"
cp "$work/hevc.mp4" "$work/media/"
printf 'rtmp:\n  listen: 127.0.0.1:%s\napps:\n  vod: { type: vod, root: ./media }\nlog:\n  level: warn\n' \
    "$port" >"$work/sluice.yaml"
"$build/server/sluice" --config "$work/sluice.yaml" >"$work/server.log" 2>&1 &
server_pid=$!
python3 - "$port" <<'EOF'
import socket, sys, time
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.1)
sys.exit("record-fuzz-seeds: the server did not start")
EOF
timeout -k 5 30 rtmpdump -q -r "rtmp://127.0.0.1:$port/vod/hevc.mp4" -o "$work/hevc-vod.flv" || true
kill "$server_pid"
wait "$server_pid" 2>/dev/null || true
server_pid=""

python3 "$src/tools/cut-fuzz-seeds.py" "$work" "$src/tests/fuzz/corpus"
