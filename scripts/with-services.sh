#!/usr/bin/env bash
# Runs COMMAND with a PostgreSQL and a Redis of its own, started here on free
# ports and removed afterwards:
#
#   scripts/with-services.sh COMMAND [ARGS...]
#
# CTest runs an integration suite through it when the suite stops, kills or
# pauses its servers (EUNHA_TEST_PG_STOP, ..._KILL, EUNHA_TEST_REDIS_PAUSE,
# ...) or flushes Redis: with servers of its own it can do that while the
# other suites run beside it against the shared pair scripts/test.sh
# started. The EUNHA_TEST_* variables COMMAND sees are those of
# scripts/test.sh, naming the new servers. EUNHA_TEST_PG_SEED (set by
# scripts/test.sh) lets the data directory be copied instead of initdb'd.
# Exits with COMMAND's status.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/lib/services.sh
. "$ROOT/scripts/lib/services.sh"

[ "$#" -gt 0 ] || eu_die "usage: scripts/with-services.sh COMMAND [ARGS...]"

TMP=$(eu_test_tmpdir)
# shellcheck disable=SC2317 # invoked through the EXIT trap
cleanup() {
  local rc=$?
  trap - INT TERM EXIT
  eu_test_tmp_release "$TMP" >/dev/null
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

eu_test_services_up "$TMP" 2>"$TMP/services.log" || {
  cat "$TMP/services.log" >&2
  exit 1
}
# Its own migrated template for the harness to copy (see eu_test_golden).
if [ -n "${EUNHA_BIN:-}" ]; then
  eu_test_golden "$TMP/golden" "$EUNHA_BIN"
else
  unset EUNHA_TEST_PG_GOLDEN
fi
eu_log "own PostgreSQL $EUNHA_TEST_PG_URL, Redis $EUNHA_TEST_REDIS_URL for: $*"
set +e
"$@"
status=$?
set -e
exit "$status"
