#!/usr/bin/env bash
# Builds the sanitizer test build (build-test/), starts a throwaway PostgreSQL
# and Redis on free ports, and runs ctest against them. Extra arguments go to
# ctest, e.g. `scripts/test.sh -R unit` or `scripts/test.sh -R integration -V`.
#
# Exported for the tests:
#   EUNHA_TEST_PG_URL       postgresql://postgres@127.0.0.1:PORT/postgres (superuser, trust)
#   EUNHA_TEST_REDIS_URL    redis://127.0.0.1:PORT/0
#   EUNHA_TEST_PG_STOP / EUNHA_TEST_PG_START        shell commands (for system())
#   EUNHA_TEST_PG_KILL                               SIGKILLs PostgreSQL (a crash)
#   EUNHA_TEST_REDIS_STOP / EUNHA_TEST_REDIS_START  that stop/start the same servers,
#   EUNHA_TEST_REDIS_PAUSE / EUNHA_TEST_REDIS_RESUME freeze/thaw Redis (a hung peer),
#                                                    same ports, same data
#   EUNHA_TEST_PG_SEED      an initdb'd data directory scripts/with-services.sh copies
# A suite that uses the STOP/KILL/PAUSE commands runs under
# scripts/with-services.sh, so they name servers of its own (CMakeLists.txt).
# Set EUNHA_TEST_KEEP=1 to keep the temporary directory (logs) afterwards, and
# EUNHA_BUILD_DIR to build somewhere other than build-test/ (two checkouts or
# two people testing side by side). scripts/lint.sh's format and layers checks run
# first, its cppcheck beside the suites (EUNHA_TEST_LINT=0 skips both). Suites run EUNHA_TEST_JOBS (5) at a
# time. In a whole-suite run (or in CI), scripts/fuzz.sh runs every fuzz
# target for EUNHA_FUZZ_SECONDS (5) each, from when the last
# EUNHA_FUZZ_TAIL (2) suites are left; EUNHA_TEST_FUZZ=0 skips it.
# Five seconds from the seed corpora is a regression check (each target
# runs its seeds and some thousands of mutations); real fuzzing is
# `scripts/fuzz.sh 600`.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/lib/services.sh
. "$ROOT/scripts/lib/services.sh"

eu_install_deps "${EU_TEST_DEPS[@]}"
command -v npm >/dev/null 2>&1 || eu_apt_install nodejs npm

TMP=$(eu_test_tmpdir)

