#!/usr/bin/env bash
# How many tenants one host carries. One eunha process gains tenants in steps
# (EUNHA_DENSITY_STEPS); at each step it times creating the new tenants
# through the admin API, records what the population costs on disk and while
# idle, then its latency under open-loop load spread evenly over every
# tenant. After the steps listed in EUNHA_DENSITY_WAKE_STEPS (default: every
# step) it restarts the process and times how long until every tenant
# answers again, which is what waking after a deploy or an outage looks like.
#
# Layout measured: the pooled default. Every tenant lives in one placement
# database, <control database>_main (here eunha_density_main), which keeps
# [database] placement_connections connections open and lends them to its
# tenants; creating a tenant is one control row, not a database. So there
# are no per-tenant databases to count or size: connections, transactions
# and disk are read for the placement and control databases together, and
# disk per tenant is their growth per tenant added.
#
# It builds Release binaries into build-bench/ (BENCH_BUILD=DIR for another
# directory), brings up its own PostgreSQL
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
#   the control pool's idle timeout close connections opened by the step
#   itself (the placement's connections stay open by design, and are counted).
# - Backends that exit take their CPU time with them; PostgreSQL CPU adds the
#   postmaster's cutime/cstime, where reaped backends' time goes.
# - The load generator shares the machine; its CPU is in each load row.
# - PostgreSQL's autovacuum launcher starts a worker in every database once
#   per autovacuum_naptime (1 min by default). With a database per tenant
#   that was a fork every 60 ms at a thousand tenants; pooled, it is the
#   same handful of databases whatever the count. The script leaves
#   PostgreSQL's default and says so; EUNHA_DENSITY_PG_AUTOVACUUM_NAPTIME
#   changes it.
# - Disk: pg_database_size counts a relation's pages as soon as they are
#   added, but the free-space and visibility maps appear only when VACUUM
#   first visits a table, and dead rows stay until it does. Each step
#   VACUUMs the placement and control databases and CHECKPOINTs before
#   creating its tenants; "raw" is their growth right after creating,
#   seeding and the first answers, "after VACUUM" the growth once VACUUM and
#   a CHECKPOINT ran again. Both are divided by the tenants added, so the
#   schema's fixed size cancels out. Per tenant, a few hundred bytes of
#   growth at ten tenants is page granularity (8 KiB); read the large steps.
#   A database's directory also holds the relcache init file
#   (pg_internal.init, ~160 KiB), which catalog changes such as VACUUM's
#   statistics delete and the next connection writes again; sizes here leave
#   it out, or ten tenants would read as ±16 KiB each.
# - Tenant creation time is the admin API's answer to POST
#   /admin/v1/tenants, timed by the load generator (-m tenant) at
#   EUNHA_DENSITY_CREATE_JOBS requests in flight; p50/p95 per step.
# - "Every tenant answers once" is a burst, and so is the wake: a request
#   that waits longer than the acquire timeout for a connection gets 503 with
#   Retry-After. The load generator asks it again after Retry-After, as a
#   client or a federation peer would (--retry-503), and its latency runs
#   from the first ask, so the figure is the time until the tenant answered;
#   how many 503s were asked again is in the table. A pass that still ends
#   with errors is repeated after a pause, bounded by ANSWER_TRIES.
set -euo pipefail

