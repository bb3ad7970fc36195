#!/usr/bin/env bash
# How many tenants one host carries. One eunha process gains tenants in steps
# (EUNHA_DENSITY_COUNTS); at each step it records what the population costs
# while idle, then its latency under open-loop load spread evenly over every
# tenant. At the end it restarts the process and times how long until every
# tenant answers again, which is what waking after a deploy or an outage
# looks like.
#
# It builds Release binaries into build-bench/, brings up its own PostgreSQL
# cluster and Redis server on free 127.0.0.1 ports, and removes them on exit,
# Ctrl-C included. Raw output goes to benchmark-results/density-DATE/
# (git-ignored); a summary is appended to benchmark-results/README.md.
#
# Traps that make naive numbers wrong, and what this script does instead:
# - RSS counts the shared binary and libraries once per process, so it
#   overstates what a process costs; eunha's cost is its private memory
#   (Private_Clean + Private_Dirty from smaps_rollup).
# - Total memory divided by tenants buries the per-tenant cost under what the
#   process pays once; the per-tenant figure is the slope between two steps.
# - A PostgreSQL backend's memory repeats the shared buffers it has touched,
#   so summing backends' RSS counts shared_buffers once per connection. The
#   script sums each process's private pages in private mappings and counts
#   the shared mappings once (their Pss summed over all processes).
# - An idle tenant's cost is periodic: with a 300 s queue poll, a window
#   shorter than the poll can fall between two rounds of wake-ups and show
#   nothing. The idle window defaults to longer than the poll; a shorter one
#   is allowed for quick runs, with a warning.
# - Tenants started together wake together: the first window after a step may
#   catch every tenant's poll at once. The settle time before the window lets
#   the idle timeout close connections opened by the step itself.
# - Backends that exit take their CPU time with them; PostgreSQL CPU adds the
#   postmaster's cutime/cstime, where reaped backends' time goes.
# - The load generator shares the machine; its CPU is in each load row.
# - PostgreSQL's autovacuum launcher starts a worker in every database once
#   per autovacuum_naptime (1 min by default): with a thousand tenant
#   databases that is a fork every 60 ms, idle or not, and it shows in the
#   idle PostgreSQL CPU. The script leaves PostgreSQL's default and says so;
#   EUNHA_DENSITY_PG_AUTOVACUUM_NAPTIME changes it.
# - "Every tenant answers once" is a burst, and so is the wake: a request
#   that waits longer than the acquire timeout for a connection gets 503 with
#   Retry-After. The load generator asks it again after Retry-After, as a
#   client or a federation peer would (--retry-503), and its latency runs
#   from the first ask, so the figure is the time until the tenant answered;
#   how many 503s were asked again is in the table. A pass that still ends
#   with errors is repeated after a pause, bounded by ANSWER_TRIES.
set -euo pipefail