# shellcheck disable=SC2317 # invoked through the EXIT trap
cleanup() {
  local rc=$?
  trap - INT TERM EXIT
  local pid
  for pid in ${node_run:-} ${seed_run:-} ${fuzz_build:-} ${fuzz_run:-} ${cppcheck_run:-}; do
    kill "$pid" 2>/dev/null || true
  done
  eu_test_tmp_release "$TMP"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Node packages of the tests: masto.js (tests/e2e), s3rver (tests/s3), Fedify
# (tests/fedify), puppeteer-core and axe-core (tests/browser, which drives
# Debian's chromium: nothing is downloaded besides the packages).
node_packages() {
  local dir
  export PUPPETEER_SKIP_DOWNLOAD=1
  for dir in tests/e2e tests/s3 tests/fedify tests/browser; do
    [ -f "$dir/package.json" ] || continue
    if [ -f "$dir/package-lock.json" ]; then
      # npm ci wipes and refills node_modules (half a minute each on a busy
      # machine); skip it when the tree it made last time came from this very
      # lock file. A clean clone (CI) has no stamp and installs.
      if cmp -s "$dir/package-lock.json" "$dir/node_modules/.eunha-installed-lock"; then
        continue
      fi
      (cd "$dir" && npm ci --no-audit --no-fund) || return 1
      cp "$dir/package-lock.json" "$dir/node_modules/.eunha-installed-lock"
    else
      (cd "$dir" && npm install --no-audit --no-fund) || return 1
    fi
  done
}

# The node packages and one initdb (copied for the shared servers and for
# every suite that gets servers of its own, scripts/with-services.sh: a copy
# costs a fraction of an initdb) need no build, so they run beside it: on a
# clean clone they are a minute of mostly waiting on the disk and network.
node_packages >"$TMP/npm.log" 2>&1 &
node_run=$!
eu_pg_init "$TMP/pg-seed" >"$TMP/pg-seed.log" 2>&1 &
seed_run=$!

# Static checks: the format and layers checks first, so a slip fails in
# seconds, not after the build; cppcheck (minutes of CPU) runs beside the
# suites, below. EUNHA_TEST_LINT=0 skips both for a quick targeted run.
lint=${EUNHA_TEST_LINT:-1}
if [ "$lint" != 0 ]; then
  EUNHA_LINT_CHECKS="format headers layers" "$ROOT/scripts/lint.sh"
fi

# The fuzz targets, briefly, from their seed corpora: in a whole-suite run
# (no ctest arguments), in CI, or with EUNHA_TEST_FUZZ=1; EUNHA_TEST_FUZZ=0
# skips them. They need a clang build of their own (about 90 s of CPU), so
# a targeted `-R unit` run does not pay for it. It is built beside the
# test build: niced beside the suites, which keep both cores busy, it got
# little CPU and finished after them, a minute added to the run's end.
fuzz=${EUNHA_TEST_FUZZ:-}
if [ -z "$fuzz" ] && { [ "${CI:-}" = true ] || [ "$#" -eq 0 ]; }; then
  fuzz=1
fi
fuzz_build=
if [ "$fuzz" = 1 ]; then
  (
    rc=0
    scripts/fuzz.sh --build-only >"$TMP/fuzz-build.log" 2>&1 || rc=$?
    echo "$rc" >"$TMP/fuzz-build.rc"
  ) &
  fuzz_build=$!
fi

JOBS=${EUNHA_JOBS:-2}
BUILD=${EUNHA_BUILD_DIR:-build-test}
mapfile -t generator < <(eu_cmake_generator "$BUILD")
cmake "${generator[@]}" -S . -B "$BUILD" -DEUNHA_TESTS=ON -DEUNHA_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
cmake --build "$BUILD" -j"$JOBS"

wait_for() { # PID LOG WHAT
  if ! wait "$1"; then
    cat "$2" >&2
    eu_die "$3 failed (above)"
  fi
}
wait_for "$node_run" "$TMP/npm.log" "installing the tests' node packages"
node_run=
wait_for "$seed_run" "$TMP/pg-seed.log" "initdb"
seed_run=
export EUNHA_TEST_PG_SEED="$TMP/pg-seed"
eu_test_services_up "$TMP"
eu_test_golden "$TMP/golden" "$BUILD/eunha"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

eu_log "PostgreSQL $EUNHA_TEST_PG_URL, Redis $EUNHA_TEST_REDIS_URL, scratch $TMP"

# cppcheck at the lowest priority beside the suites: it only reads the
# sources, and finishes within their minutes.
cppcheck_run=
if [ "$lint" != 0 ]; then
  EUNHA_LINT_CHECKS=cppcheck EUNHA_JOBS=${EUNHA_JOBS:-2} nice -n 19 scripts/lint.sh \
    >"$TMP/cppcheck.log" 2>&1 &
  cppcheck_run=$!
fi

# Suites run side by side (ctest -j); each harness server has databases and
# a Redis prefix of its own, and a suite that stops or pauses its servers
# gets a pair of its own (scripts/with-services.sh, chosen in CMakeLists.txt).
# EUNHA_TEST_JOBS sets how many at once; a -j among the arguments wins.
export CTEST_PARALLEL_LEVEL=${EUNHA_TEST_JOBS:-5}

# The fuzz run starts when the last few suites are left: they are the long
# ones that wait on timers and servers, so the two cores are mostly idle
# by then, and the fuzzers (niced) take that rather than adding their
# minute after the suites. Started from the start, beside every suite,
# they slowed the whole run instead.
fuzz_run=
start_fuzz() {
  [ "$fuzz" = 1 ] && [ -z "$fuzz_run" ] || return 0
  (
    while [ ! -f "$TMP/fuzz-build.rc" ]; do sleep 1; done
    rc=$(cat "$TMP/fuzz-build.rc")
    if [ "$rc" -eq 0 ]; then
      rc=0
      nice -n 10 scripts/fuzz.sh "${EUNHA_FUZZ_SECONDS:-5}" >"$TMP/fuzz.log" 2>&1 || rc=$?
    fi
    echo "$rc" >"$TMP/fuzz.rc"
  ) &
  fuzz_run=$!
}
# Reads ctest's output as it comes; "N/TOTAL Test #..." lines say how many
# suites are done. It runs in this shell (not at the end of a pipe), so
# the fuzz run it starts is this shell's to wait for.
watch_ctest() {
  local line finished total left=${EUNHA_FUZZ_TAIL:-2}
  while IFS= read -r line; do
    printf '%s\n' "$line"
    if [[ $line =~ ^\ *([0-9]+)/([0-9]+)\ Test ]]; then
      finished=${BASH_REMATCH[1]}
      total=${BASH_REMATCH[2]}
      if [ $((total - finished)) -le "$left" ]; then
        start_fuzz
      fi
    fi
  done
}

set +e
# Each test has a Check timeout of its own; this one only ends a suite that
# hangs outside them. Beside three others on a loaded machine a long suite
# took 330 s, so 600 s was too near.
watch_ctest < <(
  ctest --test-dir "$BUILD" --output-on-failure --timeout 1500 "$@"
  echo "$?" >"$TMP/ctest.rc"
)
status=$(cat "$TMP/ctest.rc" 2>/dev/null || echo 1)
set -e

if [ -n "$cppcheck_run" ]; then
  if ! wait "$cppcheck_run"; then
    cat "$TMP/cppcheck.log" >&2
    status=1
  fi
fi
if [ "$fuzz" = 1 ]; then
  # A run that ended before its tail (a few suites picked with -R) fuzzes now.
  start_fuzz
  wait "$fuzz_run" || true
  fuzz_build=
  if [ "$(cat "$TMP/fuzz-build.rc" 2>/dev/null)" != 0 ]; then
    cat "$TMP/fuzz-build.log" >&2
    eu_log "the fuzz build failed (above)"
    status=1
  else
    cat "$TMP/fuzz.log"
    [ "$(cat "$TMP/fuzz.rc" 2>/dev/null)" = 0 ] || status=1
  fi
fi
exit "$status"
