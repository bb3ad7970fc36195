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
# With EUNHA_STREAM_ACCOUNTS=N (default 0: every stream on one token, as
# before) the fan-out is issue 33's: N accounts made in SQL, each with a
# token of its own and following the poster; stream i uses account i
# (modulo N), every EUNHA_STREAM_USER_EVERY'th (default 2) on its `user`
# stream and the others on `public`; the statuses are POSTed all at once,
# a connection each (a POST by an account with thousands of followers takes
# long enough that one at a time would measure posting, not fan-out).
# eunha's and PostgreSQL's CPU over the
# fan-out (first POST to last event) are read too, and the summary adds
# both per delivered event in ms ("cpu_ms_per_event"; Redis's CPU and the
# client's own are given beside it). EUNHA_STREAM_REBLOGS=1 makes each
# event the poster's boost of a status it posted before the streams opened;
# EUNHA_STREAM_POLLS=1 a status with a poll; EUNHA_STREAM_QUOTES=1 a quote,
# EUNHA_STREAM_EDITS=1 an edit ("status.update"), of a status it posted
# before the streams opened.
#
# Run it against an older server by building that commit elsewhere and
# pointing BENCH_BUILD at it with BENCH_SKIP_BUILD=1 (the script and client
# are this tree's).
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
ACCOUNTS=${EUNHA_STREAM_ACCOUNTS:-0}
USER_EVERY=${EUNHA_STREAM_USER_EVERY:-2}
REBLOGS=${EUNHA_STREAM_REBLOGS:-0}
POLLS=${EUNHA_STREAM_POLLS:-0}
QUOTES=${EUNHA_STREAM_QUOTES:-0}
EDITS=${EUNHA_STREAM_EDITS:-0}

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

# The per-tenant stream cap (1,000 by default) would refuse most of them.
conn_bench_start streaming "max_streams_per_tenant = 0"
bench_admin POST /admin/v1/tenants '{"domain":"stream.example","title":"Stream"}' >/dev/null
: >"$TMP/users"
bench_seed_tenant stream.example 1 "$TMP/users"
TOKEN=$(awk '{print $2; exit}' "$TMP/users")
POSTER=$(awk '{print $3; exit}' "$TMP/users")

extra=()
if [ "$REBLOGS" = 1 ]; then
  extra+=(--reblogs)
fi
if [ "$POLLS" = 1 ]; then
  extra+=(--polls)
fi
if [ "$QUOTES" = 1 ]; then
  extra+=(--quotes)
fi
if [ "$EDITS" = 1 ]; then
  extra+=(--edits)
fi
if [ "$ACCOUNTS" -gt 0 ]; then
  CONTROL_URL=$(sed -n 's/^url = "\(postgresql:[^"]*\)"/\1/p' "$RESULTS/eunha.toml")
  PLACEMENT_URL=${CONTROL_URL}_main
  TENANT_ID=$(bench_psql "$CONTROL_URL" "SELECT id FROM tenants WHERE domain = 'stream.example'")
  # Made in SQL: the API's password hashing would take the run's budget.
  bench_psql "$PLACEMENT_URL" "
    WITH a AS (INSERT INTO accounts (tenant_id, username)
      SELECT $TENANT_ID, 'l' || g FROM generate_series(1, $ACCOUNTS) g RETURNING id, username),
    u AS (INSERT INTO users (tenant_id, account_id, email, encrypted_password, confirmed_at)
      SELECT $TENANT_ID, a.id, a.username || '@stream.example', 'x', now() FROM a
      RETURNING id, account_id, email),
    t AS (INSERT INTO oauth_access_tokens (tenant_id, user_id, token_hash, scopes)
      SELECT $TENANT_ID, u.id, encode(sha256(convert_to('bench-' || u.email, 'UTF8')), 'hex'),
        'read' FROM u)
    INSERT INTO follows (tenant_id, account_id, target_account_id)
      SELECT $TENANT_ID, a.id, $POSTER FROM a" >/dev/null
  bench_psql "$PLACEMENT_URL" "COPY (SELECT 'bench-l' || g || '@stream.example'
    FROM generate_series(1, $ACCOUNTS) g) TO STDOUT" >"$TMP/tokens"
  extra+=(--tokens "$TMP/tokens" --user-every "$USER_EVERY" --posts-at-once
    --cpu-cmd "echo \$(bash -c '. $ROOT/scripts/lib/bench.sh; bench_cpu_ticks $EUNHA_PID; bench_pg_cpu_ticks $TMP/pg; bench_cpu_ticks \$(cat $TMP/redis/redis.pid)')")
fi

python3 -B "$ROOT/scripts/lib/streaming_client.py" --port "$BENCH_PUBLIC_PORT" --pid "$EUNHA_PID" \
  --host stream.example --token "$TOKEN" --counts "$COUNTS" --listeners "$LISTENERS" \
  --events "$EVENTS" "${extra[@]}" >"$RESULTS/client.json"
hz=$(getconf CLK_TCK)
jq --argjson hz "$hz" '.fanout |= (if (.cpu_before | length) == 3 then
    (. + {eunha_cpu_s: (((.cpu_after[0] | tonumber) - (.cpu_before[0] | tonumber)) / $hz),
          pg_cpu_s: (((.cpu_after[1] | tonumber) - (.cpu_before[1] | tonumber)) / $hz),
          redis_cpu_s: (((.cpu_after[2] | tonumber) - (.cpu_before[2] | tonumber)) / $hz)})
    | if .events_received > 0 then
        .cpu_ms_per_event = ((.eunha_cpu_s + .pg_cpu_s) * 1e6 / .events_received | round) / 1000
        | .eunha_ms_per_event = (.eunha_cpu_s * 1e6 / .events_received | round) / 1000
        | .pg_ms_per_event = (.pg_cpu_s * 1e6 / .events_received | round) / 1000
      else . end
  else . end)' "$RESULTS/client.json" | tee "$RESULTS/summary.json"
conn_bench_machine_summary
