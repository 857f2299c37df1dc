#!/usr/bin/env bash
# The floors of docs/architecture.md, checked on the include lines of every source file:
#   base -> protocol -> media -> config -> server/io -> server/access_log -> server/{live,vod,access,record} ->
#   server/{relay,hls,snapshot} (on live/) -> server/cluster (on relay/) -> server/ingest (what every
#   protocol's publisher does) -> server/{rtmp,srt,webrtc} -> server/http (WHIP/WHEP signalling
#   hands the offer to server/webrtc)
#   -> server/api (the stats API and /metrics, reading the loop through ApiView)
#   -> server/ (the composition root: the files directly in server/: server.*, drain.cpp, main.cpp)
# A file may include its own folder and the floors below it, never a floor above it or a sibling
# wing. base/, protocol/, media/ and config/ are sans-I/O: no libuv, sockets, spdlog, and yaml-cpp
# only inside config/*.cpp; OpenSSL only in protocol/ (the handshake HMAC).
set -u
src=${SLUICE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$src" || exit 1
status=0
fail() { echo "FAIL: $1"; echo "$2" | sed 's/^/  /'; status=1; }

# Project includes of the files under $1 (a folder, or a glob) that are not in the allowed list $2
# (a regex of include prefixes). Only "quoted" includes are project includes.
check_floor() {
  local where=$1 allowed=$2 what=$3 bad
  bad=$(grep -rnE '^#include "' $where 2>/dev/null | grep -vE "#include \"($allowed)" || true)
  [ -z "$bad" ] || fail "$what" "$bad"
}
check_floor "base" 'base/' "base/ includes only itself"
check_floor "protocol" 'base/|protocol/' "protocol/ includes only base/ and itself"
check_floor "media" 'base/|protocol/|media/' "media/ includes only base/, protocol/ and itself"
check_floor "config" 'base/|config/' "config/ includes only base/ and itself"
low='base/|protocol/|media/|config/'
check_floor "server/io" "$low|server/io/" "server/io/ sees nothing above it"
# The access log stands on io/ (its logger) and is written from every wing that ends a session.
check_floor "server/access_log" "$low|server/io/|server/access_log/" "server/access_log/ sees io/ and the floors below"
low="$low|server/access_log/"
for wing in live vod access record; do
  check_floor "server/$wing" "$low|server/io/|server/$wing/" "server/$wing/ sees io/ and the floors below, no other wing"
done
# server/relay/ stands on live/ (docs/architecture.md): its push targets are subscribers of the hubs.
check_floor "server/relay" "$low|server/io/|server/live/|server/relay/" "server/relay/ sees io/ and live/, no other wing"
# server/hls/ too: its muxers are subscribers of the hubs.
check_floor "server/hls" "$low|server/io/|server/live/|server/hls/" "server/hls/ sees io/ and live/, no other wing"
# server/snapshot/ too: it reads the hubs' keyframes (and mirrors a stream another loop publishes).
check_floor "server/snapshot" "$low|server/io/|server/live/|server/snapshot/" "server/snapshot/ sees io/ and live/, no other wing"
# server/cluster/ stands on relay/: a stream owned by another node comes over a relay pull.
check_floor "server/cluster" "$low|server/io/|server/live/|server/relay/|server/cluster/" "server/cluster/ sees io/, live/ and relay/, no other wing"
mid="$low|server/io/|server/live/|server/vod/|server/access/|server/record/|server/relay/|server/hls/|server/snapshot/|server/cluster/"
# server/ingest/ stands on every wing a publish starts (relays, HLS, recording, the cluster's claim).
check_floor "server/ingest" "$mid|server/ingest/" "server/ingest/ sees the wings below, not the front doors or the root"
mid="$mid|server/ingest/"
check_floor "server/rtmp" "$mid|server/rtmp/" "server/rtmp/ sees the wings below, not server/http/ or the root"
check_floor "server/http" "$mid|server/webrtc/|server/http/" "server/http/ sees the wings below (server/webrtc/ for WHIP/WHEP), not server/rtmp/ or the root"
check_floor "server/srt" "$mid|server/srt/" "server/srt/ sees the wings below, not server/rtmp/, server/http/ or the root"
check_floor "server/webrtc" "$mid|server/webrtc/" "server/webrtc/ sees the wings below, not another front door or the root"
# The API wing reads every wing below and the loop through ApiView, never the composition root.
check_floor "server/api" "$mid|server/rtmp/|server/http/|server/srt/|server/webrtc/|server/api/" "server/api/ sees the wings below, not the composition root"
check_floor "tools bench/load" 'base/|protocol/|media/|bench/load/' "tools/ and bench/load/ use only base/, protocol/ and media/"

# media/ uses RTMP in its .cpp files only where it must; its headers stay free of protocol/.
bad=$(grep -rnE '^#include "protocol/' media --include=*.hpp || true)
[ -z "$bad" ] || fail "media/ headers include protocol/" "$bad"

# Sans-I/O: nothing that waits, logs or parses YAML below server/.
io='uv\.h|spdlog/|sys/socket\.h|liburing\.h|curl/|hiredis/|srt/srt\.h'
bad=$(grep -rnE "#include *[<\"]($io|netinet/|arpa/inet\.h)" base protocol media || true)
[ -z "$bad" ] || fail "base/, protocol/ or media/ include I/O headers" "$bad"
# config/ parses addresses (inet_pton), which is not I/O.
bad=$(grep -rnE "#include *[<\"]($io)" config || true)
[ -z "$bad" ] || fail "config/ includes I/O headers" "$bad"
bad=$(grep -rln '#include *<yaml-cpp' base protocol media config/*.hpp 2>/dev/null || true)
[ -z "$bad" ] || fail "yaml-cpp outside config/*.cpp" "$bad"
bad=$(grep -rln '#include *<openssl/' base media config || true)
[ -z "$bad" ] || fail "OpenSSL outside protocol/ and server/" "$bad"
# Each transport library in its own wing: libsrt in server/srt/ (and the root that starts it, and
# the API figures read from srt_bstats),
# libsrtp2 and libavcodec (the WebRTC audio bridge) in server/webrtc/, libavcodec and libswscale
# (the snapshots' decoder and JPEG encoder) in server/snapshot/ too.
bad=$(grep -rnE '#include *<srt/' server --include=*.cpp --include=*.hpp | grep -vE '^server/(srt/|api/srt_figures|[^/]+\.(cpp|hpp):)' || true)
[ -z "$bad" ] || fail "libsrt outside server/srt/" "$bad"
bad=$(grep -rnE '#include *<(srtp2/|libavcodec/|libavutil/|libswresample/|libswscale/)' server --include=*.cpp --include=*.hpp |
      grep -vE '^server/webrtc/|^server/snapshot/[a-z_]+\.cpp:[0-9]+:#include *<(libavcodec|libavutil|libswscale)/' || true)
[ -z "$bad" ] || fail "libsrtp2 or libavcodec outside server/webrtc/ (and the snapshots' .cpp files)" "$bad"

# The composition root is included by nothing but itself (the files directly in server/), and the
# API wing by nothing but the root and itself.
bad=$(grep -rnE '#include "server/[a-z_]+\.hpp"' server --include=*.cpp --include=*.hpp |
      grep -vE '^server/[^/]+\.(cpp|hpp):' || true)
[ -z "$bad" ] || fail "the composition root (server/server.hpp and its siblings) included from a wing" "$bad"
bad=$(grep -rnE '#include "server/api/' server --include=*.cpp --include=*.hpp |
      grep -vE '^server/([^/]+|api/[^/]+)\.(cpp|hpp):' || true)
[ -z "$bad" ] || fail "the API wing (server/api/) included from another wing" "$bad"

[ $status -eq 0 ] && echo "PASS: the floors hold"
exit $status
