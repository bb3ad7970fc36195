#!/usr/bin/env bash
# Measures one small instance: a ten-user tenant on one eunha process, under a
# hot, read-heavy Mastodon API mix (home and public timelines, notifications,
# account reads, 5% status writes) from eunha-loadgen in closed loop. Repeated
# for each tenant pool size (the most placement connections the tenant
# borrows at once), each with fresh databases, to find the pool size past
# which more connections buy nothing.
#
# Layout: the pooled default. The tenant lives in the placement database
# <control database>_main, which keeps [database] placement_connections open
# (at least the pool size, so the largest pool is not capped by it); creating
# the tenant is one control row. "Create" is that admin POST's time, and
# "Tenant on disk" the growth of the placement and control databases from
# before the tenant was created to after seeding (no VACUUM, so dead rows
# left by seeding count).
#
# It builds Release binaries into build-bench/ (BENCH_BUILD=DIR for another
# directory), starts a private PostgreSQL
# cluster and Redis server on free 127.0.0.1 ports (Redis keys under a
# per-run prefix), and removes all of it on exit, Ctrl-C included. Raw output
# goes to benchmark-results/small-DATE/ (git-ignored); the table is appended
# to benchmark-results/README.md.
#
# Knobs (environment):
#   EUNHA_BENCH_SECONDS=20        measured seconds per pool size
#   EUNHA_BENCH_WARMUP=5          seconds of load before measuring (not counted)
#   EUNHA_BENCH_CONCURRENCY=8     closed-loop clients
#   EUNHA_BENCH_POOLS="1 2 3 5"   pool sizes; each gets its own temporary databases
#   EUNHA_BENCH_PLACEMENT_CONNECTIONS   [database] placement_connections (default:
#                                 the larger of 4, the default, and the pool size)
#   EUNHA_BENCH_USERS=10          users in the tenant, all following each other
#   EUNHA_BENCH_STATUSES=300      statuses posted before measuring
#   EUNHA_BENCH_IDLE_SECONDS=10   quiet time before the idle memory sample
#   EUNHA_BENCH_MIX               loadgen --mix (default: the loadgen's read-heavy mix)
#   EUNHA_BENCH_POST_FORMAT=json  json or form bodies for POST /api/v1/statuses
#   EUNHA_BENCH_SAMPLE_SECONDS=0.2  how often memory and connections are sampled
#   EUNHA_BENCH_NO_README=1       do not append to benchmark-results/README.md
#   BENCH_BUILD=DIR               build directory (default build-bench/)
#   EUNHA_BENCH_USERS=0 with EUNHA_BENCH_MIX=instance is a smoke test that needs
#   none of the client API.
#
# What the columns mean, and the traps:
# - Peak active DB: the placement's connections seen running a query at once;
#   with one tenant they are all its own (or its queue worker's).
# - Memory: RSS counts the shared binary and libraries; "private" is
#   Private_Clean + Private_Dirty from /proc/PID/smaps_rollup, what this
#   process alone costs. Peak values are sampled, so a spike between samples
#   can be missed; VmHWM (peak RSS, exact) is kept in the raw files.
# - CPU per request divides the process's CPU time over the measured run by
#   the requests answered in it. Warm-up is a separate loadgen run so that its
#   CPU is not counted against the measured requests. PostgreSQL's CPU
#   includes backends that exited (the postmaster's cutime).
# - The load generator runs on the same machine and competes for its CPUs;
#   its own CPU time is in the raw report. On a machine with few cores, read
#   the absolute numbers with that in mind.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/lib/services.sh
. "$ROOT/scripts/lib/services.sh"
# shellcheck source=scripts/lib/bench.sh
. "$ROOT/scripts/lib/bench.sh"

SECONDS_=${EUNHA_BENCH_SECONDS:-20}
WARMUP=${EUNHA_BENCH_WARMUP:-5}
CONCURRENCY=${EUNHA_BENCH_CONCURRENCY:-8}
POOLS=${EUNHA_BENCH_POOLS:-"1 2 3 5"}
USERS=${EUNHA_BENCH_USERS:-10}
STATUSES=${EUNHA_BENCH_STATUSES:-300}
IDLE_SECONDS=${EUNHA_BENCH_IDLE_SECONDS:-10}
MIX=${EUNHA_BENCH_MIX:-}
POST_FORMAT=${EUNHA_BENCH_POST_FORMAT:-json}
SAMPLE=${EUNHA_BENCH_SAMPLE_SECONDS:-0.2}
PLACEMENT_CONNECTIONS=${EUNHA_BENCH_PLACEMENT_CONNECTIONS:-}
DOMAIN=small.bench.test

