#!/usr/bin/env bash
# Measures one small instance: a ten-user tenant on one eunha process, under
# eunha-loadgen in closed loop. Repeated for each tenant pool size (the most
# placement connections the tenant borrows at once), each with fresh
# databases, to find the pool size past which more connections buy nothing.
# Each pool size runs several modes one after another on the same seeded
# tenant, each its own row: the default mix (hot and read-heavy: home and
# public timelines, notifications, account reads, 5% status writes), and one
# request kind alone, so that a slow kind is not averaged away by the others:
#   home     GET /api/v1/timelines/home, every user (each follows the author)
#   verify   GET /api/v1/accounts/verify_credentials as the author (u1) only
#   post     POST /api/v1/statuses, every user; run it last, since it grows
#            the statuses table the other modes read
#   post1    the same with one client whatever EUNHA_BENCH_CONCURRENCY says:
#            "post post1" shows how a tenant's concurrent posts scale (the
#            "Posters" table: post's posts/s over post1's)
#
# Layout: the pooled default. The tenant lives in the placement database
# <control database>_main, which keeps [database] placement_connections open
# (at least the pool size, so the largest pool is not capped by it); creating
# the tenant is one control row. "Create" is that admin POST's time, and
# "Tenant on disk" the growth of the placement and control databases from
# before the tenant was created to after seeding (no VACUUM, so dead rows
# left by seeding count, unless a big author was seeded: see below).
#
# It builds Release binaries into build-bench/ (BENCH_BUILD=DIR for another
# directory), starts a private PostgreSQL
# cluster and Redis server on free 127.0.0.1 ports (Redis keys under a
# per-run prefix), and removes all of it on exit, Ctrl-C included. Raw output
# goes to benchmark-results/small-DATE/ (git-ignored); the tables are appended
# to benchmark-results/README.md.
#
# Knobs (environment):
#   EUNHA_BENCH_SECONDS=20        measured seconds per pool size and mode
#   EUNHA_BENCH_WARMUP=5          seconds of load before measuring each mode (not counted)
#   EUNHA_BENCH_CONCURRENCY=8     closed-loop clients
#   EUNHA_BENCH_POOLS="1 2 3 5"   pool sizes; each gets its own temporary databases
#   EUNHA_BENCH_MODES="default home verify post"   modes per pool size, in this
#                                 order; a word with "=" is a loadgen --mix of its own
#                                 (e.g. public=1). Default with EUNHA_BENCH_USERS=0: default
#   EUNHA_BENCH_AUTHOR_STATUSES   e.g. "25 10000": repeat everything once per count, with
#                                 the author (u1, whom every other user follows) given
#                                 exactly that many statuses by SQL INSERT after seeding,
#                                 and print each count's ratios against the first
#   EUNHA_BENCH_REFS              e.g. "HEAD~3 HEAD": repeat everything once per commit
#                                 (its eunha built from a git archive export into
#                                 <BENCH_BUILD>-refs/<commit>/, kept for the next run;
#                                 HEAD is the commit, "." the working tree with its
#                                 uncommitted changes), and print each against the
#                                 first. A commit given twice shows the noise. Unset:
#                                 the working tree only
#   EUNHA_BENCH_PLACEMENT_CONNECTIONS   [database] placement_connections (default:
#                                 the larger of 4, the default, and the pool size)
#   EUNHA_BENCH_FOLLOWERS         e.g. "0 1000": repeat everything once per count, with
#                                 every user given that many local followers (accounts
#                                 without a user, so no feed of theirs is in Redis) and
#                                 as many remote ones (all on one host, with a shared
#                                 inbox: one delivery a post, whatever the count) by SQL
#                                 INSERT after seeding; shows whether a post's cost
#                                 grows with its author's followers
#   EUNHA_BENCH_USERS=10          users in the tenant, all following each other
#   EUNHA_BENCH_STATUSES=300      statuses posted before measuring
#   EUNHA_BENCH_IDLE_SECONDS=10   quiet time before the idle memory sample
#   EUNHA_BENCH_MIX               loadgen --mix of the default mode (default: the
#                                 loadgen's read-heavy mix)
#   EUNHA_BENCH_POST_FORMAT=json  json or form bodies for POST /api/v1/statuses
#   EUNHA_BENCH_SAMPLE_SECONDS=0.2  how often memory and connections are sampled
#   EUNHA_BENCH_NO_README=1       do not append to benchmark-results/README.md
#   EUNHA_BENCH_PGSS=1            profile PostgreSQL's statements: pg_stat_statements per
#                                 measured run into <mode>/statements.txt (calls, mean ms,
#                                 buffers per call), and auto_explain's ANALYZE/BUFFERS
#                                 plans of a sample of executions into <mode>/plans.log.
#                                 Both cost PostgreSQL CPU: do not compare its figures
#                                 with runs without it
#   BENCH_BUILD=DIR               build directory (default build-bench/)
#   EUNHA_BENCH_USERS=0 with EUNHA_BENCH_MIX=instance is a smoke test that needs
#   none of the client API.
#
# The issue-11 figures in one run (before and after, a 25- and a
# 10,000-status author, pool 2):
#   EUNHA_BENCH_REFS="HEAD~3 HEAD" EUNHA_BENCH_AUTHOR_STATUSES="25 10000" \
#     EUNHA_BENCH_POOLS=2 scripts/benchmark_small_instance.sh
#
# What the columns mean, and the traps:
# - Peak active DB: the placement's connections seen running a query at once;
#   with one tenant they are all its own (or its queue worker's).
# - Memory: RSS counts the shared binary and libraries; "private" is
#   Private_Clean + Private_Dirty from /proc/PID/smaps_rollup, what this
#   process alone costs. Peak values are sampled, so a spike between samples
#   can be missed; VmHWM (peak RSS, exact) is kept in the raw files.
# - CPU per request divides the process's CPU time over one mode's measured
#   run by the requests answered in it. Each mode's warm-up is a separate
#   loadgen run so that its CPU (and the home feeds it builds in Redis) is
#   not counted against the measured requests. PostgreSQL's CPU includes
#   backends that exited (the postmaster's cutime). Work a request leaves
#   behind (fan-out of a post to followers' feeds) lands in the mode it
#   finished in.
# - Statuses: rows in the statuses table when the mode's measured run began;
#   the posting mode's PostgreSQL CPU per post is at that size.
# - Statistics: the placement is ANALYZEd after seeding, as autovacuum would
#   have done in a tenant's first minute; without it the first modes ran on
#   plans made while the tables were empty (a page of 20 statuses walked all
#   of the tenant's, 300 to 2,000 buffers a statement instead of 70).
# - The big author: with EUNHA_BENCH_AUTHOR_STATUSES the other users post the
#   EUNHA_BENCH_STATUSES and the author none, then its N statuses go in by
#   INSERT in chunks of 10,000 (a chunk is one transaction, and its trigger
#   moves the author's counter row once per status). VACUUM ANALYZE follows,
#   as autovacuum would have long before a real author got there, so "Tenant
#   on disk" is after VACUUM in that case. Home feeds in Redis are dropped so
#   the first read rebuilds them with the new statuses.
# - Other commits (EUNHA_BENCH_REFS) are driven with this script and this
#   tree's load generator, so only the server differs; a commit must accept
#   the config written here and the schema the INSERT above expects
#   (statuses with tenant_id, account_id, text, content).
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
# Split and joined again, so that stray spaces cannot make an empty first
# word or a list of none that is not empty.
read -r -a WORDS <<<"${EUNHA_BENCH_AUTHOR_STATUSES:-}"
AUTHORS=${WORDS[*]}
read -r -a WORDS <<<"${EUNHA_BENCH_REFS:-}"
REFS=${WORDS[*]}
read -r -a WORDS <<<"${EUNHA_BENCH_FOLLOWERS:-}"
FOLLOWERS=${WORDS[*]}
REFS_BUILD=${BENCH_BUILD}-refs
DOMAIN=small.bench.test
if [ "$USERS" = 0 ]; then
  MODES=${EUNHA_BENCH_MODES:-default}
