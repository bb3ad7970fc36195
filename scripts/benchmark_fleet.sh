#!/usr/bin/env bash
# A fleet on one machine (issue 30, "Figures"): two PostgreSQL servers, the
# second with a synchronous streaming standby, two Redis servers, three
# eunha processes on one control database and HAProxy in front of their
# public listeners, all over loopback. EUNHA_FLEET_TENANTS tenants (1,000)
# are spread evenly over placement "main" (the first PostgreSQL server and
# Redis) and placement "second" (the second ones), and the full mix of the
# load generator is offered open loop through HAProxy. Then, one at a time:
#
#  a. the same load with one process behind HAProxy instead of three;
#  b. one process SIGKILLed under load: the errors around it (which kind),
#     seconds until the p95 of each second is back under the threshold,
#     and ping jobs enqueued just before it, each of which must run once;
#  c. the second PostgreSQL server stopped: each group's answer codes, and
#     the other group's p95 against its own just before;
#  d. the second Redis server stopped: each group's answer codes to reads;
#  e. a tenant of EUNHA_FLEET_BIG_STATUSES statuses moved from main to
#     second under EUNHA_FLEET_MOVE_RATE writes/s of its own: the write
#     pause (the move's answer's write_pause_ms, else its wall time), the
#     acknowledged statuses missing on the target, the errors but 503;
#  f. the second server's primary SIGKILLed under writes and its standby
#     promoted: acknowledged statuses missing on the promoted standby, and
#     seconds from the promotion until a tenant there takes a write again.
#
# It builds Release binaries into build-bench/ as the other benchmarks do
# (BENCH_SKIP_BUILD=1 to reuse them), prints progress to stderr and the
# figures table (measure | figure | target) to stdout and appends it to
# benchmark-results/README.md as the other benchmarks do
# (EUNHA_BENCH_NO_README=1: not), keeps raw output in
# benchmark-results/fleet-DATE/ (git-ignored), and stops every server it
# started on exit, Ctrl-C included. EUNHA_FLEET_PHASES runs some of the
# measures only (the set-up is the same).
#
# Traps, and what the script does instead:
# - Accounts, tokens and statuses are written into the placements with SQL,
#   as the integration harness seeds them (eu_it_account_seed_in,
#   eu_it_token_in): through the API each account and each token costs a
#   password hash and a key pair, which for 2,000 users would be minutes of
#   both cores and measure nothing this benchmark is about.
# - The per-second p95 of a run is read from the load generator's --log,
#   by when each request was due (open loop: queueing counts).
# - The load generator is one process per tenant group where a group's
#   figure is wanted (c, d): a group whose requests hang would otherwise
#   hold connections and delay the other group's requests in our queue.
# - A process killed while it holds a job leaves the job locked until
#   [workers] job_lock_seconds (5 here) has passed; the jobs are counted
#   only after that and every survivor had a chance to claim them.
# - The machine has two cores shared with everything here (and with
#   whatever else runs): 3 processes vs 1 is about correctness, not scale.
set -euo pipefail

# ---- knobs -----------------------------------------------------------------
TENANTS=${EUNHA_FLEET_TENANTS:-1000}       # spread evenly over main and second
USERS=${EUNHA_FLEET_USERS:-2}              # users (with a token) per tenant
STATUSES=${EUNHA_FLEET_STATUSES:-5}        # statuses per user, by INSERT
RATE=${EUNHA_FLEET_RATE:-600}              # open-loop requests/s of the full mix
SECONDS_=${EUNHA_FLEET_SECONDS:-20}        # measured seconds of a, b
GROUP_SECONDS=${EUNHA_FLEET_GROUP_SECONDS:-12} # measured seconds of each run of c, d
C_CYCLES=${EUNHA_FLEET_C_CYCLES:-3}            # up/down window pairs in c
WARMUP=${EUNHA_FLEET_WARMUP:-4}            # unmeasured seconds before each run
CONNECTIONS=${EUNHA_FLEET_CONNECTIONS:-256} # most loadgen connections
MIX=${EUNHA_FLEET_MIX:-home=30,public=20,notifications=20,verify=10,account=15,status=5}
READ_MIX=${EUNHA_FLEET_READ_MIX:-home=30,public=20,notifications=20,verify=10,account=15}
KILL_AT=${EUNHA_FLEET_KILL_AT:-8}          # b: seconds into the window
P95_FACTOR=${EUNHA_FLEET_P95_FACTOR:-1.5}  # b: "back" is p95 <= this x the p95 before the kill
JOB_TENANTS=${EUNHA_FLEET_JOB_TENANTS:-20} # b: tenants given ping jobs
JOBS_EACH=${EUNHA_FLEET_JOBS_EACH:-5}      # b: ping jobs per tenant
JOB_HOLD_MS=${EUNHA_FLEET_JOB_HOLD_MS:-3000} # b: how long each ping's first attempt holds its lock
BIG_STATUSES=${EUNHA_FLEET_BIG_STATUSES:-10000} # e: the moved tenant's statuses
MOVE_RATE=${EUNHA_FLEET_MOVE_RATE:-50}     # e: its writes/s during the move
MOVE_SECONDS=${EUNHA_FLEET_MOVE_SECONDS:-25} # e: measured seconds; the move starts 5 s in
FAIL_RATE=${EUNHA_FLEET_FAIL_RATE:-50}     # f: writes/s on second's tenants
FAIL_SECONDS=${EUNHA_FLEET_FAIL_SECONDS:-25} # f: measured seconds; the kill is 5 s in
# Which measures to run, in this order whatever the list's (f kills the
# second server's primary, so it comes last); e.g. "e" to see a move alone.
PHASES=${EUNHA_FLEET_PHASES:-a b c d e f}
PLACEMENT_CONNECTIONS=${EUNHA_FLEET_PLACEMENT_CONNECTIONS:-8}
QUEUE_POLL=${EUNHA_FLEET_QUEUE_POLL:-60}
# ----------------------------------------------------------------------------

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/lib/services.sh
. "$ROOT/scripts/lib/services.sh"
# shellcheck source=scripts/lib/bench.sh
. "$ROOT/scripts/lib/bench.sh"

is_uint() { case $1 in '' | *[!0-9]*) return 1 ;; esac }
want() { case " $PHASES " in *" $1 "*) return 0 ;; *) return 1 ;; esac }
for phase in $PHASES; do
  case $phase in a | b | c | d | e | f) ;; *)
    eu_die "EUNHA_FLEET_PHASES: '$phase' is not one of a b c d e f"
    exit 2
    ;;
  esac