# ---- knobs -----------------------------------------------------------------
# Tenant population at each step (EUNHA_DENSITY_COUNTS is the older name).
COUNTS=${EUNHA_DENSITY_STEPS:-${EUNHA_DENSITY_COUNTS:-"10 100 1000"}}
LOAD_RPS=${EUNHA_DENSITY_LOAD_RPS:-"200 800"}     # open-loop total rates, per step
LOAD_SECONDS=${EUNHA_DENSITY_LOAD_SECONDS:-30}    # measured seconds per rate
# Unmeasured seconds before each rate. With a database per tenant, the first
# rate of a step landed on closed connections and paid new backends; pooled,
# the placement's connections stay open and have prepared the statements
# already, so the warm-up mostly fills caches. Its own latency is in the
# table, so any cold cost stays visible.
LOAD_WARMUP=${EUNHA_DENSITY_LOAD_WARMUP:-15}
LOAD_CONNECTIONS=${EUNHA_DENSITY_LOAD_CONNECTIONS:-256} # most loadgen connections
MIX=${EUNHA_DENSITY_MIX:-}                        # loadgen --mix; default: its read-heavy mix
USERS=${EUNHA_DENSITY_USERS:-3}                   # users per tenant (0: no client API needed)
STATUSES=${EUNHA_DENSITY_STATUSES:-20}            # statuses seeded per tenant
SEED_JOBS=${EUNHA_DENSITY_SEED_JOBS:-4}           # tenants seeded in parallel
CREATE_JOBS=${EUNHA_DENSITY_CREATE_JOBS:-8}       # admin POSTs creating tenants in flight
PLACEMENT_CONNECTIONS=${EUNHA_DENSITY_PLACEMENT_CONNECTIONS:-4} # [database] placement_connections
POOL=${EUNHA_DENSITY_POOL:-2}                     # hosting profile: most connections a tenant borrows
POOL_MIN=${EUNHA_DENSITY_POOL_MIN:-0}             #   min connections (control database pool only)
IDLE_TIMEOUT=${EUNHA_DENSITY_IDLE_TIMEOUT:-20}    #   idle timeout, seconds (control database pool only)
QUEUE_POLL=${EUNHA_DENSITY_QUEUE_POLL:-300}       #   queue_idle_poll_seconds
CPU_THREADS=${EUNHA_DENSITY_CPU_THREADS:-2}
# [database_pool] max_total_connections (0: no cap). With a database per
# tenant this capped thousands of backends; pooled, the placement keeps
# placement_connections and the control pool a few, so no cap is needed.
MAX_TOTAL=${EUNHA_DENSITY_MAX_TOTAL:-0}
MAX_CONNECTING=${EUNHA_DENSITY_MAX_CONNECTING:-16} # [database_pool] max_connecting (wake admission)
ANSWER_TRIES=${EUNHA_DENSITY_ANSWER_TRIES:-3}     # passes of "every tenant answers once"
ANSWER_RETRY=${EUNHA_DENSITY_ANSWER_RETRY:-120}   # seconds a first answer's 503s are asked again
SETTLE=${EUNHA_DENSITY_SETTLE_SECONDS:-$((IDLE_TIMEOUT + 10))} # quiet time before the window
WINDOW=${EUNHA_DENSITY_WINDOW_SECONDS:-$((QUEUE_POLL + 30))}  # idle measurement window
SAMPLE=${EUNHA_DENSITY_SAMPLE_SECONDS:-2}         # connection sampling interval
WAKE_TIMEOUT=${EUNHA_DENSITY_WAKE_TIMEOUT:-120}   # per request during the wake burst
WAKE_CONCURRENCY=${EUNHA_DENSITY_WAKE_CONCURRENCY:-1000} # most tenants asked at once
WAKE_STEPS=${EUNHA_DENSITY_WAKE_STEPS:-all}       # steps followed by a wake burst: all, last, or counts
PG_SHARED_BUFFERS=${EUNHA_DENSITY_PG_SHARED_BUFFERS:-128MB}
PG_MAX_CONNECTIONS=${EUNHA_DENSITY_PG_MAX_CONNECTIONS:-} # default: the cap plus room, else 100
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
    eu_die "EUNHA_DENSITY_STEPS must be increasing whole numbers: '$COUNTS'"
    exit 2
  fi
  prev=$c
