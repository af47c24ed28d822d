#!/usr/bin/env bash
# Builds the libFuzzer targets once and runs each for N seconds, J at a time.
#   Fuzz/run.sh [-s SECONDS] [-j JOBS] [TARGET ...]   (default: 60 s, 1 job, every target in Fuzz/Targets)
# Exits non-zero if a target fails to build or libFuzzer reports a crash, leak or
# timeout; the reproducer is left in Fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")"

seconds=60
jobs=1
while getopts "s:j:" opt; do
  case "$opt" in
    s) seconds="$OPTARG" ;;
    j) jobs="$OPTARG" ;;
    *) echo "usage: Fuzz/run.sh [-s SECONDS] [-j JOBS] [TARGET ...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))

if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for dir in Targets/*/; do targets+=("$(basename "$dir")"); done
fi

mkdir -p artifacts
# --sanitize makes SwiftPM link libFuzzer's main instead of the target's; the -Xswiftc
# flags are what instrument every module for coverage (SwiftPM's flag alone does not).
build_args=(-c release --sanitize=fuzzer --sanitize=address
            -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library)
if ! swift build "${build_args[@]}" >artifacts/build.log 2>&1; then
  grep -vE 'Cannot export local symbol' artifacts/build.log >&2
  echo "fuzz: build failed" >&2
  exit 1
fi
bin="$(swift build "${build_args[@]}" --show-bin-path)"

# One target: its report goes to artifacts/TARGET.out and its verdict to artifacts/TARGET.rc,
# so that targets run side by side still print one after the other.
fuzz_one() {
  local target="$1" corpus rc=0
  {
    [ -x "$bin/$target" ] || { echo "fuzz: $target did not build"; echo 1 > "artifacts/$target.rc"; return; }
    corpus="$(mktemp -d)"
    # Seeds (valid inputs) give the fuzzer a head start; they are committed beside the target.
    [ -d "Corpus/$target" ] && cp -r "Corpus/$target/." "$corpus/"
    echo "fuzz: $target for ${seconds}s"
    # Limits that catch superlinear work, not only crashes (issue 12): an input of at most
    # 64 KiB goes through every decoder in well under a millisecond of linear work, and
    # quadratic work on it would take minutes, so 25 s means runaway work while a starved
    # process on a loaded machine (an input of 0.1 s once took 8 s beside three CI runs)
    # does not fail; the rendering targets also check counted work. A single allocation of 64 MiB
    # (1000 times the largest input) or 1 GiB of memory means amplification. The targets
    # that render (FuzzCBOR, FuzzInspect) also check the counted work against the input size.
    if ! "$bin/$target" "$corpus" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=1024 -malloc_limit_mb=64 \
          -max_len=65536 -print_final_stats=1 -artifact_prefix="artifacts/$target-" 2>"artifacts/$target.log"; then
      echo "fuzz: $target FAILED; see Fuzz/artifacts/$target.log"
      tail -40 "artifacts/$target.log"
      rc=1
    elif ! grep -q 'INFO: Loaded [0-9]* modules' "artifacts/$target.log"; then
      echo "fuzz: $target ran without coverage instrumentation"
      rc=1
    else
      grep -E '^(Done)' "artifacts/$target.log" || true
      grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9a-zA-Z]+' "artifacts/$target.log" | tail -1 || true
    fi
    rm -rf "$corpus"
    echo "$rc" > "artifacts/$target.rc"
  } > "artifacts/$target.out" 2>&1
}

for target in "${targets[@]}"; do
  rm -f "artifacts/$target.rc" "artifacts/$target.out"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  fuzz_one "$target" &
done
wait

status=0
for target in "${targets[@]}"; do
  cat "artifacts/$target.out"
  if [ "$(cat "artifacts/$target.rc" 2>/dev/null)" != 0 ]; then
    echo "fuzz: $target did not pass" >&2
    status=1
  fi
done
exit "$status"
