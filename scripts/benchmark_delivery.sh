#!/usr/bin/env bash
# What delivering costs: deliveries per second to one shared inbox and to
# 100 distinct inboxes on loopback, eunha CPU per delivery (signing runs on
# the CPU pool, so the process's CPU counts it), and eunha's memory with
# 10,000 deliveries queued.
#
# One Release eunha, its own PostgreSQL and Redis, and eunha-apsink
# (tools/apsink) playing the remote servers: it answers every POST with 202
# and counts them. Remote followers are rows inserted by SQL (accounts with a
# domain, inbox and shared inbox on the sink, and follows rows), so the run
# measures delivery, not the follow handshake.
#
#   1. shared: FOLLOWERS (default 1000) remote followers of u1 share one
#      shared inbox; u1 posts POSTS_SHARED (default 2000) statuses; each post
#      is one delivery.
#   2. distinct: 100 remote followers of u2, each on its own host
#      (127.0.0.1:PORT+i); u2 posts POSTS_DISTINCT (default 50) statuses:
#      100 deliveries per post.
#   3. queued: the sink is stopped; u2 posts 100 statuses (10,000
#      deliveries); once every job has made its first (refused) attempt and
#      waits for its retry, eunha's RSS and private memory are read against
#      the figure before, with the jobs table's size.
#
# Rate is deliveries counted at the sink over the span from the first to the
# last one. CPU per delivery is eunha's CPU (utime + stime) over that span
# divided by its deliveries, so the posting itself (a few seconds at the
# start) is included: the post rate is printed beside it to judge.
#
# Builds into build-bench/ (BENCH_BUILD=DIR; BENCH_SKIP_BUILD=1 to reuse).
# Raw output: benchmark-results/delivery-DATE/ (git-ignored).
set -euo pipefail

FOLLOWERS=${EUNHA_BENCH_FOLLOWERS:-1000}
POSTS_SHARED=${EUNHA_BENCH_POSTS_SHARED:-2000}
POSTS_DISTINCT=${EUNHA_BENCH_POSTS_DISTINCT:-50}
HOSTS=100
QUEUED_POSTS=100

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
SINK_PORT=$(eu_free_port "$REDIS_PORT")
DB=eunha_bench_delivery
SINK_PID=

bench_cleanup_hook() {
  [ -z "$SINK_PID" ] || kill "$SINK_PID" 2>/dev/null || true
}
bench_trap_cleanup

# A port range for the sink's distinct hosts that nothing listens on: checked
# by binding them all in the sink, which fails loudly if one is taken.
sink_start() {
  local stats=$1 nports=$2
  rm -f "$stats"
  "$SINK_BIN" "$SINK_PORT" "$stats" 0 "$nports" >>"$TMP/sink.log" 2>&1 &
  SINK_PID=$!
  for ((i = 0; i < 50; i++)); do
    [ -s "$stats" ] && return 0
    sleep 0.1
  done
  eu_die "eunha-apsink did not start (log: $TMP/sink.log)"
}
sink_stop() {
  [ -n "$SINK_PID" ] || return 0
  kill "$SINK_PID" 2>/dev/null || true
  wait "$SINK_PID" 2>/dev/null || true
  SINK_PID=
}
# "posts first_ms last_ms bytes"
sink_stats() { cat "$1"; }

eu_pg_start "$TMP/pg" "$PG_PORT" >/dev/null
eu_redis_start "$TMP/redis" "$REDIS_PORT" >/dev/null
bench_admin_token
CONTROL_URL="postgresql://postgres@127.0.0.1:$PG_PORT/$DB"
PLACEMENT_URL="postgresql://postgres@127.0.0.1:$PG_PORT/${DB}_main"

cat >"$RESULTS/eunha.toml" <<EOF
[server]
listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
scheme = "http"
cpu_threads = 2

[admin]
token_file = "$TMP/admin_token"

[database]
url = "$CONTROL_URL"
template = "${DB}_template"

[redis]
url = "redis://127.0.0.1:$REDIS_PORT/0"
prefix = "eunha-bench-delivery-$$"

[limits]
api_requests_per_5min = 0

[federation]
allow_http = true
allow_private_addresses = true