done
MAX_COUNT=$prev
[ "$MAX_COUNT" -gt 0 ] || {
  eu_die "EUNHA_DENSITY_STEPS is empty"
  exit 2
}
for v in LOAD_SECONDS LOAD_WARMUP USERS STATUSES SEED_JOBS CREATE_JOBS PLACEMENT_CONNECTIONS POOL POOL_MIN IDLE_TIMEOUT QUEUE_POLL SETTLE WINDOW WAKE_TIMEOUT MAX_TOTAL MAX_CONNECTING ANSWER_TRIES ANSWER_RETRY; do
  is_uint "${!v}" || {
    eu_die "EUNHA_DENSITY_$v must be a whole number, not '${!v}'"
    exit 2
  }
done
[ "$CREATE_JOBS" -ge 1 ] || CREATE_JOBS=1
case " $WAKE_STEPS " in
  " all " | " last " | " none ") ;;
  *)
    for c in $WAKE_STEPS; do
      case " $COUNTS " in *" $c "*) ;; *)
        eu_die "EUNHA_DENSITY_WAKE_STEPS: $c is not one of the steps ($COUNTS)"
        exit 2
        ;;
      esac
    done
    ;;
esac
# wake_after COUNT : true when a wake burst follows this step.
wake_after() {
  case $WAKE_STEPS in
    all) return 0 ;;
    none) return 1 ;;
    last) [ "$1" = "$MAX_COUNT" ] ;;
    *) case " $WAKE_STEPS " in *" $1 "*) return 0 ;; *) return 1 ;; esac ;;
  esac
}
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
  # One placement's connections, the control pool's and the script's psql
  # sessions fit in PostgreSQL's default many times over.
  if [ "$MAX_TOTAL" -gt 0 ]; then PG_MAX_CONNECTIONS=$((MAX_TOTAL + 50)); else PG_MAX_CONNECTIONS=$((PLACEMENT_CONNECTIONS + POOL + 50)); fi
fi
[ "$PG_MAX_CONNECTIONS" -ge 100 ] || PG_MAX_CONNECTIONS=100

eu_install_deps
bench_require_cmd jq jq
bench_build
# The wake burst opens up to WAKE_CONCURRENCY client connections at once.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

RESULTS=$(bench_results_dir density)
TMP=$(bench_make_tmp eunha-bench-density)
PG_PORT=$(eu_free_port)
REDIS_PORT=$(eu_free_port "$PG_PORT")
PG_URL="postgresql://postgres@127.0.0.1:$PG_PORT/postgres"
DB=eunha_density
MAIN_DB=${DB}_main # the default pooled placement: every tenant's rows
MAIN_URL="postgresql://postgres@127.0.0.1:$PG_PORT/$MAIN_DB"
CONTROL_URL="postgresql://postgres@127.0.0.1:$PG_PORT/$DB"
SAMPLER_PID=

# shellcheck disable=SC2317 # invoked through traps
bench_cleanup_hook() {
  if [ -n "$SAMPLER_PID" ]; then
    kill "$SAMPLER_PID" 2>/dev/null || true
    wait "$SAMPLER_PID" 2>/dev/null || true
  fi
}
bench_trap_cleanup

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

bench_admin_token
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
placement_connections = $PLACEMENT_CONNECTIONS

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
# into 429s; the benchmark measures serving, so the limiter is off (0). The
# set-up signs every user in from one address, past the per-IP sign-in limit.
api_requests_per_5min = 0
registrations_per_30min = 0
sign_in_attempts_per_ip_per_5min = 0

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

# Transactions and sessions of the databases eunha uses, the placement and
# the control database: "XACT SESSIONS". Read through the postgres database,
# so reading adds nothing to them.
pg_tenant_counters() {
  # One field separated by a space: psql -At would join two columns with '|',
  # which read would not split (an earlier run's xact column paid for that).
  bench_psql "$PG_URL" "SELECT coalesce(sum(xact_commit), 0) || ' ' || coalesce(sum(sessions), 0) FROM pg_stat_database WHERE datname IN ('$MAIN_DB', '$DB')"
}

# On-disk bytes of the placement and the control database: "MAIN CONTROL".
pg_disk() {
  bench_psql "$PG_URL" "SELECT $(bench_pg_db_bytes_sql "'$MAIN_DB'") || ' ' || $(bench_pg_db_bytes_sql "'$DB'")"
}