if [ "$USERS" = 0 ] && [ -z "$MIX" ]; then
  eu_die "EUNHA_BENCH_USERS=0 leaves no tokens: set EUNHA_BENCH_MIX too (e.g. instance)"
  exit 2
fi

eu_install_deps
bench_require_cmd jq jq
bench_build

RESULTS=$(bench_results_dir small)
TMP=$(bench_make_tmp eunha-bench-small)
PG_PORT=$(eu_free_port)
REDIS_PORT=$(eu_free_port "$PG_PORT")
PG_URL="postgresql://postgres@127.0.0.1:$PG_PORT/postgres"
SAMPLER_PIDS=()
CURRENT_DB=

stop_samplers() {
  local p
  for p in "${SAMPLER_PIDS[@]}"; do
    kill "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  SAMPLER_PIDS=()
}

# Drops the control database of one pool size and the databases named after
# it: its placement (_main), its template and any dedicated placement (_pN).
drop_databases() {
  local prefix=$1 db
  for db in $(bench_psql "$PG_URL" "SELECT datname FROM pg_database WHERE datname = '$prefix' OR left(datname, length('$prefix') + 1) = '${prefix}_'" 2>/dev/null); do
    bench_psql "$PG_URL" "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || true
  done
}

# shellcheck disable=SC2317 # invoked through traps
cleanup() {
  local rc=$?
  trap - INT TERM EXIT
  stop_samplers
  bench_eunha_stop
  [ -n "$CURRENT_DB" ] && drop_databases "$CURRENT_DB"
  eu_pg_stop "$TMP/pg" || true
  eu_redis_stop "$TMP/redis" || true
  [ -f "$TMP/eunha.log" ] && cp "$TMP/eunha.log" "$RESULTS/" 2>/dev/null
  rm -rf "$TMP"
  [ "$rc" = 0 ] || eu_log "failed; raw output in $RESULTS"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

eu_pg_start "$TMP/pg" "$PG_PORT" >/dev/null
eu_redis_start "$TMP/redis" "$REDIS_PORT" >/dev/null
BENCH_ADMIN_TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
printf '%s\n' "$BENCH_ADMIN_TOKEN" >"$TMP/admin_token"
chmod 600 "$TMP/admin_token"
TCK=$(bench_clk_tck)

# Samples eunha's memory and the tenant's database connections until killed:
# "t rss_kib private_kib" lines to FILE, and the highest VmHWM.
sample_memory() {
  local pid=$1 out=$2 m
  while kill -0 "$pid" 2>/dev/null; do
    m=$(bench_mem_kib "$pid") || break
    echo "$m" >>"$out"
    sleep "$SAMPLE"
  done
}

# One psql session re-running the query (\watch) rather than a new connection
# per sample, so sampling costs PostgreSQL next to nothing. Counts the
# connections to the placement database, where the tenant's queries run.
sample_connections() {
  local placement=$1 out=$2
  printf '%s\n' "SELECT count(*) FILTER (WHERE state <> 'idle'), count(*) FROM pg_stat_activity WHERE datname = '$placement' AND backend_type = 'client backend'" "\\watch $SAMPLE" |
    psql "$PG_URL" -X -q -At -F ' ' >"$out" 2>/dev/null
}

ROWS=()
for POOL in $POOLS; do
  case $POOL in '' | *[!0-9]*) eu_die "EUNHA_BENCH_POOLS: '$POOL' is not a number" ;; esac
  eu_log "pool $POOL: fresh database, seeding"
  DB=eunha_bench_small_p$POOL
  CURRENT_DB=$DB
  PC=${PLACEMENT_CONNECTIONS:-$((POOL > 4 ? POOL : 4))}
  CASE=$RESULTS/pool-$POOL
  mkdir -p "$CASE"
  : >"$TMP/eunha.log"
  cat >"$CASE/eunha.toml" <<EOF
[server]
listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
scheme = "http"
cpu_threads = 2

[admin]
token_file = "$TMP/admin_token"

[database]
url = "postgresql://postgres@127.0.0.1:$PG_PORT/$DB"
template = "${DB}_template"
placement_connections = $PC

[database_pool]
max_connections = $POOL
min_connections = 0
acquire_timeout_seconds = 5
idle_timeout_seconds = 20

[workers]
queue_idle_poll_seconds = 300

[redis]
url = "redis://127.0.0.1:$REDIS_PORT/0"
prefix = "eunha-bench-small-p$POOL-$$"

[limits]
# Mastodon's per-token limit (300 requests in 5 minutes) would turn the load
# into 429s; the benchmark measures serving, so the limiter is off (0).
api_requests_per_5min = 0
registrations_per_30min = 0