done
for v in TENANTS USERS STATUSES RATE SECONDS_ GROUP_SECONDS WARMUP CONNECTIONS KILL_AT JOB_TENANTS JOBS_EACH JOB_HOLD_MS BIG_STATUSES MOVE_RATE MOVE_SECONDS FAIL_RATE FAIL_SECONDS PLACEMENT_CONNECTIONS QUEUE_POLL; do
  is_uint "${!v}" || {
    eu_die "EUNHA_FLEET_${v%_} must be a whole number, not '${!v}'"
    exit 2
  }
done
if [ "$TENANTS" -lt 2 ] || [ "$USERS" -lt 1 ] || [ "$KILL_AT" -ge "$SECONDS_" ]; then
  eu_die "need at least 2 tenants, 1 user, and EUNHA_FLEET_KILL_AT inside EUNHA_FLEET_SECONDS"
  exit 2
fi
[ "$JOB_TENANTS" -le "$TENANTS" ] || JOB_TENANTS=$TENANTS

eu_install_deps haproxy
bench_require_cmd jq jq
bench_require_cmd haproxy haproxy
bench_require_cmd openssl openssl
bench_build
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

RESULTS=$(bench_results_dir fleet)
TMP=$(bench_make_tmp eunha-bench-fleet)
PROCS=3
PG1_PORT=$(eu_free_port)
PG2_PORT=$(eu_free_port "$PG1_PORT")
PG2S_PORT=$(eu_free_port "$PG1_PORT" "$PG2_PORT")
R1_PORT=$(eu_free_port "$PG1_PORT" "$PG2_PORT" "$PG2S_PORT")
R2_PORT=$(eu_free_port "$PG1_PORT" "$PG2_PORT" "$PG2S_PORT" "$R1_PORT")
USED=("$PG1_PORT" "$PG2_PORT" "$PG2S_PORT" "$R1_PORT" "$R2_PORT")
HAPROXY_PORT=$(eu_free_port "${USED[@]}")
USED+=("$HAPROXY_PORT")
PUB=() ADM=() PIDS=()
for ((i = 1; i <= PROCS; i++)); do
  PUB[i]=$(eu_free_port "${USED[@]}")
  USED+=("${PUB[i]}")
  ADM[i]=$(eu_free_port "${USED[@]}")
  USED+=("${ADM[i]}")
done
DB=eunha_fleet
PG2_URL="postgresql://postgres@127.0.0.1:$PG2_PORT/postgres"
CONTROL_URL="postgresql://postgres@127.0.0.1:$PG1_PORT/$DB"
MAIN_URL="postgresql://postgres@127.0.0.1:$PG1_PORT/${DB}_main"
SECOND_DB=${DB}_second
SECOND_URL="postgresql://postgres@127.0.0.1:$PG2_PORT/$SECOND_DB"
SECOND_STANDBY_URL="postgresql://postgres@127.0.0.1:$PG2S_PORT/$SECOND_DB"
# libpq's failover: each new connection takes the first host that accepts
# writes, so after the standby's promotion the pools find it.
SECOND_PLACEMENT_URL="postgresql://postgres@127.0.0.1:$PG2_PORT,127.0.0.1:$PG2S_PORT/$SECOND_DB?target_session_attrs=read-write"
BIG=big.fleet.test # e's tenant
HAPROXY_PID=
BG_PIDS=()

# shellcheck disable=SC2317 # invoked through traps
bench_cleanup_hook() {
  local p i
  for p in "${BG_PIDS[@]}"; do
    kill "$p" 2>/dev/null || true
  done
  for ((i = 1; i <= PROCS; i++)); do
    proc_stop "$i" || true
    [ -f "$TMP/eunha$i.log" ] && cp "$TMP/eunha$i.log" "$RESULTS/" 2>/dev/null
  done
  if [ -n "$HAPROXY_PID" ]; then
    kill "$HAPROXY_PID" 2>/dev/null || true
    wait "$HAPROXY_PID" 2>/dev/null || true
  fi
  eu_pg_stop "$TMP/pg2" || true
  eu_pg_stop "$TMP/pg2s" || true
  eu_redis_stop "$TMP/redis2" || true
}
bench_trap_cleanup

# proc_start I : eunha process I on its own listeners (the same ports each
# time, so that HAProxy's list stays right across a restart).
proc_start() {
  local i=$1 ready=$TMP/ready$1 k
  rm -f "$ready"
  "$EUNHA_BIN" serve -c "$RESULTS/eunha$i.toml" --ready-file "$ready" >>"$TMP/eunha$i.log" 2>&1 &
  PIDS[i]=$!
  for ((k = 0; k < 1200; k++)); do
    [ -s "$ready" ] && return 0
    if ! kill -0 "${PIDS[i]}" 2>/dev/null; then
      tail -n 20 "$TMP/eunha$i.log" >&2
      PIDS[i]=
      eu_die "eunha process $i exited during startup (log: $TMP/eunha$i.log)"
      return 1
    fi
    sleep 0.1
  done
  eu_die "eunha process $i wrote no ready file within 120 s"
}