# VACUUM both databases, then CHECKPOINT, so that sizes compare like with
# like (see the disk trap above).
pg_vacuum_checkpoint() {
  bench_psql "$MAIN_URL" "VACUUM" >/dev/null
  bench_psql "$CONTROL_URL" "VACUUM" >/dev/null
  bench_psql "$PG_URL" "CHECKPOINT" >/dev/null
}

# One psql session re-running the count (\watch), so sampling neither opens a
# connection per sample nor adds transactions to eunha's databases: client
# connections to the placement and the control database, "OPEN BUSY".
start_connection_sampler() {
  printf '%s\n' "SELECT count(*) || ' ' || count(*) FILTER (WHERE state <> 'idle') FROM pg_stat_activity WHERE datname IN ('$MAIN_DB', '$DB') AND backend_type = 'client backend'" "\\watch $SAMPLE" |
    psql "$PG_URL" -X -q -At >"$1" 2>/dev/null &
  SAMPLER_PID=$!
}

stop_connection_sampler() {
  kill "$SAMPLER_PID" 2>/dev/null || true
  wait "$SAMPLER_PID" 2>/dev/null || true
  SAMPLER_PID=
}

elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { print b - a }'; }
ms2() { jq -r "$1 * 100 | round / 100" "$2"; }

bench_eunha_start "$RESULTS/eunha.toml" "$TMP"
sleep 2
read -r _ PREV_PRIV < <(bench_mem_kib "$EUNHA_PID")
read -r PREV_PG_PRIV _ < <(bench_pg_mem_kib "$TMP/pg")
PREV_COUNT=0
eu_log "no tenants: eunha private $(bench_mib "$PREV_PRIV"), PostgreSQL private $(bench_mib "$PREV_PG_PRIV")"