else
  MODES=${EUNHA_BENCH_MODES:-"default home verify post"}
fi

if [ "$USERS" = 0 ] && [ -z "$MIX" ]; then
  eu_die "EUNHA_BENCH_USERS=0 leaves no tokens: set EUNHA_BENCH_MIX too (e.g. instance)" || exit 2
fi
# Everything is checked before the builds, so that a typo does not cost
# minutes of compiling first.
for m in $MODES; do
  case $m in
    default | *=*) ;;
    home | verify | post | post1)
      [ "$USERS" -gt 0 ] || { eu_die "mode '$m' needs users: EUNHA_BENCH_USERS is 0" || exit 2; }
      ;;
    *) eu_die "EUNHA_BENCH_MODES: unknown mode '$m' (default, home, verify, post, post1, or a loadgen mix such as public=1)" || exit 2 ;;
  esac
done
for n in $AUTHORS; do
  case $n in *[!0-9]*) eu_die "EUNHA_BENCH_AUTHOR_STATUSES: '$n' is not a number" || exit 2 ;; esac
done
for n in $FOLLOWERS; do
  case $n in *[!0-9]*) eu_die "EUNHA_BENCH_FOLLOWERS: '$n' is not a number" || exit 2 ;; esac
done
if [ -n "$FOLLOWERS" ] && { [ "$USERS" = 0 ] || [ -n "$AUTHORS" ]; }; then
  eu_die "EUNHA_BENCH_FOLLOWERS needs users and no EUNHA_BENCH_AUTHOR_STATUSES" || exit 2
fi
# The followers' counts take the author-statuses column and loop: one knob
# at a time.
AXIS="Author statuses"
if [ -n "$FOLLOWERS" ]; then
  AUTHORS=$FOLLOWERS
  AXIS="Followers"
fi
if [ -n "$AUTHORS" ] && [ "$USERS" = 0 ]; then
  eu_die "EUNHA_BENCH_AUTHOR_STATUSES needs an author: EUNHA_BENCH_USERS is 0" || exit 2
fi
for p in $POOLS; do
  case $p in *[!0-9]*) eu_die "EUNHA_BENCH_POOLS: '$p' is not a number" || exit 2 ;; esac
done

eu_install_deps
bench_require_cmd jq jq

# The servers to measure: BUILD_LABELS[i] runs BUILD_BINS[i]. Without
# EUNHA_BENCH_REFS, the working tree's alone, as before the knob existed.
BUILD_LABELS=()
BUILD_BINS=()
if [ -z "$REFS" ]; then
  bench_build
  BUILD_LABELS=("working tree")
  BUILD_BINS=("$EUNHA_BIN")
