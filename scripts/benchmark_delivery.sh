#!/usr/bin/env bash
# What delivering costs: deliveries per second to one shared inbox and to
# 100 distinct inboxes on loopback, eunha CPU per delivery (signing runs on
# the CPU pool, so the process's CPU counts it), and eunha's memory with
# 10,000 deliveries queued.
#
# One Release eunha, its own PostgreSQL and Redis, and eunha-apsink
# (tools/apsink) playing the remote servers: it answers every POST with 202
# and counts them. The deliveries are ap_deliver jobs inserted by SQL (a
# Create of a ~500-character Note each, signed by a local account), so what
# is measured is delivery alone: claim, sign on the CPU pool, POST, record.
#
#   1. shared: SHARED_JOBS (default 3000) deliveries to one shared inbox
#      (one host: the fetch client's per-host cap of 8 applies).
#   2. distinct: DISTINCT_JOBS (default 5000) spread over 100 hosts
#      (127.0.0.1:PORT+i).
#   3. scenario (issue 33): u1 gets SCENARIO_FOLLOWERS (default 10,000)
#      remote followers on SCENARIO_HOSTS (default 2,000) hosts, those of
#      a host sharing its inbox, and SCENARIO_LOCAL (default 10,000) local
#      followers whose home feeds are in Redis (built, as an active user's
#      is), then posts through the API: the time from the POST until every
#      one of those home feeds has the status, and until every host has been
#      sent the Create, and eunha's CPU per delivery over it (the post and
#      the feeds included). EUNHA_BENCH_SCENARIO_HOSTS=0 skips it.
#   4. queued: the sink is stopped; 10,000 deliveries are queued; once each
#      has made its first (refused) attempt and waits for its retry, eunha's
#      RSS and private memory are read against the figure before, with the
#      jobs table's size.
#
# Rate is deliveries counted at the sink over the span from the first to the
# last. CPU per delivery is eunha's CPU (utime + stime, the CPU pool's
# signing included) over the phase divided by its deliveries.
#
# Builds into build-bench/ (BENCH_BUILD=DIR; BENCH_SKIP_BUILD=1 to reuse).
# Raw output: benchmark-results/delivery-DATE/ (git-ignored).
set -euo pipefail

SHARED_JOBS=${EUNHA_BENCH_SHARED_JOBS:-3000}
DISTINCT_JOBS=${EUNHA_BENCH_DISTINCT_JOBS:-5000}
QUEUED=${EUNHA_BENCH_QUEUED:-10000}
SCENARIO_FOLLOWERS=${EUNHA_BENCH_SCENARIO_FOLLOWERS:-10000}
SCENARIO_HOSTS=${EUNHA_BENCH_SCENARIO_HOSTS:-2000}
SCENARIO_LOCAL=${EUNHA_BENCH_SCENARIO_LOCAL:-10000}
HOSTS=100

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/lib/services.sh
. "$ROOT/scripts/lib/services.sh"
# shellcheck source=scripts/lib/bench.sh
. "$ROOT/scripts/lib/bench.sh"

bench_require_cmd jq jq
bench_build eunha eunha-loadgen eunha-apsink
SINK_BIN=$BENCH_BUILD/eunha-apsink
RESULTS=$(bench_results_dir delivery)
TMP=$(bench_make_tmp eunha-bench-delivery)
PG_PORT=$(eu_free_port)
REDIS_PORT=$(eu_free_port "$PG_PORT")
# The sink's ports sit below the ephemeral range (32768 and up on Linux),
# where eunha's own listeners and every client socket take theirs; a base is
# picked at random and another tried if any of its ports is taken.
SINK_PORT=
DB=eunha_bench_delivery
SINK_PID=

bench_cleanup_hook() {
  [ -z "$SINK_PID" ] || kill "$SINK_PID" 2>/dev/null || true
}
bench_trap_cleanup

