#!/usr/bin/env bash
# What Web Push costs: pushes delivered per second and eunha CPU per push
# when one status reaches 1,000 users who each have a push subscription.
#
# One Release eunha, its own PostgreSQL and Redis, and eunha-apsink
# (tools/apsink) playing the push service: it answers every POST with 202
# and counts them. u1 is seeded through the API; USERS (default 1000) more
# users are inserted by SQL, each following u1 with notify on (a bell) and
# holding a token with a subscription (alerts.status on, aes128gcm) whose
# endpoint is the sink. A status's 500 characters hold far fewer than 1,000
# mentions, so the bell stands in for them: each post makes one "status"
# notification per follower through eu_notify, the path a mention takes,
# and so one web_push job each. ROUNDS (default 3) statuses are posted.
#
# Rate is pushes counted at the sink over the span from the first to the
# last. CPU per push is eunha's CPU (utime + stime, the CPU pool's
# encryption and signing included) from the first post until the sink has
# them all, divided by the pushes: it includes writing the notifications
# and queueing the jobs.
#
# Builds into build-bench/ (BENCH_BUILD=DIR; BENCH_SKIP_BUILD=1 to reuse).
# Raw output: benchmark-results/push-DATE/ (git-ignored).
set -euo pipefail

USERS=${EUNHA_BENCH_PUSH_USERS:-1000}
ROUNDS=${EUNHA_BENCH_PUSH_ROUNDS:-3}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/lib/services.sh
. "$ROOT/scripts/lib/services.sh"
# shellcheck source=scripts/lib/bench.sh
. "$ROOT/scripts/lib/bench.sh"

bench_require_cmd jq jq
bench_build eunha eunha-apsink
SINK_BIN=$BENCH_BUILD/eunha-apsink
RESULTS=$(bench_results_dir push)
TMP=$(bench_make_tmp eunha-bench-push)
PG_PORT=$(eu_free_port)
REDIS_PORT=$(eu_free_port "$PG_PORT")
SINK_PORT=
DB=eunha_bench_push
SINK_PID=

bench_cleanup_hook() {
  [ -z "$SINK_PID" ] || kill "$SINK_PID" 2>/dev/null || true
}
bench_trap_cleanup

sink_start() {
  local stats=$1 try i
  for ((try = 0; try < 10; try++)); do
    [ -n "$SINK_PORT" ] || SINK_PORT=$((20000 + RANDOM % 120 * 100))
    rm -f "$stats"
    "$SINK_BIN" "$SINK_PORT" "$stats" 0 1 >>"$TMP/sink.log" 2>&1 &
    SINK_PID=$!
    for ((i = 0; i < 50; i++)); do
      [ -s "$stats" ] && return 0
      kill -0 "$SINK_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill "$SINK_PID" 2>/dev/null || true
    wait "$SINK_PID" 2>/dev/null || true
    SINK_PID=
    SINK_PORT=
  done
  eu_die "eunha-apsink did not start (log: $TMP/sink.log)"
}

eu_pg_start "$TMP/pg" "$PG_PORT" >/dev/null
eu_redis_start "$TMP/redis" "$REDIS_PORT" >/dev/null
bench_admin_token
CONTROL_URL="postgresql://postgres@127.0.0.1:$PG_PORT/$DB"
PLACEMENT_URL="postgresql://postgres@127.0.0.1:$PG_PORT/${DB}_main"

{
  bench_base_toml "$CONTROL_URL" "$DB" "$REDIS_PORT" "eunha-bench-push-$$"
  cat <<EOF
[federation]
allow_http = true
allow_private_addresses = true
EOF
} >"$RESULTS/eunha.toml"
: >"$TMP/eunha.log"
bench_eunha_start "$RESULTS/eunha.toml" "$TMP"
DOMAIN=push.example
bench_admin POST /admin/v1/tenants "{\"domain\":\"$DOMAIN\",\"title\":\"Push\"}" >/dev/null
bench_seed_tenant "$DOMAIN" 1 "$TMP/tokens"
TENANT_ID=$(bench_psql "$CONTROL_URL" "SELECT id FROM tenants WHERE domain = '$DOMAIN'")
TOKEN=$(awk 'NR == 1 { print $2 }' "$TMP/tokens")
U1=$(awk 'NR == 1 { print $3 }' "$TMP/tokens")
# Makes the tenant's VAPID key, as a client's first look at the instance does.
bench_api GET "$DOMAIN" /api/v2/instance "" >/dev/null