IDLE_ROWS=()
CREATE_ROWS=()
LOAD_ROWS=()
ANSWER_ROWS=()
WAKE_ROWS=()
for COUNT in $COUNTS; do
  STEP=$RESULTS/step-$COUNT
  mkdir -p "$STEP"
  NEW=$((COUNT - PREV_COUNT))

  # Disk before: the previous step's load (statuses, in the full mix) is in
  # it, and VACUUM makes its state comparable with the one after.
  pg_vacuum_checkpoint
  read -r DM0 DC0 < <(pg_disk)

  eu_log "step $COUNT: creating tenants $((PREV_COUNT + 1))..$COUNT, $CREATE_JOBS at a time"
  awk -v a=$((PREV_COUNT + 1)) -v b="$COUNT" 'BEGIN { for (i = a; i <= b; i++) printf "t%d.density.test\n", i }' \
    >"$STEP/new-domains"
  # One admin POST per domain (round robin over the file, -n of them), timed
  # by the load generator from when it was sent.
  "$LOADGEN_BIN" -p "$BENCH_ADMIN_PORT" --hosts "$STEP/new-domains" -m tenant -n "$NEW" \
    -c "$CREATE_JOBS" -t 60 --admin-token-file "$TMP/admin_token" --label "create $NEW tenants" \
    -q --json "$STEP/create.json"
  CJ=$STEP/create.json
  CERRS=$(jq -r .errors "$CJ")
  if [ "$CERRS" != 0 ] || [ "$(jq -r '.status."201" // 0' "$CJ")" != "$NEW" ]; then
    eu_die "step $COUNT: creating tenants: $CERRS of $NEW failed: $(jq -c '.errors_by_kind, .status' "$CJ")"
    exit 1
  fi
  cat "$STEP/new-domains" >>"$DOMAINS"
  CWALL=$(jq -r .wall_s "$CJ")
  CRATE=$(awk -v n="$NEW" -v w="$CWALL" 'BEGIN { printf "%.1f\n", (w > 0 ? n / w : 0) }')
  read -r DMC DCC < <(pg_disk)
  eu_log "step $COUNT: created $NEW tenants in ${CWALL}s ($CRATE/s, p50 $(ms2 .latency_ms.p50 "$CJ") ms)"
  SEED_ACCOUNTS_S=0
  SEED_STATUSES_S=0
  if [ "$USERS" -gt 0 ]; then
    eu_log "step $COUNT: seeding $USERS users per new tenant"
    : >"$STEP/new-tokens"
    T=$SECONDS
    bench_seed_tenants "$STEP/new-domains" "$USERS" "$STEP/new-tokens" "$SEED_JOBS" "$STEP"
    SEED_ACCOUNTS_S=$((SECONDS - T))
    cat "$STEP/new-tokens" >>"$TOKENS"
    eu_log "step $COUNT: seeded users in ${SEED_ACCOUNTS_S}s; seeding $((NEW * STATUSES)) statuses"
    T=$SECONDS
    bench_seed_statuses "$STEP/new-tokens" $((NEW * STATUSES)) "$STEP"
    SEED_STATUSES_S=$((SECONDS - T))
    eu_log "step $COUNT: seeded statuses in ${SEED_STATUSES_S}s"
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
  A1=$STEP/answer-once-1.json
  echo "answer_once_passes=$try first_pass_errors=$FIRST_ERRS p50_ms=$(jq -r .latency_ms.p50 "$A1") max_ms=$(jq -r .latency_ms.max "$A1") first_pass_wall_s=$(jq -r .wall_s "$A1")" |
    tee "$STEP/answer-once.txt"
  ANSWER_ROWS+=("| $(bench_fmt_num "$COUNT" 0) | $(bench_fmt_num "$NEW" 0) | $(ms2 .latency_ms.p50 "$A1") ms | $(ms2 .latency_ms.max "$A1") ms | $(bench_fmt_num "$(jq -r .wall_s "$A1")" 2) s | $(jq -r .retries "$A1") | $FIRST_ERRS | $try |")
  printf '%s\n' "${ANSWER_ROWS[-1]}" >>"$RESULTS/answer-rows.md"

  # Disk after: raw, then after VACUUM and a CHECKPOINT. Per tenant added.
  read -r DM1 DC1 < <(pg_disk)
  pg_vacuum_checkpoint
  read -r DM2 DC2 < <(pg_disk)
  read -r DISK_CREATE DISK_RAW DISK_VAC DISK_VAC_MAIN DISK_VAC_CTL < <(awk -v n="$NEW" \
    -v m0="$DM0" -v c0="$DC0" -v mc="$DMC" -v cc="$DCC" -v m1="$DM1" -v c1="$DC1" -v m2="$DM2" -v c2="$DC2" 'BEGIN {
      printf "%.0f %.0f %.0f %.0f %.0f\n", (mc + cc - m0 - c0) / n, (m1 + c1 - m0 - c0) / n,
        (m2 + c2 - m0 - c0) / n, (m2 - m0) / n, (c2 - c0) / n }')
  {
    echo "tenants=$COUNT new=$NEW create_wall_s=$CWALL create_per_s=$CRATE create_jobs=$CREATE_JOBS seed_users_s=$SEED_ACCOUNTS_S seed_statuses_s=$SEED_STATUSES_S"
    echo "create_p50_ms=$(jq -r .latency_ms.p50 "$CJ") create_p95_ms=$(jq -r .latency_ms.p95 "$CJ") create_p99_ms=$(jq -r .latency_ms.p99 "$CJ") create_max_ms=$(jq -r .latency_ms.max "$CJ")"
    echo "main_bytes_before=$DM0 control_bytes_before=$DC0 main_bytes_created=$DMC control_bytes_created=$DCC"
    echo "main_bytes_raw=$DM1 control_bytes_raw=$DC1 main_bytes_vacuumed=$DM2 control_bytes_vacuumed=$DC2"
    echo "disk_per_tenant_created_bytes=$DISK_CREATE disk_per_tenant_raw_bytes=$DISK_RAW disk_per_tenant_vacuumed_bytes=$DISK_VAC (placement $DISK_VAC_MAIN + control $DISK_VAC_CTL)"
  } | tee "$STEP/create-disk.txt"
  CREATE_ROWS+=("| $(bench_fmt_num "$COUNT" 0) | $(bench_fmt_num "$NEW" 0) | $(bench_fmt_num "$CWALL" 2) s | $(bench_fmt_num "$CRATE" 1) | $(ms2 .latency_ms.p50 "$CJ") ms | $(ms2 .latency_ms.p95 "$CJ") ms | $(ms2 .latency_ms.max "$CJ") ms | $(bench_bytes "$DISK_CREATE") | $(bench_bytes "$DISK_RAW") | $(bench_bytes "$DISK_VAC") ($(bench_bytes "$DISK_VAC_MAIN") + $(bench_bytes "$DISK_VAC_CTL")) | $(bench_mib "$((DM2 / 1024))") + $(bench_mib "$((DC2 / 1024))") |")
  printf '%s\n' "${CREATE_ROWS[-1]}" >>"$RESULTS/create-rows.md"

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
  read -r CONNS CONNS_MAX BUSY < <(awk 'NF == 2 { s += $1; b += $2; n++; if ($1 > m) m = $1 }
    END { printf "%.2f %d %.3f\n", n ? s / n : 0, m, n ? b / n : 0 }' "$STEP/connections.samples")
  read -r SLOPE PG_SLOPE XACT_T SESS_M ECPU PCPU < <(awk \
    -v c="$COUNT" -v pc="$PREV_COUNT" -v p="$PRIV" -v pp="$PREV_PRIV" -v g="$PG_PRIV" -v gp="$PREV_PG_PRIV" \
    -v dx=$((X1 - X0)) -v ds=$((S1 - S0)) -v w="$W" \
    -v de=$((E1 - E0)) -v dp=$((P1 - P0)) -v t="$TCK" 'BEGIN {
      printf "%.1f %.1f %.4f %.2f %.2f %.2f\n", (p - pp) / (c - pc), (g - gp) / (c - pc),
        dx / w / c, ds / (w / 60), 100 * de / t / w, 100 * dp / t / w }')
  {
    echo "tenants=$COUNT window_s=$W eunha_rss_kib=$RSS eunha_private_kib=$PRIV"
    echo "eunha_private_per_tenant_kib=$SLOPE threads=$THREADS pg_private_kib=$PG_PRIV pg_shared_once_kib=$PG_SHM"
    echo "pg_private_per_tenant_kib=$PG_SLOPE pg_conns_avg=$CONNS pg_conns_max=$CONNS_MAX pg_conns_busy_avg=$BUSY"
    echo "xact=$((X1 - X0)) xact_per_s_per_tenant=$XACT_T new_pg_conns=$((S1 - S0)) new_pg_conns_per_min=$SESS_M"
    echo "idle_cpu_eunha_percent=$ECPU idle_cpu_pg_percent=$PCPU disk_per_tenant_vacuumed_bytes=$DISK_VAC"
  } | tee "$STEP/idle.txt"
  IDLE_ROWS+=("| $(bench_fmt_num "$COUNT" 0) | $(bench_mib "$PRIV") | $(bench_size "$SLOPE") | $(bench_mib "$RSS") | $THREADS | $CONNS / $CONNS_MAX ($BUSY busy) | $(bench_mib "$PG_PRIV") + $(bench_mib "$PG_SHM") | $(bench_size "$PG_SLOPE") | $XACT_T | $SESS_M | $ECPU% / $PCPU% | $(ms2 .latency_ms.p50 "$CJ") / $(ms2 .latency_ms.p95 "$CJ") ms | $(bench_bytes "$DISK_VAC") |")
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
    [ "$LOAD_WARMUP" -gt 0 ] && WU="$(ms2 .latency_ms.p95 "$STEP/warmup-$RPS.json") ms"
    REQS=$(jq -r .requests "$J")
    read -r EMS PMS < <(awk -v e=$((E1 - E0)) -v p=$((P1 - P0)) -v t="$TCK" -v n="$REQS" \
      'BEGIN { printf "%.3f %.3f\n", (n ? 1000 * e / t / n : 0), (n ? 1000 * p / t / n : 0) }')
    LOAD_ROWS+=("| $(bench_fmt_num "$COUNT" 0) | $(bench_fmt_num "$RPS" 0) | $(bench_fmt_num "$(jq -r .requests_per_second "$J")" 1) | $(ms2 .latency_ms.p50 "$J") ms | $(ms2 .latency_ms.p95 "$J") ms | $(ms2 .latency_ms.p99 "$J") ms | $(bench_fmt_num "$(jq -r .errors "$J")" 0) | $EMS ms | $PMS ms | $(jq -r '.loadgen.cpu_percent | floor' "$J")% | $WU |")
    printf '%s\n' "${LOAD_ROWS[-1]}" >>"$RESULTS/load-rows.md"
  done

  if wake_after "$COUNT"; then
    # Wake burst: a fresh process, every tenant asked at once (at most
    # WAKE_CONCURRENCY connections; the rest wait for one, and that wait
    # counts). Arrivals are all due within 10 ms of the ready file (open
    # loop), so a tenant's latency is its time from then to its answer, and
    # its time from the restart is the process's start-up plus that.
    eu_log "step $COUNT: wake burst: restarting eunha and asking all $COUNT tenants at once"
    bench_eunha_stop
    T0=$(date +%s.%N)
    bench_eunha_start "$RESULTS/eunha.toml" "$TMP"
    T1=$(date +%s.%N)
    WC=$((COUNT < WAKE_CONCURRENCY ? COUNT : WAKE_CONCURRENCY))
    WJ=$STEP/wake.json
    "$LOADGEN_BIN" -p "$BENCH_PUBLIC_PORT" --hosts "$DOMAINS" -m instance -n "$COUNT" -c "$WC" \
      -r $((COUNT * 100)) -t "$WAKE_TIMEOUT" --retry-503 "$WAKE_TIMEOUT" --label "wake $COUNT" \
      --json "$WJ" | tee "$STEP/wake.txt"
    START_S=$(elapsed "$T0" "$T1")
    read -r WAKE_MED WAKE_MAX < <(awk -v s="$START_S" -v p50="$(jq -r .latency_ms.p50 "$WJ")" \
      -v mx="$(jq -r .latency_ms.max "$WJ")" 'BEGIN { printf "%.2f %.2f\n", s + p50 / 1000, s + mx / 1000 }')
    WAKE_ERRS=$(jq -r .errors "$WJ")
    WAKE_RETRIES=$(jq -r .retries "$WJ")
    echo "tenants=$COUNT concurrency=$WC process_start_s=$START_S median_s=$WAKE_MED all_answering_s=$WAKE_MAX retried_503s=$WAKE_RETRIES errors=$WAKE_ERRS" |
      tee "$STEP/wake-summary.txt"
    WAKE_ROWS+=("| $(bench_fmt_num "$COUNT" 0) | $(bench_fmt_num "$WC" 0) | $(bench_fmt_num "$START_S" 2) s | $WAKE_MED s | $WAKE_MAX s | $WAKE_RETRIES | $WAKE_ERRS |")
    printf '%s\n' "${WAKE_ROWS[-1]}" >>"$RESULTS/wake-rows.md"
    # The next step's memory slopes start from this process, which has
    # answered every tenant once, not from the one before the restart.
    sleep 2
    read -r _ PREV_PRIV < <(bench_mem_kib "$EUNHA_PID")
    read -r PREV_PG_PRIV _ < <(bench_pg_mem_kib "$TMP/pg")
  fi
done
bench_eunha_stop

{
  echo
  echo "### Density, $(date -u +%Y-%m-%d)"
  echo
  bench_machine_summary
  echo "- PostgreSQL: $PG_SETTINGS. eunha: pooled placement \`$MAIN_DB\` with placement_connections $PLACEMENT_CONNECTIONS; tenant pool $POOL; control pool min $POOL_MIN, idle timeout ${IDLE_TIMEOUT} s; queue poll ${QUEUE_POLL} s, cpu_threads $CPU_THREADS, max_total_connections $MAX_TOTAL, max_connecting $MAX_CONNECTING."
  echo "- Tenants created through the admin API, $CREATE_JOBS requests in flight. Seeding: $USERS users per tenant following each other, $([ "$USERS" -gt 0 ] && echo "$STATUSES" || echo 0) statuses per tenant. Idle window ${WINDOW} s after ${SETTLE} s settling, sampled every ${SAMPLE} s$([ "$WINDOW" -le "$QUEUE_POLL" ] && echo " (shorter than the queue poll: idle figures may read low)"). Load: open loop, mix \`${MIX:-loadgen default}\`, ${LOAD_SECONDS} s per rate after ${LOAD_WARMUP} s warm-up, at most $LOAD_CONNECTIONS connections."
  echo "- Raw output: benchmark-results/$(basename "$RESULTS")/"
  echo
  echo "Idle, after every tenant answered once (per-tenant memory is the slope from the previous step, or from the restarted process after a wake burst; PG conns are client connections to the placement and control databases, average / most, with the average busy in brackets; xact/s/tenant and new PG conns count both databases; Create is the admin POST's p50 / p95 at this step; Disk/tenant is the growth of both databases per tenant added, after VACUUM):"
  echo
  echo "| Tenants | eunha private | eunha private/tenant | eunha RSS | Threads | PG conns | PG private + shared once | PG private/tenant | xact/s/tenant | New PG conns/min | Idle CPU eunha / PG | Create p50 / p95 | Disk/tenant |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${IDLE_ROWS[@]}"
  echo
  echo "Creating tenants (POST /admin/v1/tenants, $CREATE_JOBS in flight) and disk per tenant added: after creating only, after seeding and first answers (raw), and after VACUUM + CHECKPOINT (placement + control); last column the two databases' size after VACUUM:"
  echo
  echo "| Tenants | New | Wall | Tenants/s | p50 | p95 | Max | Disk/tenant, created | Disk/tenant, raw | Disk/tenant, after VACUUM | Placement + control |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${CREATE_ROWS[@]}"
  echo
  echo "Every tenant's first request after a step (64 at a time; a 503 is asked again after its Retry-After for up to ${ANSWER_RETRY} s and the time counts from the first ask; Wall is the first pass from start to last answer):"
  echo
  echo "| Tenants | New | p50 | Max | Wall | 503s asked again | Errors, first pass | Passes |"
  echo "|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${ANSWER_ROWS[@]}"
  echo
  echo "Open-loop load spread evenly over every tenant:"
  echo
  echo "| Tenants | Offered req/s | Achieved req/s | p50 | p95 | p99 | Errors | eunha CPU/req | PostgreSQL CPU/req | loadgen CPU | Warm-up p95 |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  [ "${#LOAD_ROWS[@]}" -gt 0 ] && printf '%s\n' "${LOAD_ROWS[@]}"
  if [ "${#WAKE_ROWS[@]}" -gt 0 ]; then
    echo
    echo "Wake burst after a restart (every tenant due at once over at most the connections shown; a 503 is asked again after its Retry-After for up to ${WAKE_TIMEOUT} s, and a tenant's time runs from the restart to its first answer):"
    echo
    echo "| Tenants | Connections | Process start | Median | All answering | 503s asked again | Errors |"
    echo "|---|---|---|---|---|---|---|"
    printf '%s\n' "${WAKE_ROWS[@]}"
  fi
} >"$RESULTS/table.md"
cat "$RESULTS/table.md"
if [ "$NO_README" != 1 ]; then
  cat "$RESULTS/table.md" >>"$ROOT/benchmark-results/README.md"
  eu_log "appended to benchmark-results/README.md"
fi