# proc_stop I : SIGTERM, SIGKILL after 30 s.
proc_stop() {
  local pid=${PIDS[$1]:-} k
  [ -n "$pid" ] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((k = 0; k < 300; k++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  PIDS[$1]=
}

# wait_haproxy_up N : until HAProxy sees N servers up (its stats page).
wait_haproxy_up() {
  local n=$1 k up=0
  for ((k = 0; k < 150; k++)); do
    up=$(curl -s --max-time 2 "http://127.0.0.1:$HAPROXY_PORT/haproxy-stats;csv" |
      awk -F, '$1 == "eunha" && $2 ~ /^e[0-9]+$/ && $18 ~ /^UP/ { n++ } END { print n + 0 }') || up=0
    [ "$up" -ge "$n" ] && return 0
    sleep 0.2
  done
  eu_die "HAProxy sees $up of $n eunha processes up after 30 s"
}

# ---- servers -----------------------------------------------------------------
eu_log "servers: PostgreSQL $PG1_PORT, $PG2_PORT (standby $PG2S_PORT), Redis $R1_PORT, $R2_PORT"
eu_pg_start "$TMP/pg" "$PG1_PORT" >/dev/null
eu_pg_start "$TMP/pg2" "$PG2_PORT" >/dev/null
eu_pg_standby_start "$TMP/pg2s" "$PG2S_PORT" "$PG2_PORT" >/dev/null
# Synchronous: a commit is acknowledged once the standby has it, which is
# what lets a promotion lose nothing acknowledged.
bench_psql "$PG2_URL" "ALTER SYSTEM SET synchronous_standby_names = 'pg2s'" >/dev/null
bench_psql "$PG2_URL" "SELECT pg_reload_conf()" >/dev/null
eu_redis_start "$TMP/redis" "$R1_PORT" >/dev/null
eu_redis_start "$TMP/redis2" "$R2_PORT" >/dev/null
for ((k = 0; k < 100; k++)); do
  [ "$(bench_psql "$PG2_URL" "SELECT count(*) FROM pg_stat_replication WHERE application_name = 'pg2s' AND sync_state = 'sync'")" = 1 ] && break
  sleep 0.1
done
[ "$k" -lt 100 ] || {
  eu_die "the standby of the second server is not synchronous"
  exit 1
}

bench_admin_token
for ((i = 1; i <= PROCS; i++)); do
  cat >"$RESULTS/eunha$i.toml" <<EOF
[server]
listen = "127.0.0.1:${PUB[i]}"
admin_listen = "127.0.0.1:${ADM[i]}"
scheme = "http"
cpu_threads = 2

[admin]
token_file = "$TMP/admin_token"

[database]
url = "$CONTROL_URL"
template = "${DB}_template"
placement_connections = $PLACEMENT_CONNECTIONS

[database_pool]
max_connections = 2
min_connections = 0
acquire_timeout_seconds = 5
idle_timeout_seconds = 20

[workers]
queue_idle_poll_seconds = $QUEUE_POLL
job_lock_seconds = 5

[redis]
url = "redis://127.0.0.1:$R1_PORT/0"
prefix = "eunha-fleet-$$"

[limits]
# The benchmark measures serving: no API rate limit (see benchmark_density.sh).
api_requests_per_5min = 0
registrations_per_30min = 0
sign_in_attempts_per_ip_per_5min = 0

[log]
level = "warn"
EOF
done
# The first process migrates the control and main databases; the others
# start on them.
proc_start 1
for ((i = 2; i <= PROCS; i++)); do proc_start "$i"; done
BENCH_ADMIN_PORT=${ADM[1]}
BENCH_PUBLIC_PORT=$HAPROXY_PORT

{
  cat <<EOF
# Written by scripts/benchmark_fleet.sh: round robin over the eunha
# processes' public listeners, each checked on its admin listener's /healthz.
global
  maxconn 8000
  nbthread 1

defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  timeout queue 30s
  timeout http-keep-alive 60s
  option http-keep-alive
  # A connection refused by a dead process is tried on another one; a
  # request that reached a process is never sent twice.
  option redispatch
  retries 2

frontend fleet
  bind 127.0.0.1:$HAPROXY_PORT
  stats enable
  stats uri /haproxy-stats
  default_backend eunha

backend eunha
  balance roundrobin
  option httpchk GET /healthz
  http-check expect status 200
  # Every connection from HAProxy comes from one address, and eunha
  # refuses more than [limits] max_connections_per_ip (256) from one: a
  # server's maxconn below that makes HAProxy queue the rest instead.
  default-server inter 500ms fastinter 250ms downinter 500ms fall 2 rise 2 maxconn 200
EOF
  for ((i = 1; i <= PROCS; i++)); do
    echo "  server e$i 127.0.0.1:${PUB[i]} check port ${ADM[i]}"
  done
} >"$RESULTS/haproxy.cfg"
haproxy -f "$RESULTS/haproxy.cfg" -db >"$RESULTS/haproxy.log" 2>&1 &
HAPROXY_PID=$!
wait_haproxy_up "$PROCS"

# ---- tenants -------------------------------------------------------------------
eu_log "placement second on 127.0.0.1:$PG2_PORT (standby $PG2S_PORT) and Redis $R2_PORT"
# Registering migrates the new database within a time limit, which a
# loaded machine can miss (422 "did not answer in time"): three tries.
for try in 1 2 3; do
  if bench_admin POST /admin/v1/placements "$(jq -nc --arg u "$SECOND_PLACEMENT_URL" \
    --arg r "redis://127.0.0.1:$R2_PORT/0" \
    '{name: "second", kind: "pooled", database_url: $u, redis_url: $r, capacity: null}')" \
    >"$RESULTS/placement-second.json"; then
    break
  fi
  [ "$try" -lt 3 ] || exit 1
  sleep 2
done

HALF=$((TENANTS / 2))
DOMAINS=$RESULTS/domains
for ((n = 1; n <= TENANTS; n++)); do printf 't%04d.fleet.test\n' "$n"; done >"$DOMAINS"
# create_on PLACEMENT FROM TO : tenants FROM..TO of the list, created by the
# load generator's tenant kind with every other placement closed, so each
# lands where it is meant to.
create_on() {
  local p=$1 other=main
  [ "$p" = main ] && other=second
  bench_admin PATCH "/admin/v1/placements/$other" '{"state":"closed"}' >/dev/null
  bench_admin PATCH "/admin/v1/placements/$p" '{"state":"open"}' >/dev/null
  sed -n "$2,$3p" "$DOMAINS" >"$TMP/create.hosts"
  "$LOADGEN_BIN" -p "$BENCH_ADMIN_PORT" --hosts "$TMP/create.hosts" -m tenant -n "$(($3 - $2 + 1))" \
    -c 8 -t 60 --admin-token-file "$TMP/admin_token" --label "create on $p" -q \
    --json "$RESULTS/create-$p.json"
  if [ "$(jq -r '.status."201" // 0' "$RESULTS/create-$p.json")" != "$(($3 - $2 + 1))" ]; then
    eu_die "creating tenants on $p: $(jq -c '.errors_by_kind, .status' "$RESULTS/create-$p.json")"
    return 1
  fi
}
eu_log "creating $TENANTS tenants ($HALF on main, $((TENANTS - HALF)) on second)"
create_on main 1 "$HALF"
create_on second $((HALF + 1)) "$TENANTS"
bench_admin PATCH /admin/v1/placements/main '{"state":"open"}' >/dev/null

# A key pair every seeded account shares, as the harness's do.
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$TMP/key.pem" 2>/dev/null
openssl pkey -in "$TMP/key.pem" -pubout -out "$TMP/pub.pem" 2>/dev/null

# seed PLACEMENT URL OUT USERS STATUSES [DOMAIN] : USERS accounts with a
# token each and STATUSES statuses each for every tenant of PLACEMENT (or
# only DOMAIN), written into its database; "DOMAIN TOKEN ACCOUNT_ID" lines
# to OUT.
seed() {
  local p=$1 url=$2 out=$3 users=$4 statuses=$5 only=${6:-} values
  values=$(bench_psql "$CONTROL_URL" "SELECT string_agg(format('(%s, %L)', t.id, t.domain), ',')
    FROM tenants t JOIN placements p ON p.id = t.placement_id
    WHERE p.name = '$p' AND ('$only' = '' OR t.domain = '$only')")
  [ -n "$values" ] || {
    eu_die "no tenants on $p to seed"
    return 1
  }
  psql "$url" -X -q -At -v ON_ERROR_STOP=1 -v pub="$(cat "$TMP/pub.pem")" \
    -v priv="$(cat "$TMP/key.pem")" >"$out" <<EOF
BEGIN;
CREATE TEMP TABLE ft (tid bigint, domain text) ON COMMIT DROP;
INSERT INTO ft VALUES $values;
INSERT INTO accounts (tenant_id, username, public_key, private_key)
  SELECT ft.tid, 'u' || g, :'pub', :'priv' FROM ft, generate_series(1, $users) g;
INSERT INTO users (tenant_id, account_id, email, encrypted_password, confirmed_at)
  SELECT a.tenant_id, a.id, a.username || '@' || ft.domain, 'not-a-hash', now()
  FROM accounts a JOIN ft ON ft.tid = a.tenant_id WHERE a.domain IS NULL;
INSERT INTO oauth_applications (tenant_id, name, redirect_uri, scopes, client_id, client_secret_hash)
  SELECT ft.tid, 'fleet-bench', 'urn:ietf:wg:oauth:2.0:oob', 'read write follow',
    'fleet-' || eunha_next_id(), 'secret' FROM ft;
-- 32 random-enough bytes as the server writes a token: URL-safe base64,
-- no padding; the table keeps its SHA-256 in hex.
CREATE TEMP TABLE tok ON COMMIT DROP AS
  SELECT u.tenant_id, u.id AS user_id, u.account_id, ft.domain,
    rtrim(translate(encode(sha256((random()::text || clock_timestamp()::text || u.id)::bytea),
      'base64'), '+/', '-_'), '=') AS token
  FROM users u JOIN ft ON ft.tid = u.tenant_id;
INSERT INTO oauth_access_tokens (tenant_id, application_id, user_id, token_hash, scopes)
  SELECT tok.tenant_id, app.id, tok.user_id, encode(sha256(tok.token::bytea), 'hex'), 'read write follow'
  FROM tok JOIN oauth_applications app ON app.tenant_id = tok.tenant_id AND app.name = 'fleet-bench';
INSERT INTO statuses (tenant_id, account_id, text, content)
  SELECT a.tenant_id, a.id, 'fleet status ' || g, '<p>fleet status ' || g || '</p>'
  FROM accounts a JOIN ft ON ft.tid = a.tenant_id, generate_series(1, $statuses) g
  WHERE a.domain IS NULL;
SELECT domain || ' ' || token || ' ' || account_id FROM tok ORDER BY domain, account_id;
COMMIT;
EOF
  bench_psql "$url" "VACUUM ANALYZE" >/dev/null
}
eu_log "seeding $USERS users with a token and $((USERS * STATUSES)) statuses per tenant"
seed main "$MAIN_URL" "$RESULTS/tokens.main" "$USERS" "$STATUSES"
seed second "$SECOND_URL" "$RESULTS/tokens.second" "$USERS" "$STATUSES"
cat "$RESULTS/tokens.main" "$RESULTS/tokens.second" >"$RESULTS/tokens"
chmod 600 "$RESULTS"/tokens*
[ "$(wc -l <"$RESULTS/tokens")" = $((TENANTS * USERS)) ] || {
  eu_die "seeding made $(wc -l <"$RESULTS/tokens") tokens, not $((TENANTS * USERS))"
  exit 1
}
# Every tenant answers through HAProxy with a seeded token before measuring.
"$LOADGEN_BIN" -p "$HAPROXY_PORT" --tokens "$RESULTS/tokens" -m verify=1 -n "$((TENANTS * USERS))" \
  -c 16 -t 30 --retry-503 30 --label "first answers" -q --json "$RESULTS/first.json"
[ "$(jq -r .errors "$RESULTS/first.json")" = 0 ] || {
  eu_die "first answers: $(jq -c '.errors_by_kind, .status' "$RESULTS/first.json")"
  exit 1
}

# ---- helpers over runs -----------------------------------------------------------
ROWS=()
row() { ROWS+=("| $1 | $2 | $3 |"); }

# load NAME TOKENS MIX RATE SECONDS [extra loadgen args] : one open-loop run
# through HAProxy, in the foreground; RESULTS/NAME.json and NAME.log.
load() {
  local name=$1 tokens=$2 mix=$3 rate=$4 secs=$5
  shift 5
  "$LOADGEN_BIN" -p "$HAPROXY_PORT" --tokens "$tokens" -m "$mix" -r "$rate" -d "$secs" -w "$WARMUP" \
    -c "$CONNECTIONS" -t 15 --label "$name" -q --json "$RESULTS/$name.json" --log "$RESULTS/$name.log" "$@"
}

# p95 LOG [FROM_MS [TO_MS]] : p95 latency (ms) of answered requests due in
# [FROM_MS, TO_MS) of the window; 2xx-5xx answers and transport errors alike.
p95() {
  awk -v a="${2:--1e18}" -v b="${3:-1e18}" '$1 >= a + 0 && $1 < b + 0 { print $2 }' "$1" | sort -n |
    awk '{ v[NR] = $1 } END { if (!NR) { print "–"; exit } i = int(0.95 * NR + 0.999); if (i < 1) i = 1; printf "%.1f\n", v[i] }'
}

# codes LOG [FROM_MS [TO_MS]] : "200×N, 503×M, ..." of requests due in the range.
codes() {
  awk -v a="${2:--1e18}" -v b="${3:-1e18}" '$1 >= a + 0 && $1 < b + 0 { n[$3]++ }
    END { for (c in n) printf "%s %d\n", c, n[c] }' "$1" | sort |
    awk '{ s = s (s ? ", " : "") $1 "×" $2 } END { print (s ? s : "none") }'
}

# errors LOG [FROM_MS [TO_MS]] : requests that did not end 2xx/3xx.
errors() {
  awk -v a="${2:--1e18}" -v b="${3:-1e18}" '$1 >= a + 0 && $1 < b + 0 && !($3 ~ /^[23][0-9][0-9]$/) { n++ }
    END { print n + 0 }' "$1"
}

# acked_missing URL TENANT_ID IDS_FILE : how many of the ids are not rows
# there (TENANT_ID 0: any tenant); the missing ones go to IDS_FILE.missing.
acked_missing() {
  : >"$3.missing"
  [ -s "$3" ] || {
    echo 0
    return 0
  }
  bench_psql "$1" "SELECT id FROM statuses WHERE ($2 = 0 OR tenant_id = $2)
    AND id IN ($(paste -sd, "$3"))" | sort >"$3.found"
  sort "$3" | comm -23 - "$3.found" >"$3.missing"
  wc -l <"$3.missing"
}

# missing_when LOG IDS_FILE : when the missing ones were due, "X–Y s into the window".
missing_when() {
  [ -s "$2.missing" ] || return 0
  awk 'NR == FNR { m[$1] = 1; next } ($6 in m) { t = $1 / 1000; if (a == "" || t < a) a = t; if (t > b) b = t }
    END { printf "; the lost ones were due %.1f–%.1f s into the window", a, b }' "$2.missing" "$1"
}
# until_window T0 S : sleeps until S seconds into the measured window of a
# load started at T0 (date +%s.%N), after its warm-up.
until_window() {
  local w
  w=$(awk -v a="$1" -v s="$2" -v w="$WARMUP" -v n="$(date +%s.%N)" 'BEGIN { d = a + w + s - n; printf "%.3f", (d > 0 ? d : 0) }')
  sleep "$w"
}

now_iso() { date -u +%Y-%m-%dT%H:%M:%S.%3N; }

# reasons_503 FROM TO : the 503s eunha's processes logged between two
# now_iso times, by tenant group and reason ("main: reason×N; second: ...").
# The load generator sees only the code; HAProxy's own 503s (no server)
# are not in these logs.
reasons_503() {
  awk -v a="$1" -v b="$2" -v big="$BIG" 'FILENAME ~ /tokens\.main$/ { g[$1] = "main"; next }
    $2 >= a && $2 < b && /answering 503: / {
      d = ""; for (i = 3; i <= NF; i++) if ($i ~ /^tenant=/) { d = substr($i, 8); break }
      r = $0; sub(/.*answering 503: /, "", r); sub(/;.*/, "", r)
      grp = (d in g) ? "main" : (d == big ? "moved tenant" : "second")
      n[grp ": " r]++ }
    END { for (k in n) print k "×" n[k] }' "$RESULTS/tokens.main" "$TMP"/eunha*.log | sort |
    awk '{ s = s (s ? "; " : "") $0 } END { print (s ? s : "none") }'
}

rps() { jq -r '.requests_per_second * 10 | round / 10' "$1"; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", (b - a) * 1000 }'; }

# ---- a. 3 processes vs 1 --------------------------------------------------------
phase_a() {
  eu_log "a. full mix at $RATE req/s through HAProxy, 3 processes"
  load a-3procs "$RESULTS/tokens" "$MIX" "$RATE" "$SECONDS_"
  eu_log "a. the same with one process (2 and 3 stopped)"
  for ((i = 2; i <= PROCS; i++)); do proc_stop "$i"; done
  sleep 2 # HAProxy marks them down (fall 2 × inter 500 ms)
  load a-1proc "$RESULTS/tokens" "$MIX" "$RATE" "$SECONDS_"
  for ((i = 2; i <= PROCS; i++)); do proc_start "$i"; done
  wait_haproxy_up "$PROCS"
  row "a. throughput, 3 processes vs 1 ($RATE req/s offered, full mix)" \
    "$(rps "$RESULTS/a-3procs.json") vs $(rps "$RESULTS/a-1proc.json") req/s; p95 $(p95 "$RESULTS/a-3procs.log") vs $(p95 "$RESULTS/a-1proc.log") ms; errors $(errors "$RESULTS/a-3procs.log") vs $(errors "$RESULTS/a-1proc.log")" \
    "reported (2 cores)"
}

# ---- b. one process SIGKILLed ------------------------------------------------
phase_b() {
  eu_log "b. full mix at $RATE req/s; process 2 SIGKILLed ${KILL_AT}s into the window"
  RUN_TAG="b-$$-$(date +%s)"
  t0=$(date +%s.%N)
  load b-kill "$RESULTS/tokens" "$MIX" "$RATE" "$SECONDS_" &
  LG=$!
  BG_PIDS+=("$LG")
  # Ping jobs around the kill, enqueued through each process's admin
  # listener in turn from 3 s before it; each holds its lock JOB_HOLD_MS,
  # so the killed process dies holding some. The kill itself keeps its
  # time however long enqueuing takes on a loaded machine.
  # Half of them on main, half on second.
  awk -v h="$HALF" -v n="$JOB_TENANTS" 'NR <= int(n / 2) || (NR > h && NR <= h + n - int(n / 2))' \
    "$DOMAINS" >"$TMP/job.domains"
  for ((j = 1; j <= JOBS_EACH; j++)); do
    n=0
    while read -r d; do
      n=$((n + 1))
      a=${ADM[$(((n + j) % PROCS + 1))]}
      bench_batch_add "$TMP/job-$j-$n" POST "http://127.0.0.1:$a/admin/v1/tenants/$d/jobs" \
        -H "Authorization: Bearer $BENCH_ADMIN_TOKEN" -H 'Content-Type: application/json' \
        --data "{\"kind\":\"ping\",\"payload\":{\"run\":\"$RUN_TAG\",\"hold_ms\":$JOB_HOLD_MS}}"
    done <"$TMP/job.domains"
  done
  until_window "$t0" $((KILL_AT - 3))
  bench_batch_run "POST /admin/v1/tenants/:domain/jobs" 2>"$RESULTS/b-enqueue.err" &
  ENQ=$!
  BG_PIDS+=("$ENQ")
  BENCH_BATCH=()
  BENCH_BATCH_OUT=()
  until_window "$t0" "$KILL_AT"
  tk=$(date +%s.%N)
  kill -KILL "${PIDS[2]}"
  wait "${PIDS[2]}" 2>/dev/null || true
  PIDS[2]=
  eu_log "b. killed process 2"
  # Requests sent to the killed process can fail; the enqueue goes on. The
  # jobs counted are the acknowledged ones (201 with an id).
  wait "$ENQ" || eu_log "b. not every job was accepted: $(head -c 300 "$RESULTS/b-enqueue.err")"
  cat "$TMP"/job-*-* 2>/dev/null | grep -o '"id":"[0-9]*"' | tr -dc '0-9\n' | sort -u >"$RESULTS/b-jobs.acked"
  enq=$(wc -l <"$RESULTS/b-jobs.acked")
  wait "$LG" || true
  BG_PIDS=()
  KILL_MS=$(awk -v a="$t0" -v b="$tk" -v w="$WARMUP" 'BEGIN { printf "%.0f", (b - a - w) * 1000 }')
  proc_start 2
  BEFORE_P95=$(p95 "$RESULTS/b-kill.log" 0 "$KILL_MS")
  # Per second from the kill on: the last second whose p95 is above the
  # threshold ends the recovery.
  THRESH=$(awk -v p="$BEFORE_P95" -v f="$P95_FACTOR" 'BEGIN { printf "%.1f", p * f }')
  RECOVER=$(awk -v k="$KILL_MS" '$1 >= k { print int(($1 - k) / 1000), $2 }' "$RESULTS/b-kill.log" |
    sort -k1,1n -k2,2n | awk -v t="$THRESH" '
      function flush() { if (n) { i = int(0.95 * n + 0.999); if (v[i] > t) last = s + 1 } n = 0 }
      $1 != s { flush(); s = $1 } { v[++n] = $2 } END { flush(); print last + 0 }')
  ERR_KILL=$(errors "$RESULTS/b-kill.log" "$KILL_MS")
  ERR_BEFORE=$(errors "$RESULTS/b-kill.log" 0 "$KILL_MS")
  KINDS_KILL=$(awk -v k="$KILL_MS" '$1 >= k && !($3 ~ /^[23][0-9][0-9]$/) { print $3 }' "$RESULTS/b-kill.log" |
    sort | uniq -c | awk '{ s = s (s ? ", " : "") $2 "×" $1 } END { print (s ? s : "none") }')
  # The jobs: every one ran, none twice. A job the killed process held runs
  # again once its lock lapses (job_lock_seconds).
  eu_log "b. waiting for the $enq ping jobs"
  # job_ids of every run of this round's pings, a line per run.
  pings() {
    local u
    for u in "$MAIN_URL" "$SECOND_URL"; do
      bench_psql "$u" "SELECT job_id FROM job_pings WHERE payload->>'run' = '$RUN_TAG'"
    done
  }
  for ((k = 0; k < 90; k++)); do
    [ "$(pings | sort -u | comm -12 - "$RESULTS/b-jobs.acked" | wc -l)" -ge "$enq" ] && break
    sleep 1
  done
  sleep 2 # a second run, if any, has time to land
  pings | sort >"$RESULTS/b-jobs.runs"
  runs=$(wc -l <"$RESULTS/b-jobs.runs")
  ran=$(sort -u "$RESULTS/b-jobs.runs" | wc -l)
  lost=$(sort -u "$RESULTS/b-jobs.runs" | comm -13 - "$RESULTS/b-jobs.acked" | wc -l)
  by_proc=$( (bench_psql "$MAIN_URL" "SELECT process FROM job_pings WHERE payload->>'run' = '$RUN_TAG'"
    bench_psql "$SECOND_URL" "SELECT process FROM job_pings WHERE payload->>'run' = '$RUN_TAG'") |
    sort | uniq -c | awk '{ s = s (s ? ", " : "") $1 } END { print s }')
  wait_haproxy_up "$PROCS"
  row "b. one process SIGKILLed under load: errors" \
    "$ERR_KILL after the kill ($KINDS_KILL) of $(awk -v k="$KILL_MS" '$1 >= k { n++ } END { print n + 0 }' "$RESULTS/b-kill.log") requests due after it; $ERR_BEFORE in the ${KILL_MS} ms before" \
    "only its in-flight requests"
  row "b. p95 back after the kill" \
    "${RECOVER} s (p95 per second ≤ $THRESH ms = ${P95_FACTOR}× the $BEFORE_P95 ms before)" "≤ 2 s"
  row "b. ping jobs enqueued around the kill" \
    "$enq acknowledged, $ran ran, $lost lost, $((runs - ran)) ran twice (runs per process: $by_proc)" \
    "0 lost, 0 twice"
}

# ---- c. the second PostgreSQL server stopped ------------------------------------
phase_c() {
  # groups NAME MIX SECONDS : a run per tenant group at once, half the rate each.
  groups() {
    local name=$1 mix=$2 secs=$3 g
    local -a pids=()
    for g in main second; do
      load "$name-$g" "$RESULTS/tokens.$g" "$mix" $((RATE / 2)) "$secs" &
      pids+=($!)
    done
    BG_PIDS=("${pids[@]}")
    wait "${pids[@]}" || true
    BG_PIDS=()
  }
  # A p95 of a few ms over one 12 s window moves by more than 20% from one
  # window to the next on two shared cores (the first window after seeding
  # also meets its checkpoints), so the phase alternates: C_CYCLES windows
  # with the second server up and as many with it stopped, each pair
  # back to back, and compares the p95 of all up windows' requests with
  # that of all down windows'.
  eu_log "c. each group at $((RATE / 2)) req/s, up and with the second PostgreSQL stopped, $C_CYCLES times"
  : >"$RESULTS/c-before-main.log"
  : >"$RESULTS/c-down-main.log"
  : >"$RESULTS/c-down-second.log"
  local i
  for ((i = 1; i <= C_CYCLES; i++)); do
    groups "c-before-$i" "$MIX" "$GROUP_SECONDS"
    eu_pg_stop "$TMP/pg2"
    [ "$i" = 1 ] && c0=$(now_iso)
    groups "c-down-$i" "$MIX" "$GROUP_SECONDS"
    c1=$(now_iso)
    eu_pg_start "$TMP/pg2" "$PG2_PORT" >/dev/null
    deadline=$((SECONDS + 60))
    while [ "$SECONDS" -lt "$deadline" ]; do
      code=$(BENCH_CURL_TIMEOUT=10 bench_http GET "http://127.0.0.1:$HAPROXY_PORT/api/v1/accounts/verify_credentials" /dev/null \
        -H "Host: $(awk 'NR == 1 { print $1 }' "$RESULTS/tokens.second")" \
        -H "Authorization: Bearer $(awk 'NR == 1 { print $2 }' "$RESULTS/tokens.second")")
      [ "$code" = 200 ] && break
      sleep 0.2
    done
    cat "$RESULTS/c-before-$i-main.log" >>"$RESULTS/c-before-main.log"
    cat "$RESULTS/c-down-$i-main.log" >>"$RESULTS/c-down-main.log"
    cat "$RESULTS/c-down-$i-second.log" >>"$RESULTS/c-down-second.log"
  done
  pb=$(p95 "$RESULTS/c-before-main.log")
  pd=$(p95 "$RESULTS/c-down-main.log")
  row "c. second PostgreSQL stopped: answers of its tenants" "$(codes "$RESULTS/c-down-second.log")" "503 only"
  row "c. second PostgreSQL stopped: answers of main's tenants" "$(codes "$RESULTS/c-down-main.log")" "unaffected"
  row "c. second PostgreSQL stopped: eunha's 503s, by reason" "$(reasons_503 "$c0" "$c1")" "its tenants only"
  row "c. second PostgreSQL stopped: p95 of main's tenants, before → during" \
    "$pb → $pd ms ($(awk -v a="$pb" -v b="$pd" 'BEGIN { if (a + 0 > 0) printf "%+.0f%%", 100 * (b - a) / a; else print "–" }'))" \
    "within 20%"
}

# ---- d. the second Redis server stopped ---------------------------------------
phase_d() {
  eu_log "d. reads of each group with the second Redis stopped"
  eu_redis_stop "$TMP/redis2"
  d0=$(now_iso)
  groups d-down "$READ_MIX" "$GROUP_SECONDS"
  d1=$(now_iso)
  eu_redis_start "$TMP/redis2" "$R2_PORT" >/dev/null
  row "d. second Redis stopped: reads of its tenants" "$(codes "$RESULTS/d-down-second.log")" "every tenant answers reads"
  row "d. second Redis stopped: reads of main's tenants" "$(codes "$RESULTS/d-down-main.log")" "unaffected"
  row "d. second Redis stopped: eunha's 503s, by reason" "$(reasons_503 "$d0" "$d1")" "none for main's tenants"
}

# ---- e. a big tenant moved under its own writes ----------------------------------
phase_e() {
  eu_log "e. $BIG: $BIG_STATUSES statuses on main, moved to second under $MOVE_RATE writes/s"
  bench_admin POST /admin/v1/tenants "{\"domain\":\"$BIG\",\"title\":\"$BIG\",\"placement\":\"main\"}" >/dev/null
  seed main "$MAIN_URL" "$RESULTS/tokens.big" 1 "$BIG_STATUSES" "$BIG"
  chmod 600 "$RESULTS/tokens.big"
  BIG_ID=$(bench_psql "$CONTROL_URL" "SELECT id FROM tenants WHERE domain = '$BIG'")
  t0=$(date +%s.%N)
  load e-move "$RESULTS/tokens.big" status=1 "$MOVE_RATE" "$MOVE_SECONDS" &
  LG=$!
  BG_PIDS=("$LG")
  sleep $((WARMUP + 5))
  m0=$(date +%s.%N)
  mcode=$(curl -sS --max-time 300 -o "$RESULTS/e-move-answer.json" -w '%{http_code}' -X POST \
    -H "Authorization: Bearer $BENCH_ADMIN_TOKEN" -H 'Content-Type: application/json' \
    --data '{"placement":"second"}' "http://127.0.0.1:$BENCH_ADMIN_PORT/admin/v1/tenants/$BIG/move") || mcode=000
  m1=$(date +%s.%N)
  wait "$LG" || true
  BG_PIDS=()
  MOVE_MS=$(ms "$m0" "$m1")
  PAUSE=$(jq -r '.write_pause_ms // empty' "$RESULTS/e-move-answer.json" 2>/dev/null || true)
  WHERE=$(bench_psql "$CONTROL_URL" "SELECT p.name FROM tenants t JOIN placements p ON p.id = t.placement_id WHERE t.domain = '$BIG'")
  awk '$3 ~ /^2/ && $6 != "-" { print $6 }' "$RESULTS/e-move.log" >"$RESULTS/e-acked.ids"
  ACKED=$(wc -l <"$RESULTS/e-acked.ids")
  # Looked for where the tenant is now: on second after a move, still on
  # main after one that failed.
  where_url=$MAIN_URL
  [ "$WHERE" = second ] && where_url=$SECOND_URL
  MISSING_E=$(acked_missing "$where_url" "$BIG_ID" "$RESULTS/e-acked.ids")
  MOVE_AT=$(awk -v a="$t0" -v b="$m0" -v c="$m1" -v w="$WARMUP" 'BEGIN { printf "%.1f–%.1f", b - a - w, c - a - w }')
  E503=$(awk '$3 == 503 { n++ } END { print n + 0 }' "$RESULTS/e-move.log")
  EOTHER=$(awk '!($3 ~ /^2/) && $3 != 503 { n++ } END { print n + 0 }' "$RESULTS/e-move.log")
  if [ -n "$PAUSE" ]; then
    pause_fig="write_pause_ms $PAUSE (move answered $mcode in $MOVE_MS ms; now on $WHERE)"
  else
    pause_fig="no write_pause_ms in the answer (HTTP $mcode; now on $WHERE): the move's wall time, $MOVE_MS ms, paused its writes throughout (today's move)"
  fi
  row "e. move of a $BIG_STATUSES-status tenant main → second under $MOVE_RATE writes/s: write pause" "$pause_fig" "≤ 1 s"
  row "e. the move: acknowledged writes lost" \
    "$MISSING_E of $ACKED on $WHERE$(missing_when "$RESULTS/e-move.log" "$RESULTS/e-acked.ids"); the move ran $MOVE_AT s into it" "0"
  row "e. the move: errors" "$EOTHER other than 503; 503×$E503 ($(codes "$RESULTS/e-move.log"))" "0 other than 503 + Retry-After"
}

# ---- f. the second server's primary killed, its standby promoted --------------------
phase_f() {
  eu_log "f. writes on second's tenants at $FAIL_RATE/s; primary SIGKILLed, standby promoted"
  t0=$(date +%s.%N)
  load f-failover "$RESULTS/tokens.second" status=1 "$FAIL_RATE" "$FAIL_SECONDS" &
  LG=$!
  BG_PIDS=("$LG")
  sleep $((WARMUP + 5))
  eu_pg_kill "$TMP/pg2"
  eu_pg_promote "$TMP/pg2s"
  tp=$(date +%s.%N)
  # libpq alone, through the placement's URL: tells a pool that does not find
  # the new primary from a URL that cannot.
  if psql "$SECOND_PLACEMENT_URL&connect_timeout=5" -X -q -At -c "SELECT NOT pg_is_in_recovery()" 2>/dev/null | grep -q t; then
    LIBPQ_SAYS="psql through the same URL reached the new primary"
  else
    LIBPQ_SAYS="psql through the same URL did not reach a primary either"
  fi
  # Until a tenant of second takes a write again, through HAProxy; a minute
  # at most.
  probe_host=$(awk 'NR == 2 { print $1 }' "$RESULTS/tokens.second")
  probe_tok=$(awk 'NR == 2 { print $2 }' "$RESULTS/tokens.second")
  ta=
  deadline=$((SECONDS + 60))
  while [ "$SECONDS" -lt "$deadline" ]; do
    code=$(BENCH_CURL_TIMEOUT=10 bench_http POST "http://127.0.0.1:$HAPROXY_PORT/api/v1/statuses" /dev/null \
      -H "Host: $probe_host" -H "Authorization: Bearer $probe_tok" \
      -H 'Content-Type: application/json' --data '{"status":"after the promotion"}')
    if [ "$code" = 200 ]; then
      ta=$(date +%s.%N)
      break
    fi
    sleep 0.1
  done
  wait "$LG" || true
  BG_PIDS=()
  awk '$3 ~ /^2/ && $6 != "-" { print $6 }' "$RESULTS/f-failover.log" >"$RESULTS/f-acked.ids"
  ACKED_F=$(wc -l <"$RESULTS/f-acked.ids")
  MISSING_F=$(acked_missing "$SECOND_STANDBY_URL" 0 "$RESULTS/f-acked.ids")
  PROMOTE_MS=$(awk -v a="$t0" -v b="$tp" -v w="$WARMUP" 'BEGIN { printf "%.0f", (b - a - w) * 1000 }')
  if [ -n "$ta" ]; then answer="$(awk -v a="$tp" -v b="$ta" 'BEGIN { printf "%.1f", b - a }') s"; else answer="not within 60 s"; fi
  row "f. primary SIGKILLed, standby promoted: acknowledged statuses missing" \
    "$MISSING_F of $ACKED_F$(missing_when "$RESULTS/f-failover.log" "$RESULTS/f-acked.ids")" "0"
  row "f. seconds from the promotion until a tenant there takes a write" \
    "$answer; $LIBPQ_SAYS (writes during the run: $(codes "$RESULTS/f-failover.log"); the last error was due $(awk '!($3 ~ /^2/) { l = $1 } END { printf "%.1f", l / 1000 }' "$RESULTS/f-failover.log") s into the window, the promotion done at $(awk -v m="$PROMOTE_MS" 'BEGIN { printf "%.1f", m / 1000 }') s)" \
    "≤ 10 s"
}

for phase in a b c d e f; do
  if want "$phase"; then
    "phase_$phase"
  fi
done

# ---- the table ------------------------------------------------------------------------
LOADGEN_CPU=$(find "$RESULTS" -name '*.json' -exec jq -r '.loadgen.cpu_percent // 0' {} + 2>/dev/null |
  awk '$1 > m { m = $1 } END { printf "%.0f", m }')
{
  echo
  echo "### Fleet (issue 30), $(date -u +%Y-%m-%d)"
  echo
  bench_machine_summary
  echo "- Layout: 2 PostgreSQL servers (the second with a synchronous streaming standby, its placement URL naming both hosts with target_session_attrs=read-write), 2 Redis servers, $PROCS eunha processes on one control database, HAProxy $(haproxy -v 2>/dev/null | awk 'NR == 1 { print $3 }') round robin in front (health checks on /healthz); $TENANTS tenants, half on placement main and half on second, each with $USERS users and $((USERS * STATUSES)) statuses (seeded by SQL)."
  echo "- Load: open loop through HAProxy, mix \`$MIX\` (reads only in d: \`$READ_MIX\`), ${SECONDS_} s measured in a and b, ${GROUP_SECONDS} s per group run in c and d (one load generator per group at $((RATE / 2)) req/s each), ${WARMUP} s warm-up each. The load generator used at most ${LOADGEN_CPU}% of a core."
  [ "$PHASES" = "a b c d e f" ] || echo "- Measures run: $PHASES (EUNHA_FLEET_PHASES)."
  echo "- Raw output: benchmark-results/$(basename "$RESULTS")/"
  echo
  echo "| measure | figure | target |"
  echo "|---|---|---|"
  printf '%s\n' "${ROWS[@]}"
  # Arrivals still queued in the load generator when a window ended: the
  # offered rate was more than the fleet answered, and latencies are mostly
  # that queue.
  over=$(for j in "$RESULTS"/*.json; do
    jq -r --arg n "$(basename "$j" .json)" 'select((.unsent // 0) > 0) | "\($n) \(.unsent) of \(.requests + .unsent)"' "$j" 2>/dev/null
  done | paste -sd, - | sed 's/,/, /g')
  if [ -n "$over" ]; then
    echo
    echo "Overloaded runs (arrivals still waiting in the load generator when the window ended): $over."
  fi
} >"$RESULTS/table.md"
cat "$RESULTS/table.md"
if [ "${EUNHA_BENCH_NO_README:-0}" != 1 ]; then
  cat "$RESULTS/table.md" >>"$ROOT/benchmark-results/README.md"
  eu_log "appended to benchmark-results/README.md"
fi
