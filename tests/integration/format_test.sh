#!/usr/bin/env bash
# Every C and C++ file of the repository is formatted as .clang-format says (clang-format-14,
# installed with clang-14 by tools/install-deps.sh). A file that is not prints the first lines
# clang-format would change; `clang-format-14 -i FILE` fixes it.
set -u
src=${SLUICE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$src" || exit 1
if ! command -v clang-format-14 >/dev/null; then
  echo "FAIL: clang-format-14 is not installed (tools/install-deps.sh test installs it)"
  exit 1
fi
files=$(git ls-files '*.cpp' '*.hpp' '*.h' '*.c' 2>/dev/null || find base protocol media config server tools bench tests -name '*.[ch]pp' -o -name '*.[ch]')
# One clang-format process for all files: it names each file and line it would change.
out=$(echo "$files" | xargs clang-format-14 --dry-run --Werror 2>&1)
bad=$(echo "$out" | grep -oE '^[^:]+:[0-9]+:[0-9]+: error' | cut -d: -f1 | sort -u)
if [ -n "$bad" ]; then
  for f in $bad; do
    echo "FAIL: $f is not formatted (clang-format-14 -i $f):"
    clang-format-14 "$f" | diff "$f" - | head -8 | sed 's/^/  /'
  done
  exit 1
fi
echo "PASS: $(echo "$files" | wc -w) files formatted as .clang-format says"