else
  # The load generator always comes from this tree, so that every commit is
  # measured with the same instrument; this tree's server only when asked.
  case " $REFS " in
    *" . "*) bench_build ;;
    *) bench_build eunha-loadgen ;;
  esac
  for ref in $REFS; do
    if [ "$ref" = . ]; then
      BUILD_LABELS+=("$((${#BUILD_LABELS[@]} + 1)): . ($(git -C "$ROOT" rev-parse --short=12 HEAD)$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo " with changes"))")
      BUILD_BINS+=("$EUNHA_BIN")
      continue
    fi
    sha=$(git -C "$ROOT" rev-parse --verify -q "$ref^{commit}") ||
      { eu_die "EUNHA_BENCH_REFS: '$ref' is not a commit" || exit 2; }
    # An export, not a checkout: the repository's worktrees and index stay as
    # they are, and a commit's tree never changes, so its build is reused.
    dir=$REFS_BUILD/${sha:0:12}
    if [ "${BENCH_SKIP_BUILD:-0}" = 1 ]; then
      [ -x "$dir/build/eunha" ] || { eu_die "BENCH_SKIP_BUILD=1 but $dir/build/eunha is missing" || exit 1; }
    else
      if [ ! -f "$dir/src.exported" ]; then
        eu_log "exporting $ref (${sha:0:12}) into $dir/src"
        rm -rf "$dir/src"
        mkdir -p "$dir/src"
        git -C "$ROOT" archive --format=tar "$sha" | tar -x -C "$dir/src"
        touch "$dir/src.exported"
      fi
      eu_log "building eunha at $ref (${sha:0:12})"
      cmake -S "$dir/src" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
      cmake --build "$dir/build" -j"${EUNHA_JOBS:-$(nproc 2>/dev/null || echo 2)}" --target eunha >/dev/null
      [ -x "$dir/build/eunha" ] || { eu_die "building $ref produced no $dir/build/eunha" || exit 1; }
    fi
    # Numbered, so that a commit given twice (to see the noise) reads as two.
    BUILD_LABELS+=("$((${#BUILD_LABELS[@]} + 1)): $ref (${sha:0:12})")
    BUILD_BINS+=("$dir/build/eunha")
  done
fi

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
bench_cleanup_hook() {
  stop_samplers
  bench_eunha_stop
  [ -n "$CURRENT_DB" ] && drop_databases "$CURRENT_DB"
}
bench_trap_cleanup

PGSS=${EUNHA_BENCH_PGSS:-0}
if [ "$PGSS" = 1 ]; then
  EU_PG_EXTRA_CONF="shared_preload_libraries = 'pg_stat_statements, auto_explain'
pg_stat_statements.track = all
pg_stat_statements.track_planning = on
auto_explain.log_min_duration = 0
auto_explain.log_analyze = on
auto_explain.log_buffers = on
auto_explain.sample_rate = 0.002"
  export EU_PG_EXTRA_CONF
fi
eu_pg_start "$TMP/pg" "$PG_PORT" >/dev/null
eu_redis_start "$TMP/redis" "$REDIS_PORT" >/dev/null
bench_admin_token
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

mode_mix() {
  case $1 in
    default) printf '%s\n' "$MIX" ;;
    home) echo home=1 ;;
    verify) echo verify=1 ;;
    post | post1) echo status=1 ;;
    *) printf '%s\n' "$1" ;;
  esac
}

# delete_redis_keys PATTERN : this run's Redis keys matching PATTERN.
delete_redis_keys() {
  redis-cli -h 127.0.0.1 -p "$REDIS_PORT" --scan --pattern "$1" 2>/dev/null |
    head -n 100000 | xargs -r -n 500 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" del >/dev/null 2>&1 || true
}

# seed_author N ACCOUNT_ID PLACEMENT_URL : gives the author N statuses by
# INSERT, which takes seconds where posting 10,000 through the API would take
# minutes (and fan each one out).
seed_author() {
  local n=$1 account=$2 url=$3 from=1 k got
  case $account in '' | *[!0-9]*) eu_die "the author's account id '$account' is not a number" || return 1 ;; esac
  while [ "$from" -le "$n" ]; do
    k=$((n - from + 1 > 10000 ? 10000 : n - from + 1))
    bench_psql "$url" "INSERT INTO statuses (tenant_id, account_id, text, content)
      SELECT a.tenant_id, a.id, 'bench status ' || g, '<p>bench status ' || g || '</p>'
      FROM accounts a, generate_series($from, $((from + k - 1))) g WHERE a.id = $account" >/dev/null
    # Each status moved the author's counter row (where the schema has one)
    # in the same transaction; the next chunk should not walk those versions.
    bench_psql "$url" "VACUUM accounts" >/dev/null
    from=$((from + k))
  done
  bench_psql "$url" "VACUUM ANALYZE" >/dev/null
  got=$(bench_psql "$url" "SELECT count(*) FROM statuses WHERE account_id = $account AND deleted_at IS NULL")
  if [ "$got" != "$n" ]; then
    eu_die "the author has $got statuses after seeding, not $n"
    return 1
  fi
}

# seed_followers N PLACEMENT_URL : N local followers (accounts without a
# user) and N remote ones (on one host, with a shared inbox) for every
# account that has a user.
seed_followers() {
  local n=$1 url=$2
  bench_psql "$url" "INSERT INTO accounts (tenant_id, username, domain, uri, inbox_url,
      shared_inbox_url, followers_url)
    SELECT t.tenant_id, k || g, CASE k WHEN 'rf' THEN 'far.bench.invalid' END,
      CASE k WHEN 'rf' THEN 'https://far.bench.invalid/users/rf' || g END,
      CASE k WHEN 'rf' THEN 'https://far.bench.invalid/users/rf' || g || '/inbox' END,
      CASE k WHEN 'rf' THEN 'https://far.bench.invalid/inbox' END,
      CASE k WHEN 'rf' THEN 'https://far.bench.invalid/users/rf' || g || '/followers' END
    FROM (SELECT DISTINCT tenant_id FROM users) t, generate_series(1, $n) g,
      (VALUES ('lf'), ('rf')) v(k)" >/dev/null
  bench_psql "$url" "INSERT INTO follows (tenant_id, account_id, target_account_id)
    SELECT u.tenant_id, a.id, u.account_id FROM users u JOIN accounts a
      ON a.tenant_id = u.tenant_id AND a.username ~ '^[lr]f[0-9]+\$'" >/dev/null
  bench_psql "$url" "VACUUM ANALYZE" >/dev/null
}

