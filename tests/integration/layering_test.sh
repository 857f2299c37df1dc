#!/usr/bin/env bash
# The dependency rule: protocol/ and media/ are sans-I/O. They never include libuv, yaml-cpp,
# spdlog or socket headers, and protocol/ is the only place OpenSSL appears (handshake HMAC).
set -u
src=${SLUICE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
status=0
bad=$(grep -rnE '#include *[<"](uv\.h|yaml-cpp/|spdlog/|sys/socket\.h|netinet/|arpa/inet\.h|server/|config/)' \
      "$src/protocol" "$src/media" || true)
if [ -n "$bad" ]; then
  echo "FAIL: protocol/ or media/ includes I/O or upper-layer headers:"; echo "$bad"; status=1
fi
ssl=$(grep -rln '#include *<openssl/' "$src/media" "$src/config" || true)
if [ -n "$ssl" ]; then echo "FAIL: OpenSSL outside protocol/: $ssl"; status=1; fi
yaml=$(grep -rln 'yaml-cpp' "$src"/config/*.hpp || true)
if [ -n "$yaml" ]; then echo "FAIL: yaml-cpp in a config header: $yaml"; status=1; fi
[ $status -eq 0 ] && echo "PASS: layering rules hold"
exit $status