# ---- knobs -----------------------------------------------------------------
COUNTS=${EUNHA_DENSITY_COUNTS:-"10 100 300 1000"} # tenant population at each step
LOAD_RPS=${EUNHA_DENSITY_LOAD_RPS:-"200 800"}     # open-loop total rates, per step
LOAD_SECONDS=${EUNHA_DENSITY_LOAD_SECONDS:-30}    # measured seconds per rate
# Unmeasured seconds before each rate. At the first rate of a step every
# tenant's connections have closed, and a new backend pays PostgreSQL's
# catalog loading and the parsing and planning of each statement the API
# uses (tens of ms of CPU apiece): 15 s gives each of 1000 tenants a few
# requests at 200 req/s first. The warm-up's own latency is in the table, so
# that cold cost stays visible.
LOAD_WARMUP=${EUNHA_DENSITY_LOAD_WARMUP:-15}
LOAD_CONNECTIONS=${EUNHA_DENSITY_LOAD_CONNECTIONS:-256} # most loadgen connections
MIX=${EUNHA_DENSITY_MIX:-}                        # loadgen --mix; default: its read-heavy mix
USERS=${EUNHA_DENSITY_USERS:-3}                   # users per tenant (0: no client API needed)
STATUSES=${EUNHA_DENSITY_STATUSES:-20}            # statuses seeded per tenant
SEED_JOBS=${EUNHA_DENSITY_SEED_JOBS:-4}           # tenants seeded in parallel
POOL=${EUNHA_DENSITY_POOL:-2}                     # hosting profile: max connections
POOL_MIN=${EUNHA_DENSITY_POOL_MIN:-0}             #   min connections
IDLE_TIMEOUT=${EUNHA_DENSITY_IDLE_TIMEOUT:-20}    #   idle timeout, seconds
QUEUE_POLL=${EUNHA_DENSITY_QUEUE_POLL:-300}       #   queue_idle_poll_seconds
CPU_THREADS=${EUNHA_DENSITY_CPU_THREADS:-2}
# [database_pool] max_total_connections (0: no cap). Without a cap, 1000
# two-connection tenants under load may hold 2000 backends of ~5-6 MiB
# private each. A cap below the number of busy tenants is worse than none:
# tenants take each other's connections and every request pays a new
# backend (tried at 400 for 300 tenants: the machine did little else). The
# default covers one connection per tenant at the largest step with room.
MAX_TOTAL=${EUNHA_DENSITY_MAX_TOTAL:-1200}
MAX_CONNECTING=${EUNHA_DENSITY_MAX_CONNECTING:-16} # [database_pool] max_connecting (wake admission)
ANSWER_TRIES=${EUNHA_DENSITY_ANSWER_TRIES:-3}     # passes of "every tenant answers once"
ANSWER_RETRY=${EUNHA_DENSITY_ANSWER_RETRY:-120}   # seconds a first answer's 503s are asked again
SETTLE=${EUNHA_DENSITY_SETTLE_SECONDS:-$((IDLE_TIMEOUT + 10))} # quiet time before the window
WINDOW=${EUNHA_DENSITY_WINDOW_SECONDS:-$((QUEUE_POLL + 30))}  # idle measurement window
SAMPLE=${EUNHA_DENSITY_SAMPLE_SECONDS:-2}         # connection sampling interval
WAKE_TIMEOUT=${EUNHA_DENSITY_WAKE_TIMEOUT:-120}   # per request during the wake burst
WAKE_CONCURRENCY=${EUNHA_DENSITY_WAKE_CONCURRENCY:-1000} # most tenants asked at once
PG_SHARED_BUFFERS=${EUNHA_DENSITY_PG_SHARED_BUFFERS:-128MB}
PG_MAX_CONNECTIONS=${EUNHA_DENSITY_PG_MAX_CONNECTIONS:-} # default: room for every pool at once, or the cap
PG_AUTOVACUUM_NAPTIME=${EUNHA_DENSITY_PG_AUTOVACUUM_NAPTIME:-} # default: PostgreSQL's (1min)
NO_README=${EUNHA_DENSITY_NO_README:-0}
# ----------------------------------------------------------------------------

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/lib/services.sh
. "$ROOT/scripts/lib/services.sh"
# shellcheck source=scripts/lib/bench.sh
. "$ROOT/scripts/lib/bench.sh"

is_uint() { case $1 in '' | *[!0-9]*) return 1 ;; esac }
prev=0
for c in $COUNTS; do
  if ! is_uint "$c" || [ "$c" -le "$prev" ]; then
    eu_die "EUNHA_DENSITY_COUNTS must be increasing whole numbers: '$COUNTS'"
    exit 2
  fi
  prev=$c
done
MAX_COUNT=$prev
[ "$MAX_COUNT" -gt 0 ] || {
  eu_die "EUNHA_DENSITY_COUNTS is empty"
  exit 2
}
for v in LOAD_SECONDS LOAD_WARMUP USERS STATUSES SEED_JOBS POOL POOL_MIN IDLE_TIMEOUT QUEUE_POLL SETTLE WINDOW WAKE_TIMEOUT MAX_TOTAL MAX_CONNECTING ANSWER_TRIES ANSWER_RETRY; do
  is_uint "${!v}" || {
    eu_die "EUNHA_DENSITY_$v must be a whole number, not '${!v}'"
    exit 2
  }
done
if [ "$USERS" = 0 ] && [ -z "$MIX" ]; then
  eu_die "EUNHA_DENSITY_USERS=0 leaves no tokens: set EUNHA_DENSITY_MIX too (e.g. instance)"
  exit 2