sink_start() {
  local stats=$1 nports=$2 try i
  for ((try = 0; try < 10; try++)); do
    [ -n "$SINK_PORT" ] || SINK_PORT=$((20000 + RANDOM % 120 * 100))
    rm -f "$stats"
    "$SINK_BIN" "$SINK_PORT" "$stats" 0 "$nports" >>"$TMP/sink.log" 2>&1 &
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
sink_stop() {
  [ -n "$SINK_PID" ] || return 0
  kill "$SINK_PID" 2>/dev/null || true
  wait "$SINK_PID" 2>/dev/null || true
  SINK_PID=
}

eu_pg_start "$TMP/pg" "$PG_PORT" >/dev/null
eu_redis_start "$TMP/redis" "$REDIS_PORT" >/dev/null
bench_admin_token
CONTROL_URL="postgresql://postgres@127.0.0.1:$PG_PORT/$DB"
PLACEMENT_URL="postgresql://postgres@127.0.0.1:$PG_PORT/${DB}_main"

{
  bench_base_toml "$CONTROL_URL" "$DB" "$REDIS_PORT" "eunha-bench-delivery-$$"
  cat <<EOF
[federation]
allow_http = true
allow_private_addresses = true
EOF
} >"$RESULTS/eunha.toml"
: >"$TMP/eunha.log"
bench_eunha_start "$RESULTS/eunha.toml" "$TMP"
DOMAIN=deliver.example
bench_admin POST /admin/v1/tenants "{\"domain\":\"$DOMAIN\",\"title\":\"Delivery\"}" >/dev/null
bench_seed_tenant "$DOMAIN" 2 "$TMP/tokens"
TENANT_ID=$(bench_psql "$CONTROL_URL" "SELECT id FROM tenants WHERE domain = '$DOMAIN'")
U1=$(awk 'NR == 1 { print $3 }' "$TMP/tokens")

# enqueue_jobs N HOSTS PATH : N ap_deliver jobs signed by u1, spread over
# HOSTS sink ports, each a Create of a ~500-character public Note (about the
# size of a real one). They go in by SQL, so posting and fan-out are not
# measured; an admin-API job on the deliver queue then wakes the worker.
enqueue_jobs() {
  local n=$1 hosts=$2
  bench_psql "$PLACEMENT_URL" "
    INSERT INTO jobs (tenant_id, queue, kind, payload)
    SELECT $TENANT_ID, 'deliver', 'ap_deliver', jsonb_build_object(
      'inbox', 'http://127.0.0.1:' || ($SINK_PORT + g % $hosts) || '$3',
      'actor_id', '$U1',
      'activity', jsonb_build_object(
        '@context', 'https://www.w3.org/ns/activitystreams',
        'id', 'http://$DOMAIN/users/u1/statuses/' || g || '/activity',
        'type', 'Create', 'actor', 'http://$DOMAIN/users/u1',
        'to', jsonb_build_array('https://www.w3.org/ns/activitystreams#Public'),
        'cc', jsonb_build_array('http://$DOMAIN/users/u1/followers'),
        'object', jsonb_build_object('id', 'http://$DOMAIN/users/u1/statuses/' || g,
          'type', 'Note', 'attributedTo', 'http://$DOMAIN/users/u1',
          'content', '<p>' || repeat('benchmark delivery ', 26) || g || '</p>',
          'published', now())))
    FROM generate_series(1, $n) g" >/dev/null
  bench_admin POST "/admin/v1/tenants/$DOMAIN/jobs" "{\"kind\":\"ap_deliver\",\"payload\":{\"inbox\":\"http://127.0.0.1:$SINK_PORT$3\",\"actor_id\":\"$U1\",\"activity\":{\"type\":\"Note\"}}}" >/dev/null
}

queued_jobs() {
  bench_psql "$PLACEMENT_URL" "SELECT count(*) FROM jobs WHERE tenant_id = $TENANT_ID AND kind = 'ap_deliver'"
}

# run_phase NAME JOBS HOSTS PATH : queues the jobs, waits until the sink
# counted them all (or 600 s), prints a JSON line.
run_phase() {
  # The sink's stats file: "posts first_ms last_ms bytes".
  local name=$1 jobs=$2 hosts=$3 path=$4 stats=$TMP/sink-$1.stats
  local cpu0 cpu1 n first last i expected=$(($2 + 1)) hz
  sink_start "$stats" "$HOSTS"
  cpu0=$(bench_cpu_ticks "$EUNHA_PID")
  enqueue_jobs "$jobs" "$hosts" "$path"
  for ((i = 0; i < 6000; i++)); do
    read -r n first last _ <"$stats"
    [ "$n" -ge "$expected" ] && break
    sleep 0.1
  done
  cpu1=$(bench_cpu_ticks "$EUNHA_PID")
  sink_stop
  read -r n first last _ <"$stats"
  local span=$((last > first ? last - first : 1))
  hz=$(getconf CLK_TCK)
  jq -n --arg name "$name" --argjson expected "$expected" --argjson hosts "$hosts" \
    --argjson delivered "$n" --argjson span_ms "$span" \
    --argjson cpu_ms "$(((cpu1 - cpu0) * 1000 / hz))" --argjson left "$(queued_jobs)" \
    '{phase: $name, hosts: $hosts, expected: $expected, delivered: $delivered,
      seconds: ($span_ms / 1000), deliveries_per_s: (($delivered * 1000 / $span_ms) | floor),
      eunha_cpu_ms_per_delivery: ((($cpu_ms / $delivered) * 1000 | floor) / 1000),
      jobs_left: $left}'
}

