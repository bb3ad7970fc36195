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
# Set EUNHA_TEST_KEEP=1 to keep the temporary directory (logs) afterwards, and
# EUNHA_BUILD_DIR to build somewhere other than build-test/ (two checkouts or
# two people testing side by side). scripts/lint.sh (cppcheck, clang-format)
# runs first (EUNHA_TEST_LINT=0 skips it). After a whole-suite run (or in CI), scripts/fuzz.sh runs every
# fuzz target for EUNHA_FUZZ_SECONDS (30) each; EUNHA_TEST_FUZZ=0 skips it.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/lib/services.sh
. "$ROOT/scripts/lib/services.sh"

eu_install_deps

# Static checks first: a formatting slip fails in seconds, not after the build.
# EUNHA_TEST_LINT=0 skips them for a quick targeted run while working.
if [ "${EUNHA_TEST_LINT:-1}" != 0 ]; then
  EUNHA_JOBS=${EUNHA_JOBS:-2} "$ROOT/scripts/lint.sh"
fi

JOBS=${EUNHA_JOBS:-2}
BUILD=${EUNHA_BUILD_DIR:-build-test}
cmake -S . -B "$BUILD" -DEUNHA_TESTS=ON -DEUNHA_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
cmake --build "$BUILD" -j"$JOBS"

# Node packages of the tests: masto.js (tests/e2e), s3rver (tests/s3), Fedify (tests/fedify).
for dir in tests/e2e tests/s3 tests/fedify; do
  [ -f "$dir/package.json" ] || continue
  if ! command -v npm >/dev/null 2>&1; then
    eu_apt_install nodejs npm
  fi
  if [ -f "$dir/package-lock.json" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund)
  else
    (cd "$dir" && npm install --no-audit --no-fund)
  fi
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/eunha-test.XXXXXX")
# mktemp makes it 0700 root-only; initdb/postgres run as the postgres user.
chmod 755 "$TMP"
if ! eu_pg_user_can_reach "$TMP"; then
  rmdir "$TMP"
  TMP=$(mktemp -d /tmp/eunha-test.XXXXXX)
  chmod 755 "$TMP"
fi

# shellcheck disable=SC2317 # invoked through the EXIT trap
cleanup() {
  local rc=$?
  trap - INT TERM EXIT
  eu_pg_stop "$TMP/pg" || true
  eu_redis_stop "$TMP/redis" || true
  if [ "${EUNHA_TEST_KEEP:-0}" = 1 ]; then
    eu_log "kept $TMP"
  else
    rm -rf "$TMP"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

PG_PORT=$(eu_free_port)
REDIS_PORT=$(eu_free_port "$PG_PORT")
eu_pg_start "$TMP/pg" "$PG_PORT" --no-fsync
eu_redis_start "$TMP/redis" "$REDIS_PORT"

# Small scripts the tests run with system(); they re-use this library so a
# restart goes through the same code (same port, same data directory).
LIB=$(eu_sq "$ROOT/scripts/lib/services.sh")
mkctl() { # NAME FUNCTION ARGS...
  local name=$1 fn=$2 arg args=""
  shift 2
  for arg in "$@"; do args="$args $(eu_sq "$arg")"; done
  {
    echo '#!/usr/bin/env bash'
    echo 'set -euo pipefail'
    echo ". $LIB"
    echo "$fn$args"
  } >"$TMP/$name"
  chmod 755 "$TMP/$name"
}
mkctl pg-stop eu_pg_stop "$TMP/pg"
mkctl pg-kill eu_pg_kill "$TMP/pg"
mkctl pg-start eu_pg_start "$TMP/pg" "$PG_PORT" --no-fsync
mkctl redis-stop eu_redis_stop "$TMP/redis"
mkctl redis-start eu_redis_start "$TMP/redis" "$REDIS_PORT"
mkctl redis-pause eu_redis_pause "$TMP/redis"
mkctl redis-resume eu_redis_resume "$TMP/redis"

export EUNHA_TEST_PG_URL="postgresql://postgres@127.0.0.1:$PG_PORT/postgres"
export EUNHA_TEST_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
EUNHA_TEST_PG_STOP=$(eu_sq "$TMP/pg-stop")
EUNHA_TEST_PG_START=$(eu_sq "$TMP/pg-start")
EUNHA_TEST_PG_KILL=$(eu_sq "$TMP/pg-kill")
EUNHA_TEST_REDIS_STOP=$(eu_sq "$TMP/redis-stop")
EUNHA_TEST_REDIS_START=$(eu_sq "$TMP/redis-start")
EUNHA_TEST_REDIS_PAUSE=$(eu_sq "$TMP/redis-pause")
EUNHA_TEST_REDIS_RESUME=$(eu_sq "$TMP/redis-resume")
export EUNHA_TEST_PG_STOP EUNHA_TEST_PG_START EUNHA_TEST_PG_KILL EUNHA_TEST_REDIS_STOP EUNHA_TEST_REDIS_START
export EUNHA_TEST_REDIS_PAUSE EUNHA_TEST_REDIS_RESUME
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

eu_log "PostgreSQL $EUNHA_TEST_PG_URL, Redis $EUNHA_TEST_REDIS_URL, scratch $TMP"

set +e
ctest --test-dir "$BUILD" --output-on-failure --timeout 600 "$@"
status=$?
set -e

# The fuzz targets, briefly, from their seed corpora: after the whole suite
# (no ctest arguments), in CI, or with EUNHA_TEST_FUZZ=1; EUNHA_TEST_FUZZ=0
# skips them. They need a clang build of their own, so a targeted `-R unit`
# run does not pay for it.
fuzz=${EUNHA_TEST_FUZZ:-}
if [ -z "$fuzz" ] && { [ "${CI:-}" = true ] || [ "$#" -eq 0 ]; }; then
  fuzz=1
fi
if [ "$status" -eq 0 ] && [ "$fuzz" = 1 ]; then
  scripts/fuzz.sh "${EUNHA_FUZZ_SECONDS:-30}" || status=1
fi
exit "$status"
