#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ with clang (build-fuzz/, or
# EUNHA_FUZZ_BUILD_DIR) and runs each for SECONDS (default 30) from its seed
# corpus in fuzz/corpus/<name>/. Fails when a target crashes, leaks or trips
# a sanitizer; the input that did it is left in the build directory as
# crash-*/leak-*/timeout-* and its path is printed.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     e.g. scripts/fuzz.sh 600 toml
#   scripts/fuzz.sh --build-only [TARGET...]  build, run nothing (scripts/test.sh
#                                             builds while the suites run)
#
# EUNHA_FUZZ_JOBS (2) targets run at a time, each for the full SECONDS: a
# fuzzer is one busy process, so two of them fill this 2-core machine and
# the ten targets take half the wall time they take one by one.
#
# New inputs the fuzzer finds go to a scratch corpus in the build directory,
# not into fuzz/corpus/: the seeds stay small and hand-made. Extra libFuzzer
# flags can be given in EUNHA_FUZZ_FLAGS.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/lib/services.sh
. "$ROOT/scripts/lib/services.sh"

build_only=0
if [ "${1:-}" = "--build-only" ]; then
  build_only=1
  shift
  SECONDS_PER_TARGET=0
else
  SECONDS_PER_TARGET=${1:-30}
  shift || true
fi
JOBS=${EUNHA_JOBS:-2}
FUZZ_JOBS=${EUNHA_FUZZ_JOBS:-2}
BUILD=${EUNHA_FUZZ_BUILD_DIR:-build-fuzz}

eu_install_deps
# libFuzzer is in clang's runtime libraries (libclang-rt-dev on Debian).
missing=()
command -v clang >/dev/null 2>&1 || missing+=(clang)
eu_pkg_installed libclang-rt-dev || missing+=(libclang-rt-dev)
if [ "${#missing[@]}" -gt 0 ]; then
  eu_apt_install "${missing[@]}"
fi
CLANG=$(command -v clang)

# -O1: fast enough to fuzz, still close to the source in a stack trace.
mapfile -t generator < <(eu_cmake_generator "$BUILD")
CC="$CLANG" cmake "${generator[@]}" -S . -B "$BUILD" -DEUNHA_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_FLAGS_DEBUG="-g -O1" >/dev/null

if [ "$#" -gt 0 ]; then
  TARGETS=("$@")
else
  TARGETS=()
  for f in fuzz/fuzz_*.c; do
    n=$(basename "$f" .c)
    TARGETS+=("${n#fuzz_}")
  done
fi
cmake --build "$BUILD" -j"$JOBS" --target "${TARGETS[@]/#/fuzz_}"

[ "$build_only" -eq 0 ] || exit 0

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# fuzz_one TARGET : runs one target; its verdict goes to fuzz-work/T/result
# (ok or failed), its report to stderr when it failed.
fuzz_one() {
  local t=$1 work="$BUILD/fuzz-work/$1"
  mkdir -p "$work/corpus"
  rm -f "$work/result"
  # shellcheck disable=SC2086 # EUNHA_FUZZ_FLAGS is a list of flags
  if ! (cd "$work" && "$ROOT/$BUILD/fuzz_$t" -max_total_time="$SECONDS_PER_TARGET" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 ${EUNHA_FUZZ_FLAGS:-} \
    corpus "$ROOT/fuzz/corpus/$t" >fuzz.log 2>&1); then
    echo failed >"$work/result"
    {
      tail -n 60 "$work/fuzz.log"
      eu_log "fuzz_$t failed; inputs: $(find "$work" -maxdepth 1 \
        \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | tr '\n' ' ')"
    } >&2
  else
    echo ok >"$work/result"
    grep -E '^stat::(number_of_executed_units|peak_rss_mb)|cov: ' "$work/fuzz.log" | tail -n 3 |
      sed "s/^/  fuzz_$t: /" || true
  fi
}

eu_log "fuzzing ${#TARGETS[@]} targets, ${SECONDS_PER_TARGET}s each, $FUZZ_JOBS at a time"
running=0
for t in "${TARGETS[@]}"; do
  if [ "$running" -ge "$FUZZ_JOBS" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  eu_log "fuzz_$t: ${SECONDS_PER_TARGET}s"
  fuzz_one "$t" &
  running=$((running + 1))
done
wait

failed=()
for t in "${TARGETS[@]}"; do
  [ "$(cat "$BUILD/fuzz-work/$t/result" 2>/dev/null)" = ok ] || failed+=("$t")
done

if [ "${#failed[@]}" -gt 0 ]; then
  eu_die "fuzz targets failed: ${failed[*]}"
fi
eu_log "fuzz targets clean: ${TARGETS[*]}"