sink_start "$TMP/probe.stats" "$HOSTS" # fixes SINK_PORT
sink_stop
run_phase shared "$SHARED_JOBS" 1 /inbox | tee "$RESULTS/shared.json"
run_phase distinct "$DISTINCT_JOBS" "$HOSTS" /users/f/inbox | tee "$RESULTS/distinct.json"

# scenario: one post to SCENARIO_FOLLOWERS remote followers on
# SCENARIO_HOSTS hosts. The sink takes a base of its own that leaves room
# for all its ports below the ephemeral range.
if [ "$SCENARIO_HOSTS" -gt 0 ]; then
  TOKEN1=$(awk 'NR == 1 { print $2 }' "$TMP/tokens")
  bench_psql "$PLACEMENT_URL" "
    WITH a AS (INSERT INTO accounts (tenant_id, username, domain, uri, inbox_url,
      shared_inbox_url, followers_url, featured_url, public_key)
      SELECT $TENANT_ID, 'f' || g, 'h' || (g % $SCENARIO_HOSTS) || '.example',
        'http://127.0.0.1:PORT' || (g % $SCENARIO_HOSTS) || '/users/f' || g,
        'http://127.0.0.1:PORT' || (g % $SCENARIO_HOSTS) || '/users/f' || g || '/inbox',
        'http://127.0.0.1:PORT' || (g % $SCENARIO_HOSTS) || '/inbox',
        'http://127.0.0.1:PORT' || (g % $SCENARIO_HOSTS) || '/users/f' || g || '/followers',
        'http://127.0.0.1:PORT' || (g % $SCENARIO_HOSTS) || '/users/f' || g || '/featured',
        '-----BEGIN PUBLIC KEY-----'
      FROM generate_series(1, $SCENARIO_FOLLOWERS) g RETURNING id)
    INSERT INTO follows (tenant_id, account_id, target_account_id)
    SELECT $TENANT_ID, a.id, $U1 FROM a" >/dev/null
  for ((try = 0; try < 10; try++)); do
    SINK_PORT=$((20000 + RANDOM % 100 * 100))
    stats=$TMP/sink-scenario.stats
    rm -f "$stats"
    "$SINK_BIN" "$SINK_PORT" "$stats" 0 "$SCENARIO_HOSTS" >>"$TMP/sink.log" 2>&1 &
    SINK_PID=$!
    for ((i = 0; i < 100; i++)); do
      [ -s "$stats" ] && break
      kill -0 "$SINK_PID" 2>/dev/null || break
      sleep 0.1
    done
    [ -s "$stats" ] && break
    sink_stop
  done
  [ -s "$stats" ] || eu_die "eunha-apsink did not start for the scenario"
  # Each host's URLs name its port now that the sink has them.
  bench_psql "$PLACEMENT_URL" "
    UPDATE accounts SET uri = replace(uri, 'PORT', ''), inbox_url = replace(inbox_url, 'PORT', ''),
      shared_inbox_url = replace(shared_inbox_url, 'PORT', ''),
      followers_url = replace(followers_url, 'PORT', ''), featured_url = replace(featured_url, 'PORT', '')
    WHERE tenant_id = $TENANT_ID AND domain LIKE 'h%.example'" >/dev/null
  bench_psql "$PLACEMENT_URL" "
    UPDATE accounts SET uri = regexp_replace(uri, ':(\d+)/', ':' || ($SINK_PORT + substring(uri FROM ':(\d+)/')::int) || '/'),
      inbox_url = regexp_replace(inbox_url, ':(\d+)/', ':' || ($SINK_PORT + substring(inbox_url FROM ':(\d+)/')::int) || '/'),
      shared_inbox_url = regexp_replace(shared_inbox_url, ':(\d+)/', ':' || ($SINK_PORT + substring(shared_inbox_url FROM ':(\d+)/')::int) || '/')
    WHERE tenant_id = $TENANT_ID AND domain LIKE 'h%.example'" >/dev/null
  # The local followers, each with a home feed in Redis under the key u1's
  # own reading makes (a feed that exists is what fan-out writes to).
  bench_psql "$PLACEMENT_URL" "
    WITH a AS (INSERT INTO accounts (tenant_id, username)
      SELECT $TENANT_ID, 'l' || g FROM generate_series(1, $SCENARIO_LOCAL) g RETURNING id)
    INSERT INTO follows (tenant_id, account_id, target_account_id)
    SELECT $TENANT_ID, a.id, $U1 FROM a" >/dev/null
  bench_psql "$PLACEMENT_URL" "ANALYZE" >/dev/null
  bench_api GET "$DOMAIN" /api/v1/timelines/home "$TOKEN1" >/dev/null
  feed_key=$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" --scan --pattern "*feed:home:$U1" | head -n 1)
  [ -n "$feed_key" ] || eu_die "no home feed key for u1 in Redis"
  feed_prefix=${feed_key%"$U1"}
  bench_psql "$PLACEMENT_URL" "SELECT id FROM accounts WHERE tenant_id = $TENANT_ID
      AND domain IS NULL AND username LIKE 'l%'" |
    awk -v p="$feed_prefix" '{ print "ZADD " p $1 " 0 0" }' |
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" >/dev/null
  feeds_with() {
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" EVAL "local n = 0
      for _, k in ipairs(redis.call('KEYS', ARGV[1] .. '*')) do
        if redis.call('ZSCORE', k, ARGV[2]) then n = n + 1 end
      end return n" 0 "$feed_prefix" "$1"
  }
  cpu0=$(bench_cpu_ticks "$EUNHA_PID")
  t0=$(date +%s%3N)
  sid=$(bench_api POST "$DOMAIN" /api/v1/statuses "$TOKEN1" \
    --data-urlencode "status=$(printf 'scenario %.0s' $(seq 1 50))" | jq -r .id)
  feeds_ms=
  for ((i = 0; i < 12000; i++)); do
    if [ -z "$feeds_ms" ] && [ "$(feeds_with "$sid")" -ge $((SCENARIO_LOCAL + 1)) ]; then
      feeds_ms=$(($(date +%s%3N) - t0))
    fi
    read -r n first last _ <"$stats"
    [ "$n" -ge "$SCENARIO_HOSTS" ] && [ -n "$feeds_ms" ] && break
    sleep 0.05
  done
  cpu1=$(bench_cpu_ticks "$EUNHA_PID")
  sink_stop
  read -r n first last _ <"$stats"
  hz=$(getconf CLK_TCK)
  jq -n --argjson followers "$SCENARIO_FOLLOWERS" --argjson hosts "$SCENARIO_HOSTS" \
    --argjson local "$SCENARIO_LOCAL" --argjson feeds "$(feeds_with "$sid")" \
    --argjson feeds_ms "${feeds_ms:-null}" \
    --argjson delivered "$n" --argjson ms "$((last - t0))" \
    --argjson cpu_ms "$(((cpu1 - cpu0) * 1000 / hz))" --argjson left "$(queued_jobs)" \
    '{phase: "scenario", remote_followers: $followers, hosts: $hosts, delivered: $delivered,
      local_followers: $local, home_feeds_with_it: $feeds,
      seconds_until_every_home_feed: (if $feeds_ms == null then null else $feeds_ms / 1000 end),
      seconds_until_every_host: ($ms / 1000),
      eunha_cpu_ms_per_delivery: ((($cpu_ms / ([$delivered, 1] | max)) * 1000 | floor) / 1000),
      jobs_left: $left}' | tee "$RESULTS/scenario.json"