# One line per measured run, for the comparison tables: build, author
# statuses (- when not set), pool, mode, requests, req/s, p50, p95, errors,
# eunha and PostgreSQL CPU ms per request, statuses in the table, and the
# build's index, which tells builds apart when a commit is given twice to
# see the noise.
: >"$RESULTS/results.tsv"
POOL_ROWS=()
MODE_ROWS=()
# The leading columns name the build and the author's statuses, only when
# the run varies them.
row_prefix() {
  local p="|"
  [ -z "$REFS" ] || p="$p $BUILD_LABEL |"
  [ -z "$AUTHORS" ] || p="$p $(bench_fmt_num "$AUTHOR" 0) |"
  printf '%s\n' "$p"
}
head_prefix() {
  local h="|" r="|"
  [ -z "$REFS" ] || { h="$h Build |" && r="$r---|"; }
  [ -z "$AUTHORS" ] || { h="$h $AXIS |" && r="$r---|"; }
  printf '%s\n%s\n' "$h" "$r"
}

# dump_statements DIR LOG_OFFSET : the measured run's statements, most total
# time first, and the plans auto_explain logged since LOG_OFFSET.
dump_statements() {
  local dir=$1 off=$2
  psql "$PLACEMENT_URL" -X -q -P pager=off -c "SELECT calls,
      round((total_exec_time / calls)::numeric, 3) AS mean_ms,
      round((total_plan_time / calls)::numeric, 3) AS plan_ms,
      round(rows::numeric / calls, 1) AS rows,
      round((shared_blks_hit + shared_blks_read)::numeric / calls, 1) AS bufs,
      left(regexp_replace(query, '\s+', ' ', 'g'), 160) AS query
    FROM pg_stat_statements WHERE calls > 0
      AND dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
    ORDER BY total_exec_time + total_plan_time DESC LIMIT 25" >"$dir/statements.txt" 2>&1 || true
  tail -c +"$((off + 1))" "$TMP/pg/log" >"$dir/plans.log" 2>/dev/null || true
}

# machine_ticks : the machine's CPU time so far, all of it and idle (with
# iowait), in clock ticks.
machine_ticks() {
  awk '$1 == "cpu" { print $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9, $5 + $6; exit }' /proc/stat
}