[log]
level = "warn"
EOF
  bench_eunha_start "$CASE/eunha.toml" "$TMP"
  # Disk before the tenant: the placement and control databases as eunha
  # made them at start.
  read -r DISK0 < <(bench_psql "$PG_URL" "SELECT $(bench_pg_db_bytes_sql "'${DB}_main'") + $(bench_pg_db_bytes_sql "'$DB'")")
  # The tenant, created through the admin API and timed by the load generator.
  "$LOADGEN_BIN" -p "$BENCH_ADMIN_PORT" -H "$DOMAIN" -m tenant -n 1 -c 1 -t 60 \
    --admin-token-file "$TMP/admin_token" --label "create $DOMAIN" -q --json "$CASE/create.json"
  if [ "$(jq -r '.status."201" // 0' "$CASE/create.json")" != 1 ]; then
    eu_die "creating $DOMAIN failed: $(jq -c '.errors_by_kind, .status' "$CASE/create.json")"
    exit 1
  fi
  CREATE_MS=$(jq -r '.latency_ms.max * 100 | round / 100' "$CASE/create.json")
  bench_admin PATCH "/admin/v1/tenants/$DOMAIN" \
    "{\"max_connections\":$POOL,\"min_connections\":0,\"idle_timeout_seconds\":20}" >/dev/null
  bench_wait_answer "$DOMAIN" 30
  TOKENS=$CASE/tokens
  : >"$TOKENS"
  chmod 600 "$TOKENS"
  if [ "$USERS" -gt 0 ]; then
    bench_seed_tenant "$DOMAIN" "$USERS" "$TOKENS"
    bench_seed_statuses "$TOKENS" "$STATUSES" "$CASE"
    TARGET=(--tokens "$TOKENS")
  else
    TARGET=(-H "$DOMAIN")
  fi
  MIXARG=()
  [ -n "$MIX" ] && MIXARG=(-m "$MIX")
  read -r DISK1 < <(bench_psql "$PG_URL" "SELECT $(bench_pg_db_bytes_sql "'${DB}_main'") + $(bench_pg_db_bytes_sql "'$DB'")")
  TENANT_DISK=$((DISK1 - DISK0))

  eu_log "pool $POOL: idle ${IDLE_SECONDS}s"
  sleep "$IDLE_SECONDS"
  read -r IDLE_RSS IDLE_PRIV < <(bench_mem_kib "$EUNHA_PID")

  if [ "$WARMUP" != 0 ]; then
    "$LOADGEN_BIN" -p "$BENCH_PUBLIC_PORT" "${TARGET[@]}" "${MIXARG[@]}" -c "$CONCURRENCY" \
      -d "$WARMUP" --post-format "$POST_FORMAT" --label "warm-up pool $POOL" -q \
      --json "$CASE/warmup.json"
  fi

  : >"$CASE/memory.samples"
  sample_memory "$EUNHA_PID" "$CASE/memory.samples" &
  SAMPLER_PIDS+=($!)
  sample_connections "${DB}_main" "$CASE/connections.samples" &
  SAMPLER_PIDS+=($!)
  E0=$(bench_cpu_ticks "$EUNHA_PID")
  P0=$(bench_pg_cpu_ticks "$TMP/pg")
  T0=$(date +%s.%N)
  eu_log "pool $POOL: ${SECONDS_}s at $CONCURRENCY clients"
  "$LOADGEN_BIN" -p "$BENCH_PUBLIC_PORT" "${TARGET[@]}" "${MIXARG[@]}" -c "$CONCURRENCY" \
    -d "$SECONDS_" --post-format "$POST_FORMAT" --label "pool $POOL" \
    --json "$CASE/loadgen.json" | tee "$CASE/loadgen.txt"
  T1=$(date +%s.%N)
  E1=$(bench_cpu_ticks "$EUNHA_PID")
  P1=$(bench_pg_cpu_ticks "$TMP/pg")
  stop_samplers
  awk '/^VmHWM:/ { print $2 }' "/proc/$EUNHA_PID/status" >"$CASE/vmhwm_kib"

  REQS=$(jq -r .requests "$CASE/loadgen.json")
  RPS=$(jq -r .requests_per_second "$CASE/loadgen.json")
  P95=$(jq -r .latency_ms.p95 "$CASE/loadgen.json")
  ERRS=$(jq -r .errors "$CASE/loadgen.json")
  PEAK_RSS=$(awk -v m="$IDLE_RSS" '$1 > m { m = $1 } END { print m }' "$CASE/memory.samples")
  PEAK_PRIV=$(awk -v m="$IDLE_PRIV" '$2 > m { m = $2 } END { print m }' "$CASE/memory.samples")
  PEAK_ACTIVE=$(awk 'NF == 2 && $1 > m { m = $1 } END { print m + 0 }' "$CASE/connections.samples")
  PEAK_OPEN=$(awk 'NF == 2 && $2 > m { m = $2 } END { print m + 0 }' "$CASE/connections.samples")
  read -r AVG_CPU EUNHA_MS PG_MS < <(awk -v e=$((E1 - E0)) -v p=$((P1 - P0)) -v t="$TCK" \
    -v w="$(awk -v a="$T0" -v b="$T1" 'BEGIN { print b - a }')" -v n="$REQS" 'BEGIN {
      printf "%.2f %.3f %.3f\n", 100 * e / t / w, (n ? 1000 * e / t / n : 0), (n ? 1000 * p / t / n : 0) }')
  {
    echo "pool=$POOL idle_rss_kib=$IDLE_RSS idle_private_kib=$IDLE_PRIV peak_rss_kib=$PEAK_RSS"
    echo "peak_private_kib=$PEAK_PRIV vmhwm_kib=$(cat "$CASE/vmhwm_kib") avg_cpu_percent=$AVG_CPU"
    echo "peak_active_db=$PEAK_ACTIVE peak_open_db=$PEAK_OPEN requests=$REQS rps=$RPS p95_ms=$P95"
    echo "errors=$ERRS eunha_cpu_ms_per_req=$EUNHA_MS pg_cpu_ms_per_req=$PG_MS"
    echo "placement_connections=$PC create_ms=$CREATE_MS tenant_disk_bytes=$TENANT_DISK disk_before_bytes=$DISK0 disk_after_seeding_bytes=$DISK1"
  } >"$CASE/summary.txt"
  cat "$CASE/summary.txt"
  ROWS+=("| $POOL | $(bench_mib "$IDLE_RSS") | $(bench_mib "$IDLE_PRIV") | $(bench_mib "$PEAK_RSS") | $(bench_mib "$PEAK_PRIV") | $AVG_CPU% | $PEAK_ACTIVE | $(bench_fmt_num "$RPS" 2) | $(bench_fmt_num "$P95" 2) ms | $(bench_fmt_num "$ERRS" 0) | $EUNHA_MS ms | $PG_MS ms | $CREATE_MS ms | $(bench_bytes "$TENANT_DISK") |")

  bench_eunha_stop
  drop_databases "$DB"
  redis-cli -h 127.0.0.1 -p "$REDIS_PORT" --scan --pattern "eunha-bench-small-p$POOL-$$*" 2>/dev/null |
    head -n 100000 | xargs -r -n 500 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" del >/dev/null 2>&1 || true
  CURRENT_DB=