fi
if [ "$WINDOW" -le "$QUEUE_POLL" ]; then
  eu_log "WARNING: idle window ${WINDOW}s is not longer than the queue poll (${QUEUE_POLL}s):"
  eu_log "WARNING: idle connections, transactions and CPU may show nothing; fine for a quick run only"
fi
if [ "$SETTLE" -le "$IDLE_TIMEOUT" ]; then
  eu_log "WARNING: settle time ${SETTLE}s is not longer than the idle timeout (${IDLE_TIMEOUT}s)"
fi
if [ -z "$PG_MAX_CONNECTIONS" ]; then
  if [ "$MAX_TOTAL" -gt 0 ]; then PG_MAX_CONNECTIONS=$((MAX_TOTAL + 50)); else PG_MAX_CONNECTIONS=$((MAX_COUNT * POOL + 50)); fi
fi
[ "$PG_MAX_CONNECTIONS" -ge 100 ] || PG_MAX_CONNECTIONS=100

eu_install_deps
bench_require_cmd jq jq
bench_build
# The wake burst opens one connection per tenant at once.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

RESULTS=$(bench_results_dir density)
TMP=$(bench_make_tmp eunha-bench-density)
PG_PORT=$(eu_free_port)
REDIS_PORT=$(eu_free_port "$PG_PORT")
PG_URL="postgresql://postgres@127.0.0.1:$PG_PORT/postgres"
DB=eunha_density
TENANT_DB_RE="^${DB}_t[0-9]+\$"
SAMPLER_PID=

