#!/usr/bin/env bash
# What an idle keep-alive connection costs eunha, and what happens past the
# connection cap. One Release eunha with [limits] max_connections =
# EUNHA_IDLE_COUNT (default 10000); scripts/lib/idle_connections.py opens that
# many connections from loopback addresses (EUNHA_IDLE_PER_ADDRESS each,
# under the per-address cap), asks one request on each and keeps them open,
# then opens EUNHA_IDLE_EXTRA more (default 500) that must each get the fixed
# 503 and be closed, and asks again on some held ones.
#
# Memory is read from /proc/PID/smaps_rollup before and after: RSS and
# private pages (Private_Clean + Private_Dirty; RSS also counts shared
# library pages, which do not grow with connections). Per connection is the
# growth divided by the count. Kernel socket buffers are not in either figure
# (they are the kernel's, a few KiB per idle socket with empty queues).
#
# It raises the open-file limit of this shell (and so of eunha and the
# client) to EUNHA_IDLE_NOFILE (default: the hard limit, ulimit -Hn), which
# must leave room for COUNT + EXTRA sockets in the client; the script sets
# max_connections explicitly rather than rely on the automatic three
# quarters of that limit. The idle
# timeout (request_timeout_seconds) is raised to 600 s so the connections
# outlive the measurement.
#
# Builds into build-bench/ (BENCH_BUILD=DIR; BENCH_SKIP_BUILD=1 to reuse),
# brings up its own PostgreSQL and Redis on free ports, removes them on exit.
# Raw output: benchmark-results/idle-DATE/ (git-ignored); the JSON summary is
# printed at the end.
set -euo pipefail

COUNT=${EUNHA_IDLE_COUNT:-10000}
EXTRA=${EUNHA_IDLE_EXTRA:-500}
PER_ADDRESS=${EUNHA_IDLE_PER_ADDRESS:-200}
HARD=$(ulimit -Hn)
[ "$HARD" = unlimited ] && HARD=32768
NOFILE=${EUNHA_IDLE_NOFILE:-$HARD}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/lib/services.sh
. "$ROOT/scripts/lib/services.sh"
# shellcheck source=scripts/lib/bench.sh
. "$ROOT/scripts/lib/bench.sh"

ulimit -n "$NOFILE" || eu_die "cannot raise the open-file limit to $NOFILE (ulimit -Hn: $(ulimit -Hn))"
command -v python3 >/dev/null || eu_die "python3 is needed for the client"

bench_build eunha
RESULTS=$(bench_results_dir idle)
TMP=$(bench_make_tmp eunha-bench-idle)
PG_PORT=$(eu_free_port)
REDIS_PORT=$(eu_free_port "$PG_PORT")
DB=eunha_bench_idle

bench_trap_cleanup

eu_pg_start "$TMP/pg" "$PG_PORT" >/dev/null
eu_redis_start "$TMP/redis" "$REDIS_PORT" >/dev/null
bench_admin_token

cat >"$RESULTS/eunha.toml" <<EOF
[server]
listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
scheme = "http"

[admin]
token_file = "$TMP/admin_token"

[database]
url = "postgresql://postgres@127.0.0.1:$PG_PORT/$DB"
template = "${DB}_template"

[redis]
url = "redis://127.0.0.1:$REDIS_PORT/0"
prefix = "eunha-bench-idle-$$"

[limits]
max_connections = $COUNT
max_connections_per_ip = 256
request_timeout_seconds = 600
api_requests_per_5min = 0

[log]
level = "warn"
EOF
: >"$TMP/eunha.log"
bench_eunha_start "$RESULTS/eunha.toml" "$TMP"
bench_admin POST /admin/v1/tenants '{"domain":"idle.example","title":"Idle"}' >/dev/null

python3 "$ROOT/scripts/lib/idle_connections.py" --port "$BENCH_PUBLIC_PORT" \
  --admin-port "$BENCH_ADMIN_PORT" --admin-token-file "$TMP/admin_token" --pid "$EUNHA_PID" --host idle.example \
  --count "$COUNT" --extra "$EXTRA" --per-address "$PER_ADDRESS" | tee "$RESULTS/summary.json"
{
  bench_machine_summary
  printf -- '- Open-file limit: %s\n' "$NOFILE"
} | tee "$RESULTS/machine.md"
