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

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/lib/services.sh
. "$ROOT/scripts/lib/services.sh"
# shellcheck source=scripts/lib/bench.sh
. "$ROOT/scripts/lib/bench.sh"
# shellcheck source=scripts/lib/conn_bench.sh
. "$ROOT/scripts/lib/conn_bench.sh"

conn_bench_prepare "${EUNHA_IDLE_NOFILE:-}"

conn_bench_start idle "max_connections = $COUNT"
bench_admin POST /admin/v1/tenants '{"domain":"idle.example","title":"Idle"}' >/dev/null

python3 -B "$ROOT/scripts/lib/idle_connections.py" --port "$BENCH_PUBLIC_PORT" \
  --admin-port "$BENCH_ADMIN_PORT" --admin-token-file "$TMP/admin_token" --pid "$EUNHA_PID" --host idle.example \
  --count "$COUNT" --extra "$EXTRA" --per-address "$PER_ADDRESS" | tee "$RESULTS/summary.json"
conn_bench_machine_summary