# shellcheck disable=SC2317 # invoked through traps
cleanup() {
  local rc=$?
  trap - INT TERM EXIT
  if [ -n "$SAMPLER_PID" ]; then
    kill "$SAMPLER_PID" 2>/dev/null || true
    wait "$SAMPLER_PID" 2>/dev/null || true
  fi
  bench_eunha_stop
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

# services.sh writes max_connections into eunha.conf on every start;
# postgresql.auto.conf (ALTER SYSTEM) is read after it and wins.
eu_pg_start "$TMP/pg" "$PG_PORT" >/dev/null
bench_psql "$PG_URL" "ALTER SYSTEM SET max_connections = $PG_MAX_CONNECTIONS" >/dev/null
bench_psql "$PG_URL" "ALTER SYSTEM SET shared_buffers = '$PG_SHARED_BUFFERS'" >/dev/null
[ -z "$PG_AUTOVACUUM_NAPTIME" ] ||
  bench_psql "$PG_URL" "ALTER SYSTEM SET autovacuum_naptime = '$PG_AUTOVACUUM_NAPTIME'" >/dev/null
eu_pg_stop "$TMP/pg"
eu_pg_start "$TMP/pg" "$PG_PORT" >/dev/null
eu_redis_start "$TMP/redis" "$REDIS_PORT" >/dev/null
PG_SETTINGS="max_connections=$(bench_psql "$PG_URL" 'SHOW max_connections'), shared_buffers=$(bench_psql "$PG_URL" 'SHOW shared_buffers'), autovacuum_naptime=$(bench_psql "$PG_URL" 'SHOW autovacuum_naptime')"

BENCH_ADMIN_TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
printf '%s\n' "$BENCH_ADMIN_TOKEN" >"$TMP/admin_token"
chmod 600 "$TMP/admin_token"
cat >"$RESULTS/eunha.toml" <<EOF
[server]
listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
scheme = "http"
cpu_threads = $CPU_THREADS

[admin]
token_file = "$TMP/admin_token"

[database]
url = "postgresql://postgres@127.0.0.1:$PG_PORT/$DB"
template = "${DB}_template"

[database_pool]
max_connections = $POOL
min_connections = $POOL_MIN
acquire_timeout_seconds = 5
idle_timeout_seconds = $IDLE_TIMEOUT
max_total_connections = $MAX_TOTAL
max_connecting = $MAX_CONNECTING

[workers]
queue_idle_poll_seconds = $QUEUE_POLL

[redis]
url = "redis://127.0.0.1:$REDIS_PORT/0"
prefix = "eunha-density-$$"

[limits]
# Mastodon's per-token limit (300 requests in 5 minutes) would turn the load
# into 429s; the benchmark measures serving, so the limiter is off (0).
api_requests_per_5min = 0
registrations_per_30min = 0

[log]
level = "warn"
EOF
TCK=$(bench_clk_tck)
DOMAINS=$RESULTS/domains
TOKENS=$RESULTS/tokens
: >"$DOMAINS"
: >"$TOKENS"
chmod 600 "$TOKENS"
if [ "$USERS" -gt 0 ]; then TARGET=(--tokens "$TOKENS"); else TARGET=(--hosts "$DOMAINS"); fi
MIXARG=()
[ -n "$MIX" ] && MIXARG=(-m "$MIX")

bench_eunha_start "$RESULTS/eunha.toml" "$TMP"
sleep 2
read -r _ PREV_PRIV < <(bench_mem_kib "$EUNHA_PID")
read -r PREV_PG_PRIV _ < <(bench_pg_mem_kib "$TMP/pg")
PREV_COUNT=0
eu_log "no tenants: eunha private $(bench_mib "$PREV_PRIV"), PostgreSQL private $(bench_mib "$PREV_PG_PRIV")"

# Counts, transactions and sessions of the tenant databases: "XACT SESSIONS".
pg_tenant_counters() {
  # One field separated by a space: psql -At would join two columns with '|',
  # which read would not split (an earlier run's xact column paid for that).
  bench_psql "$PG_URL" "SELECT coalesce(sum(xact_commit), 0) || ' ' || coalesce(sum(sessions), 0) FROM pg_stat_database WHERE datname ~ '$TENANT_DB_RE'"
}

# One psql session re-running the count (\watch), so sampling neither opens a
# connection per sample nor adds transactions to the tenant databases.
start_connection_sampler() {
  printf '%s\n' "SELECT count(*) FROM pg_stat_activity WHERE datname ~ '$TENANT_DB_RE' AND backend_type = 'client backend'" "\\watch $SAMPLE" |
    psql "$PG_URL" -X -q -At >"$1" 2>/dev/null &
  SAMPLER_PID=$!
}

stop_connection_sampler() {
  kill "$SAMPLER_PID" 2>/dev/null || true
  wait "$SAMPLER_PID" 2>/dev/null || true
  SAMPLER_PID=
}

elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { print b - a }'; }

IDLE_ROWS=()
LOAD_ROWS=()
ANSWER_ROWS=()
for COUNT in $COUNTS; do
  STEP=$RESULTS/step-$COUNT
  mkdir -p "$STEP"
  eu_log "step $COUNT: creating tenants $((PREV_COUNT + 1))..$COUNT"
  : >"$STEP/new-domains"
  for ((i = PREV_COUNT + 1; i <= COUNT; i++)); do
    d=t$i.density.test
    bench_admin POST /admin/v1/tenants "{\"domain\":\"$d\",\"title\":\"Density $i\"}" >/dev/null
    echo "$d" >>"$STEP/new-domains"
  done
  cat "$STEP/new-domains" >>"$DOMAINS"
  if [ "$USERS" -gt 0 ]; then
    eu_log "step $COUNT: seeding $USERS users per new tenant"
    : >"$STEP/new-tokens"
    bench_seed_tenants "$STEP/new-domains" "$USERS" "$STEP/new-tokens" "$SEED_JOBS" "$STEP"
    cat "$STEP/new-tokens" >>"$TOKENS"
    bench_seed_statuses "$STEP/new-tokens" $(((COUNT - PREV_COUNT) * STATUSES)) "$STEP"
    rm -f "$STEP/new-tokens"
  fi

  # Every tenant answers once (round robin gives each host exactly one).
  # A pass with errors is repeated after a pause, bounded by ANSWER_TRIES.
  FIRST_ERRS=
  for ((try = 1; ; try++)); do
    "$LOADGEN_BIN" -p "$BENCH_PUBLIC_PORT" --hosts "$DOMAINS" -m instance -n "$COUNT" \
      -c $((COUNT < 64 ? COUNT : 64)) -t 60 --retry-503 "$ANSWER_RETRY" -q --json "$STEP/answer-once-$try.json"
    ERRS=$(jq -r .errors "$STEP/answer-once-$try.json")
    [ -n "$FIRST_ERRS" ] || FIRST_ERRS=$ERRS
    [ "$ERRS" != 0 ] || break
    if [ "$try" -ge "$ANSWER_TRIES" ]; then
      eu_die "step $COUNT: not every tenant answered in $try passes: $(jq -c .errors_by_kind "$STEP/answer-once-$try.json")"
      exit 1
    fi
    eu_log "step $COUNT: $ERRS of $COUNT first answers failed ($(jq -c .errors_by_kind "$STEP/answer-once-$try.json")); asking again in 5 s"
    sleep 5
  done
  echo "answer_once_passes=$try first_pass_errors=$FIRST_ERRS p50_ms=$(jq -r .latency_ms.p50 "$STEP/answer-once-1.json") max_ms=$(jq -r .latency_ms.max "$STEP/answer-once-1.json")" |
    tee "$STEP/answer-once.txt"
  A1=$STEP/answer-once-1.json
  ANSWER_ROWS+=("| $(bench_fmt_num "$COUNT" 0) | $(bench_fmt_num "$((COUNT - PREV_COUNT))" 0) | $(jq -r '.latency_ms.p50 * 100 | round / 100' "$A1") ms | $(jq -r '.latency_ms.max * 100 | round / 100' "$A1") ms | $(jq -r .retries "$A1") | $FIRST_ERRS | $try |")
  printf '%s\n' "${ANSWER_ROWS[-1]}" >>"$RESULTS/answer-rows.md"

  eu_log "step $COUNT: settling ${SETTLE}s, then an idle window of ${WINDOW}s"
  sleep "$SETTLE"
  start_connection_sampler "$STEP/connections.samples"
  read -r X0 S0 < <(pg_tenant_counters)
  E0=$(bench_cpu_ticks "$EUNHA_PID")
  P0=$(bench_pg_cpu_ticks "$TMP/pg")
  T0=$(date +%s.%N)
  sleep "$WINDOW"
  T1=$(date +%s.%N)
  E1=$(bench_cpu_ticks "$EUNHA_PID")
  P1=$(bench_pg_cpu_ticks "$TMP/pg")
  read -r X1 S1 < <(pg_tenant_counters)
  stop_connection_sampler
  W=$(elapsed "$T0" "$T1")
  read -r RSS PRIV < <(bench_mem_kib "$EUNHA_PID")
  THREADS=$(bench_threads "$EUNHA_PID")
  read -r PG_PRIV PG_SHM < <(bench_pg_mem_kib "$TMP/pg")
  DISK=$(bench_psql "$PG_URL" "SELECT coalesce(avg(pg_database_size(datname)), 0)::bigint FROM pg_database WHERE datname ~ '$TENANT_DB_RE'")
  CONNS=$(awk 'NF == 1 { s += $1; n++ } END { printf "%.3f", n ? s / n : 0 }' "$STEP/connections.samples")
  read -r SLOPE PG_SLOPE CONN_T XACT_T SESS_T ECPU PCPU < <(awk \
    -v c="$COUNT" -v pc="$PREV_COUNT" -v p="$PRIV" -v pp="$PREV_PRIV" -v g="$PG_PRIV" -v gp="$PREV_PG_PRIV" \
    -v conns="$CONNS" -v dx=$((X1 - X0)) -v ds=$((S1 - S0)) -v w="$W" \
    -v de=$((E1 - E0)) -v dp=$((P1 - P0)) -v t="$TCK" 'BEGIN {
      printf "%.1f %.1f %.3f %.4f %.3f %.2f %.2f\n", (p - pp) / (c - pc), (g - gp) / (c - pc),
        conns / c, dx / w / c, ds / (w / 60) / c, 100 * de / t / w, 100 * dp / t / w }')
  {
    echo "tenants=$COUNT window_s=$W eunha_rss_kib=$RSS eunha_private_kib=$PRIV"
    echo "eunha_private_per_tenant_kib=$SLOPE threads=$THREADS pg_private_kib=$PG_PRIV pg_shared_once_kib=$PG_SHM"
    echo "pg_private_per_tenant_kib=$PG_SLOPE pg_conns_avg=$CONNS pg_conns_per_tenant=$CONN_T"
    echo "xact_per_s_per_tenant=$XACT_T new_conns_per_min_per_tenant=$SESS_T"
    echo "idle_cpu_eunha_percent=$ECPU idle_cpu_pg_percent=$PCPU disk_per_tenant_bytes=$DISK"
  } | tee "$STEP/idle.txt"
  IDLE_ROWS+=("| $(bench_fmt_num "$COUNT" 0) | $(bench_mib "$PRIV") | $(bench_size "$SLOPE") | $(bench_mib "$RSS") | $THREADS | $CONN_T | $(bench_mib "$PG_PRIV") + $(bench_mib "$PG_SHM") | $(bench_size "$PG_SLOPE") | $XACT_T | $SESS_T | $ECPU% / $PCPU% | $(bench_mib "$((DISK / 1024))") |")
  # Rows also go to disk as they are made, so a run stopped before the end
  # (Ctrl-C at the largest step) keeps every finished step's figures.
  printf '%s\n' "${IDLE_ROWS[-1]}" >>"$RESULTS/idle-rows.md"
  PREV_COUNT=$COUNT
  PREV_PRIV=$PRIV
  PREV_PG_PRIV=$PG_PRIV

  for RPS in $LOAD_RPS; do
    eu_log "step $COUNT: open loop at $RPS req/s over $COUNT tenants"
    if [ "$LOAD_WARMUP" -gt 0 ]; then
      "$LOADGEN_BIN" -p "$BENCH_PUBLIC_PORT" "${TARGET[@]}" "${MIXARG[@]}" -r "$RPS" \
        -c "$LOAD_CONNECTIONS" -d "$LOAD_WARMUP" -q --json "$STEP/warmup-$RPS.json"
    fi
    E0=$(bench_cpu_ticks "$EUNHA_PID")
    P0=$(bench_pg_cpu_ticks "$TMP/pg")
    "$LOADGEN_BIN" -p "$BENCH_PUBLIC_PORT" "${TARGET[@]}" "${MIXARG[@]}" -r "$RPS" \
      -c "$LOAD_CONNECTIONS" -d "$LOAD_SECONDS" --label "$COUNT tenants at $RPS req/s" \
      --json "$STEP/load-$RPS.json" | tee "$STEP/load-$RPS.txt"
    E1=$(bench_cpu_ticks "$EUNHA_PID")
    P1=$(bench_pg_cpu_ticks "$TMP/pg")
    J=$STEP/load-$RPS.json
    WU=-
    [ "$LOAD_WARMUP" -gt 0 ] && WU="$(jq -r '.latency_ms.p95 * 100 | round / 100' "$STEP/warmup-$RPS.json") ms"
    REQS=$(jq -r .requests "$J")
    read -r EMS PMS < <(awk -v e=$((E1 - E0)) -v p=$((P1 - P0)) -v t="$TCK" -v n="$REQS" \
      'BEGIN { printf "%.3f %.3f\n", (n ? 1000 * e / t / n : 0), (n ? 1000 * p / t / n : 0) }')
    LOAD_ROWS+=("| $(bench_fmt_num "$COUNT" 0) | $(bench_fmt_num "$RPS" 0) | $(bench_fmt_num "$(jq -r .requests_per_second "$J")" 1) | $(jq -r '.latency_ms.p50 * 100 | round / 100' "$J") ms | $(jq -r '.latency_ms.p95 * 100 | round / 100' "$J") ms | $(jq -r '.latency_ms.p99 * 100 | round / 100' "$J") ms | $(bench_fmt_num "$(jq -r .errors "$J")" 0) | $EMS ms | $PMS ms | $(jq -r '.loadgen.cpu_percent | floor' "$J")% | $WU |")
    printf '%s\n' "${LOAD_ROWS[-1]}" >>"$RESULTS/load-rows.md"
  done
done

# Wake burst: a fresh process, every tenant asked at once. Time to an answer
# is the process's own start-up plus the request's latency.
eu_log "wake burst: restarting eunha and asking all $MAX_COUNT tenants at once"
bench_eunha_stop
T0=$(date +%s.%N)
bench_eunha_start "$RESULTS/eunha.toml" "$TMP"
T1=$(date +%s.%N)
WC=$((MAX_COUNT < WAKE_CONCURRENCY ? MAX_COUNT : WAKE_CONCURRENCY))
"$LOADGEN_BIN" -p "$BENCH_PUBLIC_PORT" --hosts "$DOMAINS" -m instance -n "$MAX_COUNT" -c "$WC" \
  -t "$WAKE_TIMEOUT" --retry-503 "$WAKE_TIMEOUT" --label "wake $MAX_COUNT" --json "$RESULTS/wake.json" | tee "$RESULTS/wake.txt"
START_S=$(elapsed "$T0" "$T1")
read -r WAKE_MED WAKE_MAX < <(awk -v s="$START_S" -v p50="$(jq -r .latency_ms.p50 "$RESULTS/wake.json")" \
  -v mx="$(jq -r .latency_ms.max "$RESULTS/wake.json")" 'BEGIN { printf "%.2f %.2f\n", s + p50 / 1000, s + mx / 1000 }')
WAKE_ERRS=$(jq -r .errors "$RESULTS/wake.json")
WAKE_RETRIES=$(jq -r .retries "$RESULTS/wake.json")
echo "tenants=$MAX_COUNT concurrency=$WC process_start_s=$START_S median_s=$WAKE_MED all_answering_s=$WAKE_MAX retried_503s=$WAKE_RETRIES errors=$WAKE_ERRS" |
  tee "$RESULTS/wake-summary.txt"
bench_eunha_stop

{
  echo
  echo "### Density, $(date -u +%Y-%m-%d)"
  echo
  bench_machine_summary
  echo "- PostgreSQL: $PG_SETTINGS. eunha: pool $POOL (min $POOL_MIN), idle timeout ${IDLE_TIMEOUT} s, queue poll ${QUEUE_POLL} s, cpu_threads $CPU_THREADS, max_total_connections $MAX_TOTAL, max_connecting $MAX_CONNECTING."
  echo "- Seeding: $USERS users per tenant following each other, $([ "$USERS" -gt 0 ] && echo "$STATUSES" || echo 0) statuses per tenant. Idle window ${WINDOW} s after ${SETTLE} s settling, sampled every ${SAMPLE} s$([ "$WINDOW" -le "$QUEUE_POLL" ] && echo " (shorter than the queue poll: idle figures may read low)"). Load: open loop, mix \`${MIX:-loadgen default}\`, ${LOAD_SECONDS} s per rate after ${LOAD_WARMUP} s warm-up, at most $LOAD_CONNECTIONS connections."
  echo "- Raw output: benchmark-results/$(basename "$RESULTS")/"
  echo
  echo "Idle, after every tenant answered once (per-tenant memory is the slope from the previous step):"
  echo
  echo "| Tenants | eunha private | eunha private/tenant | eunha RSS | Threads | PG conns/tenant | PG private + shared once | PG private/tenant | xact/s/tenant | New conns/min/tenant | Idle CPU eunha / PG | Disk/tenant |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${IDLE_ROWS[@]}"
  echo
  echo "Every tenant's first request after a step (64 at a time; the new tenants have just been created and seeded, the others' connections may have closed; a 503 is asked again after its Retry-After for up to ${ANSWER_RETRY} s and the time counts from the first ask):"
  echo
  echo "| Tenants | New | p50 | Max | 503s asked again | Errors, first pass | Passes |"
  echo "|---|---|---|---|---|---|---|"
  printf '%s\n' "${ANSWER_ROWS[@]}"
  echo
  echo "Open-loop load spread evenly over every tenant:"
  echo
  echo "| Tenants | Offered req/s | Achieved req/s | p50 | p95 | p99 | Errors | eunha CPU/req | PostgreSQL CPU/req | loadgen CPU | Warm-up p95 |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  [ "${#LOAD_ROWS[@]}" -gt 0 ] && printf '%s\n' "${LOAD_ROWS[@]}"
  echo
  echo "Wake burst after a restart ($WC tenants asked at once; a 503 is asked again after its Retry-After for up to ${WAKE_TIMEOUT} s, and a tenant's time runs from the restart to its first answer):"
  echo
  echo "| Tenants | Process start | Median | All answering | 503s asked again | Errors |"
  echo "|---|---|---|---|---|---|"
  echo "| $(bench_fmt_num "$MAX_COUNT" 0) | $(bench_fmt_num "$START_S" 2) s | $WAKE_MED s | $WAKE_MAX s | $WAKE_RETRIES | $WAKE_ERRS |"
} >"$RESULTS/table.md"
cat "$RESULTS/table.md"
if [ "$NO_README" != 1 ]; then
  cat "$RESULTS/table.md" >>"$ROOT/benchmark-results/README.md"
  eu_log "appended to benchmark-results/README.md"
fi
