#!/usr/bin/env bash
# What an idle WebSocket stream costs eunha, and how fast one status reaches
# many listeners. One Release eunha; scripts/lib/streaming_client.py opens
# EUNHA_STREAM_COUNTS streams (cumulative, default 1000,10000) on
# /api/v1/streaming?stream=public from many loopback addresses and reads
# /proc/PID/smaps_rollup after each step (RSS and private pages; per stream is
# the growth divided by the count), then keeps EUNHA_STREAM_LISTENERS of them
# (default 1000) and posts EUNHA_STREAM_EVENTS statuses (default 100) one
# after another, counting the update events that reach the listeners: events
# per second is what arrived divided by the time from the first POST to the
# last event.
#
# Every listener is rendered for separately (the REST statement for its
# viewer, see src/social/stream_events.c); they share one token here, which is
# the worst case for nothing (no viewer's state is shared between renders).
#
# The open-file limit is raised to EUNHA_STREAM_NOFILE (default: the hard
# limit), which must leave room for the largest count in the client and the
# server. Builds into build-bench/ (BENCH_BUILD=DIR; BENCH_SKIP_BUILD=1 to
# reuse); its own PostgreSQL and Redis on free ports. Raw output:
# benchmark-results/streaming-DATE/ (git-ignored); the JSON summary is printed.
set -euo pipefail

COUNTS=${EUNHA_STREAM_COUNTS:-1000,10000}
LISTENERS=${EUNHA_STREAM_LISTENERS:-1000}
EVENTS=${EUNHA_STREAM_EVENTS:-100}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/lib/services.sh
. "$ROOT/scripts/lib/services.sh"
# shellcheck source=scripts/lib/bench.sh
. "$ROOT/scripts/lib/bench.sh"
# shellcheck source=scripts/lib/conn_bench.sh
. "$ROOT/scripts/lib/conn_bench.sh"

conn_bench_prepare "${EUNHA_STREAM_NOFILE:-}"
bench_require_cmd jq jq

conn_bench_start streaming
bench_admin POST /admin/v1/tenants '{"domain":"stream.example","title":"Stream"}' >/dev/null
: >"$TMP/users"
bench_seed_tenant stream.example 1 "$TMP/users"
TOKEN=$(awk '{print $2; exit}' "$TMP/users")

python3 -B "$ROOT/scripts/lib/streaming_client.py" --port "$BENCH_PUBLIC_PORT" --pid "$EUNHA_PID" \
  --host stream.example --token "$TOKEN" --counts "$COUNTS" --listeners "$LISTENERS" \
  --events "$EVENTS" | tee "$RESULTS/summary.json"
conn_bench_machine_summary
