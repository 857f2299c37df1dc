# Shared by tools/run-fuzzers.sh (CI's smoke run) and tools/fuzz-long.sh (the long campaign).

# Every libFuzzer target of a build, one path per line.
fuzz_targets() {
  local t
  for t in "$1"/tests/fuzz/*_fuzz; do
    [ -x "$t" ] && echo "$t"
  done
  return 0
}

# The arguments every run of target $2 takes (its dictionary, where it has one); $1 is the source tree.
fuzz_args() {
  local src_dir=$1 name=$2
  local dict="$src_dir/tests/fuzz/${name%_fuzz}.dict"
  [ -f "$dict" ] || dict="$src_dir/tests/fuzz/amf.dict"
  case "$name" in amf*|command*|session*|access*) echo "-dict=$dict" ;; esac
  return 0
}

# for_each JOBS STEP ITEM...: runs "STEP ITEM" for every item, JOBS at a time; 1 when any failed.
for_each() {
  local jobs=$1 step=$2 status=0 running=0 item
  shift 2
  for item in "$@"; do
    if [ "$running" -ge "$jobs" ]; then
      wait -n || status=1
      running=$((running - 1))
    fi
    "$step" "$item" &
    running=$((running + 1))
  done
  while [ "$running" -gt 0 ]; do
    wait -n || status=1
    running=$((running - 1))
  done
  return $status
}