stats=$TMP/sink.stats
sink_start "$stats"
# A subscriber's keys: any valid P-256 point and 16-byte secret will do (the
# sink does not decrypt); RFC 8291's example ones.
P256DH=BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4
AUTH=BTBZMqHH6r4Tts7J_aSIgg
bench_psql "$PLACEMENT_URL" "
  WITH a AS (INSERT INTO accounts (tenant_id, username)
    SELECT $TENANT_ID, 'p' || g FROM generate_series(1, $USERS) g RETURNING id, username),
  u AS (INSERT INTO users (tenant_id, account_id, email, encrypted_password, confirmed_at)
    SELECT $TENANT_ID, a.id, a.username || '@$DOMAIN', 'x', now() FROM a
    RETURNING id, account_id, email),
  t AS (INSERT INTO oauth_access_tokens (tenant_id, user_id, token_hash, scopes)
    SELECT $TENANT_ID, u.id, md5(u.email), 'read push' FROM u RETURNING id, user_id),
  f AS (INSERT INTO follows (tenant_id, account_id, target_account_id, notify)
    SELECT $TENANT_ID, a.id, $U1, true FROM a)
  INSERT INTO web_push_subscriptions (tenant_id, access_token_id, user_id, account_id,
    access_token, endpoint, key_p256dh, key_auth, alerts, policy, standard)
  SELECT $TENANT_ID, t.id, u.id, u.account_id, md5(u.email),
    'http://127.0.0.1:$SINK_PORT/push/' || u.id, '$P256DH', '$AUTH',
    '{\"status\": true, \"mention\": true}', 'all', true
  FROM t JOIN u ON u.id = t.user_id" >/dev/null

expected=$((USERS * ROUNDS))
cpu0=$(bench_cpu_ticks "$EUNHA_PID")
for ((r = 1; r <= ROUNDS; r++)); do
  bench_api POST "$DOMAIN" /api/v1/statuses "$TOKEN" --data-urlencode "status=push round $r" >/dev/null
done
# Until the sink has them all, or nothing is left to come: no web_push job
# waits and the count stood still for 5 s (a notification whose statement
# found no connection in time is lost, and with it its push).
still=0
prev=-1
for ((i = 0; i < 6000; i++)); do
  read -r n first last _ <"$stats"
  [ "$n" -ge "$expected" ] && break
  if [ "$n" = "$prev" ]; then still=$((still + 1)); else still=0; fi
  prev=$n
  if [ "$still" -ge 50 ] && [ "$(bench_psql "$PLACEMENT_URL" "SELECT count(*) FROM jobs
    WHERE tenant_id = $TENANT_ID AND kind = 'web_push'")" = 0 ]; then
    break
  fi
  sleep 0.1
done
cpu1=$(bench_cpu_ticks "$EUNHA_PID")
kill "$SINK_PID" 2>/dev/null || true
wait "$SINK_PID" 2>/dev/null || true
SINK_PID=
read -r n first last _ <"$stats"
span=$((last > first ? last - first : 1))
hz=$(getconf CLK_TCK)
left=$(bench_psql "$PLACEMENT_URL" "SELECT count(*) FROM jobs WHERE tenant_id = $TENANT_ID
  AND kind = 'web_push'")
jq -n --argjson users "$USERS" --argjson rounds "$ROUNDS" --argjson expected "$expected" \
  --argjson delivered "$n" --argjson span_ms "$span" \
  --argjson cpu_ms "$(((cpu1 - cpu0) * 1000 / hz))" --argjson left "$left" \
  '{subscribers: $users, statuses: $rounds, expected: $expected, delivered: $delivered,
    seconds: ($span_ms / 1000), pushes_per_s: (($delivered * 1000 / $span_ms) | floor),
    eunha_cpu_ms_per_push: ((($cpu_ms / ([$delivered, 1] | max)) * 1000 | floor) / 1000),
    jobs_left: $left}' | tee "$RESULTS/push.json"
bench_machine_summary | tee "$RESULTS/machine.md"