[log]
level = "warn"
EOF
: >"$TMP/eunha.log"
bench_eunha_start "$RESULTS/eunha.toml" "$TMP"
DOMAIN=deliver.example
bench_admin POST /admin/v1/tenants "{\"domain\":\"$DOMAIN\",\"title\":\"Delivery\"}" >/dev/null
bench_seed_tenant "$DOMAIN" 2 "$TMP/tokens"
TENANT_ID=$(bench_psql "$CONTROL_URL" "SELECT id FROM tenants WHERE domain = '$DOMAIN'")
U1=$(awk 'NR == 1 { print $3 }' "$TMP/tokens")
U2=$(awk 'NR == 2 { print $3 }' "$TMP/tokens")
awk 'NR == 1' "$TMP/tokens" >"$TMP/u1.tokens"
awk 'NR == 2' "$TMP/tokens" >"$TMP/u2.tokens"

# add_followers TARGET N HOSTS : N remote accounts following TARGET, spread
# over HOSTS sink ports (1: all on one host, sharing its shared inbox).
add_followers() {
  local target=$1 n=$2 hosts=$3 tag=$4
  bench_psql "$PLACEMENT_URL" "
    WITH r AS (
      INSERT INTO accounts (tenant_id, username, domain, uri, url, inbox_url, shared_inbox_url)
      SELECT $TENANT_ID, 'f$tag' || g, '127.0.0.1:' || ($SINK_PORT + g % $hosts),
        'http://127.0.0.1:' || ($SINK_PORT + g % $hosts) || '/users/f$tag' || g,
        'http://127.0.0.1:' || ($SINK_PORT + g % $hosts) || '/@f$tag' || g,
        'http://127.0.0.1:' || ($SINK_PORT + g % $hosts) || '/users/f$tag' || g || '/inbox',
        'http://127.0.0.1:' || ($SINK_PORT + g % $hosts) || '/inbox'
      FROM generate_series(1, $n) g RETURNING id)
    INSERT INTO follows (tenant_id, account_id, target_account_id)
    SELECT $TENANT_ID, r.id, $target FROM r" >/dev/null
}

queued_jobs() {
  bench_psql "$PLACEMENT_URL" "SELECT count(*) FROM jobs WHERE tenant_id = $TENANT_ID AND kind = 'ap_deliver'"
}

# run_phase NAME TOKENS POSTS EXPECTED : posts, waits until the sink counted
# EXPECTED deliveries (or 600 s), prints a JSON line.
run_phase() {
  local name=$1 tokens=$2 posts=$3 expected=$4 stats=$TMP/sink-$1.stats
  local cpu0 cpu1 t0 t1 s n first last i post_ms
  sink_start "$stats" "$HOSTS"
  cpu0=$(bench_cpu_ticks "$EUNHA_PID")
  t0=$(date +%s%3N)
  bench_seed_statuses "$tokens" "$posts" "$TMP"
  post_ms=$(($(date +%s%3N) - t0))
  for ((i = 0; i < 6000; i++)); do
    read -r n first last _ <"$stats"
    [ "$n" -ge "$expected" ] && break
    sleep 0.1
  done
  cpu1=$(bench_cpu_ticks "$EUNHA_PID")
  t1=$(date +%s%3N)
  sink_stop
  read -r n first last _ <"$stats"
  local span=$((last > first ? last - first : 1)) hz
  hz=$(getconf CLK_TCK)
  jq -n --arg name "$name" --argjson posts "$posts" --argjson expected "$expected" \
    --argjson delivered "$n" --argjson span_ms "$span" --argjson post_ms "$post_ms" \
    --argjson cpu_ms "$(((cpu1 - cpu0) * 1000 / hz))" --argjson wall_ms "$((t1 - t0))" \
    --argjson left "$(queued_jobs)" \
    '{phase: $name, posts: $posts, expected: $expected, delivered: $delivered,
      deliveries_per_s: (($delivered * 1000 / $span_ms) | floor),
      post_seconds: ($post_ms / 1000), eunha_cpu_ms_per_delivery: ((($cpu_ms / $delivered) * 1000 | floor) / 1000),
      jobs_left: $left}'
}

add_followers "$U1" "$FOLLOWERS" 1 s
run_phase shared "$TMP/u1.tokens" "$POSTS_SHARED" "$POSTS_SHARED" | tee "$RESULTS/shared.json"
add_followers "$U2" "$HOSTS" "$HOSTS" d
run_phase distinct "$TMP/u2.tokens" "$POSTS_DISTINCT" "$((POSTS_DISTINCT * HOSTS))" | tee "$RESULTS/distinct.json"

# Queued: nothing listens on the sink's ports now, so every delivery's first
# attempt is refused and the job waits for its retry.
read -r rss0 priv0 < <(bench_mem_kib "$EUNHA_PID")
bench_seed_statuses "$TMP/u2.tokens" "$QUEUED_POSTS" "$TMP"
want=$((QUEUED_POSTS * HOSTS))
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