# run_mode MODE : a warm-up and a measured run of MODE against the running
# eunha, and its row. Reads run_pool's globals (CASE, TOKENS, IDLE_RSS...).
run_mode() {
  local mode=$1 dir mix reqs rps p50 p95 errs peak_rss peak_priv peak_active avg_cpu eunha_ms pg_ms
  local e0 e1 p0 p1 t0 t1 nstatuses log0=0 split0 split1 wal0 wal1 split conc=$CONCURRENCY
  local m0 m1 busy r0 r1 own redis_pid
  local -a target mixarg=()
  [ "$mode" != post1 ] || conc=1
  dir=$CASE/${mode//[^A-Za-z0-9_-]/_}
  mkdir -p "$dir"
  mix=$(mode_mix "$mode")
  [ -z "$mix" ] || mixarg=(-m "$mix")
  if [ "$USERS" = 0 ]; then
    target=(-H "$DOMAIN")
  elif [ "$mode" = verify ]; then
    target=(--tokens "$CASE/author.tokens")
  else
    target=(--tokens "$TOKENS")
  fi
  if [ "$WARMUP" != 0 ]; then
    "$LOADGEN_BIN" -p "$BENCH_PUBLIC_PORT" "${target[@]}" "${mixarg[@]}" -c "$conc" \
      -d "$WARMUP" --post-format "$POST_FORMAT" --label "warm-up $RUN_NAME pool $POOL $mode" -q \
      --json "$dir/warmup.json"
  fi
  nstatuses=$(bench_psql "$PLACEMENT_URL" "SELECT count(*) FROM statuses")

  : >"$dir/memory.samples"
  sample_memory "$EUNHA_PID" "$dir/memory.samples" &
  SAMPLER_PIDS+=($!)
  sample_connections "${DB}_main" "$dir/connections.samples" &
  SAMPLER_PIDS+=($!)
  if [ "$PGSS" = 1 ]; then
    bench_psql "$PLACEMENT_URL" "CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()" >/dev/null
    log0=$(stat -c %s "$TMP/pg/log" 2>/dev/null || echo 0)
  fi
  e0=$(bench_cpu_ticks "$EUNHA_PID")
  p0=$(bench_pg_cpu_ticks "$TMP/pg")
  split0=$(bench_pg_cpu_split "$TMP/pg")
  wal0=$(bench_psql "$PLACEMENT_URL" "SELECT pg_current_wal_lsn()")
  m0=$(machine_ticks)
  redis_pid=$(eu_redis_pid "$TMP/redis" || echo 0)
  r0=$(bench_cpu_ticks "$redis_pid")
  t0=$(date +%s.%N)
  eu_log "$RUN_NAME pool $POOL, $mode: ${SECONDS_}s at $conc clients"
  "$LOADGEN_BIN" -p "$BENCH_PUBLIC_PORT" "${target[@]}" "${mixarg[@]}" -c "$conc" \
    -d "$SECONDS_" --post-format "$POST_FORMAT" --label "$RUN_NAME pool $POOL $mode" \
    --json "$dir/loadgen.json" | tee "$dir/loadgen.txt"
  t1=$(date +%s.%N)
  m1=$(machine_ticks)
  r1=$(bench_cpu_ticks "$redis_pid")
  e1=$(bench_cpu_ticks "$EUNHA_PID")
  p1=$(bench_pg_cpu_ticks "$TMP/pg")
  split1=$(bench_pg_cpu_split "$TMP/pg")
  wal1=$(bench_psql "$PLACEMENT_URL" "SELECT pg_current_wal_lsn()")
  stop_samplers
  awk '/^VmHWM:/ { print $2 }' "/proc/$EUNHA_PID/status" >"$dir/vmhwm_kib"
  [ "$PGSS" != 1 ] || dump_statements "$dir" "$log0"
  # The process's counters after the mode (e.g. posts that used a kept
  # audience), cumulative since it started.
  bench_admin GET /metrics >"$dir/metrics.txt" 2>/dev/null || true

  reqs=$(jq -r .requests "$dir/loadgen.json")
  rps=$(jq -r .requests_per_second "$dir/loadgen.json")
  p50=$(jq -r .latency_ms.p50 "$dir/loadgen.json")
  p95=$(jq -r .latency_ms.p95 "$dir/loadgen.json")
  errs=$(jq -r .errors "$dir/loadgen.json")
  peak_rss=$(awk -v m="$IDLE_RSS" '$1 > m { m = $1 } END { print m }' "$dir/memory.samples")
  peak_priv=$(awk -v m="$IDLE_PRIV" '$2 > m { m = $2 } END { print m }' "$dir/memory.samples")
  peak_active=$(awk 'NF == 2 && $1 > m { m = $1 } END { print m + 0 }' "$dir/connections.samples")
  # PostgreSQL's CPU per request by role, and the WAL a request wrote: where
  # a write's cost lands when it is not in its statements.
  split=$(awk -v a="$split0" -v b="$split1" -v t="$TCK" -v n="$reqs" \
    -v w="$(bench_psql "$PLACEMENT_URL" "SELECT pg_wal_lsn_diff('$wal1', '$wal0')")" 'BEGIN {
      split(a, x, " "); split(b, y, " "); if (!n) n = 1
      printf "client=%.3f autovacuum=%.3f background=%.3f reaped=%.3f wal_bytes=%d",
        1000 * (y[1] - x[1]) / t / n, 1000 * (y[2] - x[2]) / t / n,
        1000 * (y[3] - x[3]) / t / n, 1000 * (y[4] - x[4]) / t / n, w / n }')
  # How busy the whole machine was, and how many cores the run's own
  # processes used (eunha, PostgreSQL, Redis, the load generator): a mode
  # that fills the cores measures them, not eunha, and what one client
  # uses bounds what more can gain on this machine.
  busy=$(awk -v a="$m0" -v b="$m1" 'BEGIN { split(a, x, " "); split(b, y, " ")
    t = y[1] - x[1]; printf "%.0f", (t > 0 ? 100 * (1 - (y[2] - x[2]) / t) : 0) }')
  own=$(awk -v e=$((e1 - e0)) -v p=$((p1 - p0)) -v r=$((r1 - r0)) -v t="$TCK" \
    -v lg="$(jq -r '.loadgen.cpu_percent // 0' "$dir/loadgen.json")" \
    -v w="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
    'BEGIN { printf "%.2f", (w > 0 ? (e + p + r) / t / w : 0) + lg / 100 }')
  read -r avg_cpu eunha_ms pg_ms < <(awk -v e=$((e1 - e0)) -v p=$((p1 - p0)) -v t="$TCK" \
    -v w="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" -v n="$reqs" 'BEGIN {
      printf "%.2f %.3f %.3f\n", 100 * e / t / w, (n ? 1000 * e / t / n : 0), (n ? 1000 * p / t / n : 0) }')
  {
    echo "build=$BUILD_LABEL author_statuses=$AUTHOR pool=$POOL mode=$mode mix=${mix:-loadgen-default}"
    echo "statuses=$nstatuses peak_rss_kib=$peak_rss peak_private_kib=$peak_priv vmhwm_kib=$(cat "$dir/vmhwm_kib")"
    echo "avg_cpu_percent=$avg_cpu peak_active_db=$peak_active requests=$reqs rps=$rps p50_ms=$p50 p95_ms=$p95"
    echo "errors=$errs eunha_cpu_ms_per_req=$eunha_ms pg_cpu_ms_per_req=$pg_ms machine_busy_percent=$busy own_cores=$own"
    echo "pg_cpu_ms_per_req_by_role: $split"
  } >"$dir/summary.txt"
  cat "$dir/summary.txt"
  MODE_ROWS+=("$(row_prefix) $POOL | $mode | $(bench_mib "$peak_rss") | $(bench_mib "$peak_priv") | $avg_cpu% | $peak_active | $(bench_fmt_num "$rps" 2) | $(bench_fmt_num "$p50" 2) ms | $(bench_fmt_num "$p95" 2) ms | $(bench_fmt_num "$errs" 0) | $eunha_ms ms | $pg_ms ms | $(bench_fmt_num "$nstatuses" 0) |")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$BUILD_LABEL" "$AUTHOR" "$POOL" "$mode" \
    "$reqs" "$rps" "$p50" "$p95" "$errs" "$eunha_ms" "$pg_ms" "$nstatuses" "$bi" "$busy" "$own" >>"$RESULTS/results.tsv"
}

# run_pool : fresh databases for pool size $POOL, the tenant, seeding, the
# idle sample and every mode.
run_pool() {
  local pc create_ms disk0 disk1 rprefix mode
  eu_log "$RUN_NAME pool $POOL: fresh database, seeding"
  DB=eunha_bench_small_p$POOL
  CURRENT_DB=$DB
  PLACEMENT_URL="postgresql://postgres@127.0.0.1:$PG_PORT/${DB}_main"
  pc=${PLACEMENT_CONNECTIONS:-$((POOL > 4 ? POOL : 4))}
  CASE=$RUN_DIR/pool-$POOL
  # [redis] prefix holds at most 32 characters.
  rprefix=ebs-$RUN_TAG-p$POOL-$$
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
placement_connections = $pc

[database_pool]
max_connections = $POOL
min_connections = 0
acquire_timeout_seconds = 5
idle_timeout_seconds = 20

[workers]
queue_idle_poll_seconds = 300

[redis]
url = "redis://127.0.0.1:$REDIS_PORT/0"
prefix = "$rprefix"

[limits]
# Mastodon's per-token limit (300 requests in 5 minutes) would turn the load
# into 429s; the benchmark measures serving, so the limiter is off (0). The
# set-up signs every user in from one address: past 25 users, that is past
# the per-IP sign-in limit (a key older builds, EUNHA_BENCH_REFS, refuse).
api_requests_per_5min = 0
registrations_per_30min = 0
$(if [ "$USERS" -ge 25 ]; then echo "sign_in_attempts_per_ip_per_5min = 0"; fi)

[log]
level = "warn"
EOF
  bench_eunha_start "$CASE/eunha.toml" "$TMP"
  # Disk before the tenant: the placement and control databases as eunha
  # made them at start.
  read -r disk0 < <(bench_psql "$PG_URL" "SELECT $(bench_pg_db_bytes_sql "'${DB}_main'") + $(bench_pg_db_bytes_sql "'$DB'")")
  # The tenant, created through the admin API and timed by the load generator.
  "$LOADGEN_BIN" -p "$BENCH_ADMIN_PORT" -H "$DOMAIN" -m tenant -n 1 -c 1 -t 60 \
    --admin-token-file "$TMP/admin_token" --label "create $DOMAIN" -q --json "$CASE/create.json"
  if [ "$(jq -r '.status."201" // 0' "$CASE/create.json")" != 1 ]; then
    eu_die "creating $DOMAIN failed: $(jq -c '.errors_by_kind, .status' "$CASE/create.json")"
    exit 1
  fi
  create_ms=$(jq -r '.latency_ms.max * 100 | round / 100' "$CASE/create.json")
  bench_admin PATCH "/admin/v1/tenants/$DOMAIN" \
    "{\"max_connections\":$POOL,\"min_connections\":0,\"idle_timeout_seconds\":20}" >/dev/null
  bench_wait_answer "$DOMAIN" 30
  TOKENS=$CASE/tokens
  : >"$TOKENS"
  chmod 600 "$TOKENS"
  if [ "$USERS" -gt 0 ]; then
    bench_seed_tenant "$DOMAIN" "$USERS" "$TOKENS"
    # The author is u1, the first line, whom every other user follows.
    (umask 077 && head -n 1 "$TOKENS" >"$CASE/author.tokens")
    if [ "$AUTHOR" = - ] || [ -n "$FOLLOWERS" ]; then
      bench_seed_statuses "$TOKENS" "$STATUSES" "$CASE"
      if [ -n "$FOLLOWERS" ] && [ "$AUTHOR" != 0 ]; then
        eu_log "$RUN_NAME pool $POOL: $AUTHOR local and $AUTHOR remote followers for every user"
        seed_followers "$AUTHOR" "$PLACEMENT_URL"
      fi
      # Statistics as autovacuum leaves them within a minute of the first
      # writes (its naptime), so that the measured modes run on the plans a
      # tenant lives with, not on the ones made while its tables were
      # empty; ANALYZE invalidates eunha's cached plans.
      bench_psql "$PLACEMENT_URL" "ANALYZE" >/dev/null
    else
      # The author posts nothing through the API, so that it has exactly
      # $AUTHOR statuses whatever EUNHA_BENCH_STATUSES is.
      (umask 077 && tail -n +2 "$TOKENS" >"$CASE/others.tokens")
      bench_seed_statuses "$CASE/others.tokens" "$STATUSES" "$CASE"
      eu_log "$RUN_NAME pool $POOL: $AUTHOR statuses for the author by INSERT"
      seed_author "$AUTHOR" "$(awk 'NR == 1 { print $3 }' "$TOKENS")" "$PLACEMENT_URL"
      delete_redis_keys "$rprefix*feed:home:*"
    fi
  fi
  read -r disk1 < <(bench_psql "$PG_URL" "SELECT $(bench_pg_db_bytes_sql "'${DB}_main'") + $(bench_pg_db_bytes_sql "'$DB'")")

  eu_log "$RUN_NAME pool $POOL: idle ${IDLE_SECONDS}s"
  sleep "$IDLE_SECONDS"
  read -r IDLE_RSS IDLE_PRIV < <(bench_mem_kib "$EUNHA_PID")
  {
    echo "build=$BUILD_LABEL author_statuses=$AUTHOR pool=$POOL idle_rss_kib=$IDLE_RSS idle_private_kib=$IDLE_PRIV"
    echo "placement_connections=$pc create_ms=$create_ms tenant_disk_bytes=$((disk1 - disk0)) disk_before_bytes=$disk0 disk_after_seeding_bytes=$disk1"
  } >"$CASE/summary.txt"
  cat "$CASE/summary.txt"
  POOL_ROWS+=("$(row_prefix) $POOL | $(bench_mib "$IDLE_RSS") | $(bench_mib "$IDLE_PRIV") | $create_ms ms | $(bench_bytes $((disk1 - disk0))) |")

  for mode in $MODES; do
    run_mode "$mode"
  done

  bench_eunha_stop
  drop_databases "$DB"
  delete_redis_keys "$rprefix*"
  CURRENT_DB=
}

for ((bi = 0; bi < ${#BUILD_BINS[@]}; bi++)); do
  EUNHA_BIN=${BUILD_BINS[bi]}
  BUILD_LABEL=${BUILD_LABELS[bi]}
  ai=0
  for AUTHOR in ${AUTHORS:--}; do
    ai=$((ai + 1))
    RUN_TAG=b$bi-a$ai
    RUN_DIR=$RESULTS
    WORDS=()
    if [ -n "$REFS" ]; then
      RUN_DIR=$RUN_DIR/build-$((bi + 1))
      WORDS+=("build $((bi + 1))")
      printf '%s\n' "$BUILD_LABEL" >"$RESULTS/build-$((bi + 1)).label"
    fi
    if [ -n "$AUTHORS" ]; then
      RUN_DIR=$RUN_DIR/author-$AUTHOR
      WORDS+=("author $AUTHOR")
    fi
    RUN_NAME=${WORDS[*]:-small}
    mkdir -p "$RUN_DIR"
    for POOL in $POOLS; do
      run_pool
    done
  done
done

# awk helpers for the comparisons: num(x, d) with thousands separators, and
# ratio(a, b) as "a/b×" (– when b is 0).
AWK_FMT='
  function num(x, d,   s, i, ip, fp) {
    s = sprintf("%." d "f", x); i = index(s, "."); ip = (i ? substr(s, 1, i - 1) : s); fp = (i ? substr(s, i) : "")
    while (length(ip) > 3 && substr(ip, length(ip) - 3, 1) ~ /[0-9]/) { fp = "," substr(ip, length(ip) - 2) fp; ip = substr(ip, 1, length(ip) - 3) }
    return ip fp }
  function ratio(a, b) { return (b + 0 > 0 ? sprintf("%.2f×", a / b) : "–") }
'

# compare_authors : each author size against the first, for the same build,
# pool and mode, "first → this" with the ratios.
compare_authors() {
  local first=${AUTHORS%% *} b="" r=""
  [ -z "$REFS" ] || { b="Build | " && r="---|"; }
  echo "| ${b}Pool | Mode | $AXIS | Requests/s | Slower by | p95 | eunha CPU/req | × | PostgreSQL CPU/req | × |"
  echo "|${r}---|---|---|---|---|---|---|---|---|---|"
  awk -F'\t' -v first="$first" -v showbuild="${REFS:+1}" "$AWK_FMT"'
    { key = $13 SUBSEP $3 SUBSEP $4
      if ($2 == first) { rps[key] = $6; p95[key] = $8; e[key] = $10; p[key] = $11 }
      else rows[++n] = $0 }
    END { for (i = 1; i <= n; i++) {
      split(rows[i], r, "\t"); key = r[13] SUBSEP r[3] SUBSEP r[4]
      if (!(key in rps)) continue
      printf "|%s %s | %s | %s → %s | %s → %s | %s | %s → %s ms | %s → %s ms | %s | %s → %s ms | %s |\n",
        (showbuild ? " " r[1] " |" : ""), r[3], r[4], num(first, 0), num(r[2], 0),
        num(rps[key], 2), num(r[6], 2), ratio(rps[key], r[6]), num(p95[key], 2), num(r[8], 2),
        e[key], r[10], ratio(r[10], e[key]), p[key], r[11], ratio(r[11], p[key]) } }' "$RESULTS/results.tsv"
}

# compare_builds : each build against the first, for the same author size,
# pool and mode, "first → this".
compare_builds() {
  local a="" r=""
  [ -z "$AUTHORS" ] || { a="$AXIS | " && r="---|"; }
  echo "| ${a}Pool | Mode | Builds | Requests/s | × | p50 | p95 | eunha CPU/req | PostgreSQL CPU/req | eunha + PostgreSQL CPU/req |"
  echo "|${r}---|---|---|---|---|---|---|---|---|---|"
  awk -F'\t' -v first="${BUILD_LABELS[0]}" -v showauthor="${AUTHORS:+1}" "$AWK_FMT"'
    { key = $2 SUBSEP $3 SUBSEP $4
      if ($13 == 0) { rps[key] = $6; p50[key] = $7; p95[key] = $8; e[key] = $10; p[key] = $11 }
      else rows[++n] = $0 }
    END { for (i = 1; i <= n; i++) {
      split(rows[i], r, "\t"); key = r[2] SUBSEP r[3] SUBSEP r[4]
      if (!(key in rps)) continue
      printf "|%s %s | %s | %s → %s | %s → %s | %s | %s → %s ms | %s → %s ms | %s → %s ms | %s → %s ms | %.3f → %.3f ms |\n",
        (showauthor ? " " num(r[2], 0) " |" : ""), r[3], r[4], first, r[1],
        num(rps[key], 2), num(r[6], 2), ratio(r[6], rps[key]), num(p50[key], 2), num(r[7], 2),
        num(p95[key], 2), num(r[8], 2), e[key], r[10], p[key], r[11], e[key] + p[key], r[10] + r[11] } }' "$RESULTS/results.tsv"
}

# compare_posters : post's posts/s over post1's, for each build, count and pool.
compare_posters() {
  local b="" a="" r=""
  [ -z "$REFS" ] || { b="Build | " && r="---|"; }
  [ -z "$AUTHORS" ] || { a="$AXIS | " && r="$r---|"; }
  echo "| ${b}${a}Pool | Posts/s, 1 poster | Posts/s, $CONCURRENCY posters | × | PostgreSQL CPU/post, 1 / $CONCURRENCY | Cores used, 1 / $CONCURRENCY | Machine busy, 1 / $CONCURRENCY |"
  echo "|${r}---|---|---|---|---|---|---|"
  awk -F'\t' -v showbuild="${REFS:+1}" -v showauthor="${AUTHORS:+1}" "$AWK_FMT"'
    { key = $13 SUBSEP $2 SUBSEP $3
      if ($4 == "post1") { one[key] = $6; p1[key] = $11; b1[key] = $14; c1[key] = $15; label[key] = $1; au[key] = $2; pool[key] = $3; keys[++n] = key }
      else if ($4 == "post") { many[key] = $6; pm[key] = $11; bm[key] = $14; cm[key] = $15 } }
    END { for (i = 1; i <= n; i++) { k = keys[i]; if (!(k in many)) continue
      printf "|%s%s %s | %s | %s | %s | %s / %s ms | %s / %s | %s%% / %s%% |\n", (showbuild ? " " label[k] " |" : ""),
        (showauthor ? " " num(au[k], 0) " |" : ""), pool[k], num(one[k], 2), num(many[k], 2),
        ratio(many[k], one[k]), p1[k], pm[k], c1[k], cm[k], b1[k], bm[k] } }' "$RESULTS/results.tsv"
}

LOADGEN_CPU=$(find "$RESULTS" -name loadgen.json -exec jq -r '.loadgen.cpu_percent' {} + | awk '$1 > m { m = $1 } END { printf "%.0f", m }')
{
  echo
  echo "### Small instance, $(date -u +%Y-%m-%d)"
  echo
  bench_machine_summary
  if [ -n "$REFS" ]; then
    for ((bi = 0; bi < ${#BUILD_BINS[@]}; bi++)); do
      echo "- Build ${BUILD_LABELS[bi]}, $("${BUILD_BINS[bi]}" version 2>/dev/null | head -n 1)"
    done
  fi
  echo "- Settings: $CONCURRENCY closed-loop clients, ${SECONDS_} s measured after ${WARMUP} s warm-up per mode, $USERS users, $([ "$USERS" -gt 0 ] && echo "$STATUSES" || echo 0) seeded statuses$([ -n "$FOLLOWERS" ] && echo ", every user given ${FOLLOWERS// / or } local and as many remote followers by INSERT (a run each)")$([ -z "$AUTHORS" ] || [ -n "$FOLLOWERS" ] || echo " by the users other than the author (u1), whom they all follow and who has ${AUTHORS// / or } statuses by INSERT (a run each)"), modes \`$MODES\` (default: mix \`${MIX:-loadgen default}\`; verify as the author), statuses as $POST_FORMAT; PostgreSQL defaults from scripts/lib/services.sh; eunha cpu_threads 2, pooled placement with placement_connections $(if [ -n "$PLACEMENT_CONNECTIONS" ]; then echo "$PLACEMENT_CONNECTIONS"; else echo "max(4, pool)"; fi). Create: the admin POST that made the tenant; Tenant on disk: growth of the placement and control databases from before it to after seeding. Statuses: rows in the statuses table when the mode's measured run began. The load generator used at most ${LOADGEN_CPU}% of a core."
  echo "- Raw output: benchmark-results/$(basename "$RESULTS")/"
  echo
  head_prefix | sed -e '1s/$/ Pool | Idle RSS | Idle private | Create | Tenant on disk |/' -e '2s/$/---|---|---|---|---|/'
  printf '%s\n' "${POOL_ROWS[@]}"
  echo
  head_prefix | sed -e '1s/$/ Pool | Mode | Peak RSS | Peak private | Avg CPU | Peak active DB | Requests\/s | p50 | p95 | Errors | eunha CPU\/req | PostgreSQL CPU\/req | Statuses |/' \
    -e '2s/$/---|---|---|---|---|---|---|---|---|---|---|---|---|/'
  printf '%s\n' "${MODE_ROWS[@]}"
  if [ "$(wc -w <<<"$AUTHORS")" -gt 1 ]; then
    echo
    echo "Each $(echo "$AXIS" | tr '[:upper:]' '[:lower:]') count against the first (Slower by: the first's requests/s ÷ this one's; ×: this one's CPU per request ÷ the first's):"
    echo
    compare_authors
  fi
  if grep -q "	post1	" "$RESULTS/results.tsv"; then
    echo
    echo "Posters: $CONCURRENCY concurrent posters (post) against one (post1) on the same tenant. Cores used: the CPU of eunha, PostgreSQL, Redis and the load generator over the run's seconds; $(nproc) cores here, so $CONCURRENCY posters can gain at most $(nproc) ÷ one poster's cores over one:"
    echo
    compare_posters
  fi
  if [ "${#BUILD_BINS[@]}" -gt 1 ]; then
    echo
    echo "Each build against the first (×: this build's requests/s ÷ the first's):"
    echo
    compare_builds
  fi
} >"$RESULTS/table.md"
cat "$RESULTS/table.md"
if [ "${EUNHA_BENCH_NO_README:-0}" != 1 ]; then
  cat "$RESULTS/table.md" >>"$ROOT/benchmark-results/README.md"
  eu_log "appended to benchmark-results/README.md"
fi