done

LOADGEN_CPU=$(jq -r '.loadgen.cpu_percent' "$RESULTS"/pool-*/loadgen.json | awk '$1 > m { m = $1 } END { printf "%.0f", m }')
{
  echo
  echo "### Small instance, $(date -u +%Y-%m-%d)"
  echo
  bench_machine_summary
  echo "- Settings: $CONCURRENCY closed-loop clients, ${SECONDS_} s measured after ${WARMUP} s warm-up, $USERS users, $([ "$USERS" -gt 0 ] && echo "$STATUSES" || echo 0) seeded statuses, mix \`${MIX:-loadgen default}\`, statuses as $POST_FORMAT; PostgreSQL defaults from scripts/lib/services.sh; eunha cpu_threads 2, pooled placement with placement_connections $(if [ -n "$PLACEMENT_CONNECTIONS" ]; then echo "$PLACEMENT_CONNECTIONS"; else echo "max(4, pool)"; fi). Create: the admin POST that made the tenant; Tenant on disk: growth of the placement and control databases from before it to after seeding. The load generator used at most ${LOADGEN_CPU}% of a core."
  echo "- Raw output: benchmark-results/$(basename "$RESULTS")/"
  echo
  echo "| Pool | Idle RSS | Idle private | Peak RSS | Peak private | Avg CPU | Peak active DB | Requests/s | p95 | Errors | eunha CPU/req | PostgreSQL CPU/req | Create | Tenant on disk |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${ROWS[@]}"
} >"$RESULTS/table.md"
cat "$RESULTS/table.md"
if [ "${EUNHA_BENCH_NO_README:-0}" != 1 ]; then
  cat "$RESULTS/table.md" >>"$ROOT/benchmark-results/README.md"
  eu_log "appended to benchmark-results/README.md"
fi