fi

# Queued: nothing listens on the sink's ports now, so every delivery's first
# attempt is refused and the job waits for its retry.
read -r rss0 priv0 < <(bench_mem_kib "$EUNHA_PID")
enqueue_jobs "$QUEUED" "$HOSTS" /users/f/inbox
want=$QUEUED
for ((i = 0; i < 1200; i++)); do
  tried=$(bench_psql "$PLACEMENT_URL" "SELECT count(*) FROM jobs WHERE tenant_id = $TENANT_ID
    AND kind = 'ap_deliver' AND attempts >= 1")
  [ "$tried" -ge "$want" ] && break
  sleep 0.5
done
read -r rss1 priv1 < <(bench_mem_kib "$EUNHA_PID")
jobs_bytes=$(bench_psql "$PLACEMENT_URL" "SELECT pg_total_relation_size('jobs')")
jq -n --argjson queued "$(queued_jobs)" --argjson tried "$tried" --argjson rss0 "$rss0" \
  --argjson rss1 "$rss1" --argjson priv0 "$priv0" --argjson priv1 "$priv1" \
  --argjson jobs_bytes "$jobs_bytes" \
  '{phase: "queued", queued: $queued, first_attempt_done: $tried,
    eunha_rss_kib: [$rss0, $rss1], eunha_private_kib: [$priv0, $priv1],
    jobs_table_mib: (($jobs_bytes / 1048576 * 10 | floor) / 10)}' | tee "$RESULTS/queued.json"
bench_machine_summary | tee "$RESULTS/machine.md"
