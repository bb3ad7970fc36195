# shellcheck shell=bash
# Helpers shared by scripts/benchmark_small_instance.sh and
# scripts/benchmark_density.sh. Source it after scripts/lib/services.sh; do not
# run it. Everything here talks to 127.0.0.1 only and bounds every wait.
#
#   bench_build [TARGET...]           Release build of eunha and eunha-loadgen (or only the
#                                     TARGETs named) into $BENCH_BUILD
#                                     (BENCH_SKIP_BUILD=1: use what is there)
#   bench_eunha_start CONFIG DIR      start eunha, wait for its ready file; sets EUNHA_PID,
#                                     BENCH_PUBLIC_PORT, BENCH_ADMIN_PORT
#   bench_eunha_stop                  SIGTERM, wait, SIGKILL after 30 s
#   bench_admin METHOD PATH [JSON]    admin API call; prints the body; fails on non-2xx
#   bench_base_toml URL DB PORT PREFIX  the config tables every one-server benchmark starts with
#   bench_seed_tenant DOMAIN USERS OUT   accounts, tokens and follows (five curl
#                                     processes); OUT gets "DOMAIN TOKEN ACCOUNT_ID" lines
#   bench_seed_statuses TOKENS N DIR  N statuses through the load generator
#   bench_mem_kib PID                 "RSS PRIVATE" in KiB from smaps_rollup
#   bench_cpu_ticks PID               utime+stime of one process, in clock ticks
#   bench_pg_pids PGDIR               postmaster and all its children
#   bench_pg_cpu_ticks PGDIR          CPU of the whole cluster, exited backends included
#   bench_pg_cpu_split PGDIR          "CLIENT AUTOVACUUM BACKGROUND REAPED" ticks of the cluster
#   bench_pg_mem_kib PGDIR            "PRIVATE SHARED_ONCE" in KiB over the whole cluster
#   bench_psql URL SQL                one value from one query
#   bench_pg_db_bytes_sql 'NAME'      SQL for a database's size without its relcache init file
#   bench_machine_summary             markdown lines: machine and versions
#
# Traps these helpers exist to avoid:
# - RSS counts every shared page (the binary, libraries) in full for every
#   process that maps it; Private_Clean + Private_Dirty is what this process
#   alone costs, so that is what per-tenant figures use.
# - A PostgreSQL backend's own RSS or private pages include whatever shared
#   buffers it has touched, and the shared memory segment is mapped into every
#   backend: summing RSS over backends counts shared_buffers once per
#   connection. bench_pg_mem_kib counts private pages of private mappings per
#   process and the shared mappings once (their Pss summed over all processes).
# - Backends that exit take their CPU time with them; the postmaster's
#   cutime/cstime has it once they are reaped, so cluster CPU adds that in.

BENCH_ROOT=${BENCH_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
BENCH_BUILD=${BENCH_BUILD:-$BENCH_ROOT/build-bench}
BENCH_CURL_TIMEOUT=${BENCH_CURL_TIMEOUT:-60}
BENCH_PASSWORD=${BENCH_PASSWORD:-eunha-bench-password-1}
EUNHA_BIN=${EUNHA_BIN:-$BENCH_BUILD/eunha}
LOADGEN_BIN=${LOADGEN_BIN:-$BENCH_BUILD/eunha-loadgen}
EUNHA_PID=
BENCH_PUBLIC_PORT=
BENCH_ADMIN_PORT=
BENCH_ADMIN_TOKEN=${BENCH_ADMIN_TOKEN:-}

# shellcheck disable=SC2120 # the targets are optional
bench_build() {
  # A benchmark of other commits' servers needs only this tree's load
  # generator, so the caller may name the targets; default both.
  local -a targets=("$@") bins=()
  local t
  [ "${#targets[@]}" -gt 0 ] || targets=(eunha eunha-loadgen)
  for t in "${targets[@]}"; do
    case $t in
      eunha) bins+=("$EUNHA_BIN") ;;
      eunha-loadgen) bins+=("$LOADGEN_BIN") ;;
      eunha-apsink) bins+=("$BENCH_BUILD/eunha-apsink") ;;
      eunha-imgbench) bins+=("$BENCH_BUILD/eunha-imgbench") ;;
      *) eu_die "bench_build: unknown target '$t'" || return 1 ;;
    esac
  done
  # BENCH_SKIP_BUILD=1: use the binaries already in $BENCH_BUILD (or
  # $EUNHA_BIN and $LOADGEN_BIN), e.g. to run several benchmarks on one build
  # while the source tree is being edited.
  if [ "${BENCH_SKIP_BUILD:-0}" = 1 ]; then
    for t in "${bins[@]}"; do
      if [ ! -x "$t" ]; then
        eu_die "BENCH_SKIP_BUILD=1 but $t is missing"
        return 1
      fi
    done
    eu_log "not building: using ${bins[*]}"
    return 0
  fi
  cmake -S "$BENCH_ROOT" -B "$BENCH_BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null || return 1
  cmake --build "$BENCH_BUILD" -j"${EUNHA_JOBS:-$(nproc 2>/dev/null || echo 2)}" \
    --target "${targets[@]}" >/dev/null || return 1
  for t in "${bins[@]}"; do
    if [ ! -x "$t" ]; then
      eu_die "build did not produce $t"
      return 1
    fi
  done
}

# bench_require_cmd CMD PACKAGE : installs PACKAGE when CMD is missing.
bench_require_cmd() {
  command -v "$1" >/dev/null 2>&1 && return 0
  eu_apt_install "$2"
}

bench_eunha_start() {
  local config=$1 dir=$2 i ready=$2/ready
  rm -f "$ready"
  "$EUNHA_BIN" serve -c "$config" --ready-file "$ready" >>"$dir/eunha.log" 2>&1 &
  EUNHA_PID=$!
  for ((i = 0; i < 1200; i++)); do
    [ -s "$ready" ] && break
    if ! kill -0 "$EUNHA_PID" 2>/dev/null; then
      tail -n 20 "$dir/eunha.log" >&2
      EUNHA_PID=
      eu_die "eunha exited during startup (log: $dir/eunha.log)"
      return 1
    fi
    sleep 0.1
  done
  [ -s "$ready" ] || {
    eu_die "eunha wrote no ready file within 120 s"
    return 1
  }
  BENCH_PUBLIC_PORT=$(sed -n 's/^public=.*:\([0-9]*\)$/\1/p' "$ready")
  BENCH_ADMIN_PORT=$(sed -n 's/^admin=.*:\([0-9]*\)$/\1/p' "$ready")
  if [ -z "$BENCH_PUBLIC_PORT" ] || [ -z "$BENCH_ADMIN_PORT" ]; then
    eu_die "cannot read ports from $ready"
  fi
}

bench_eunha_stop() {
  local i
  [ -n "$EUNHA_PID" ] || return 0
  if kill -0 "$EUNHA_PID" 2>/dev/null; then
    kill -TERM "$EUNHA_PID" 2>/dev/null || true
    for ((i = 0; i < 300; i++)); do
      kill -0 "$EUNHA_PID" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$EUNHA_PID" 2>/dev/null; then
      eu_log "eunha did not stop in 30 s; killing it"
      kill -KILL "$EUNHA_PID" 2>/dev/null || true
    fi
  fi
  wait "$EUNHA_PID" 2>/dev/null || true
  EUNHA_PID=
}

# The exit of every benchmark script (bench_trap_cleanup installs it): runs
# the script's bench_cleanup_hook first if it defines one (samplers, its
# databases), stops eunha, then PostgreSQL and Redis under $TMP, keeps
# eunha's log in $RESULTS, removes $TMP and exits with the script's status.
# shellcheck disable=SC2317 # invoked through traps
bench_cleanup() {
  local rc=$?
  trap - INT TERM EXIT
  if declare -F bench_cleanup_hook >/dev/null; then
    bench_cleanup_hook || true
  fi
  bench_eunha_stop
  eu_pg_stop "$TMP/pg" || true
  eu_redis_stop "$TMP/redis" || true
  [ -f "$TMP/eunha.log" ] && cp "$TMP/eunha.log" "$RESULTS/" 2>/dev/null
  rm -rf "$TMP"
  [ "$rc" = 0 ] || eu_log "failed; raw output in $RESULTS"
  exit "$rc"
}

# bench_cleanup on exit, Ctrl-C and SIGTERM.
bench_trap_cleanup() {
  trap bench_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

# A fresh admin token in $TMP/admin_token (mode 600) and BENCH_ADMIN_TOKEN.
bench_admin_token() {
  BENCH_ADMIN_TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
  printf '%s\n' "$BENCH_ADMIN_TOKEN" >"$TMP/admin_token"
  chmod 600 "$TMP/admin_token"
}

# bench_base_toml CONTROL_URL DB REDIS_PORT PREFIX : the tables a one-server
# benchmark's config starts with: loopback listeners on port 0, the admin
# token bench_admin_token wrote, CONTROL_URL with template DB_template, Redis
# on REDIS_PORT under PREFIX, 2 CPU threads, no API rate limit, warn logs.
# The script appends its own tables ([federation], [media], ...).
bench_base_toml() {
  cat <<EOF
[server]
listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
scheme = "http"
cpu_threads = 2

[admin]
token_file = "$TMP/admin_token"

[database]
url = "$1"
template = "${2}_template"

[redis]
url = "redis://127.0.0.1:$3/0"
prefix = "$4"

[limits]
api_requests_per_5min = 0

[log]
level = "warn"
EOF
}

# bench_http METHOD URL BODYFILE CURL_ARGS... : prints the HTTP status (000 when
# no answer came); the body goes to BODYFILE.
bench_http() {
  local method=$1 url=$2 out=$3 code
  shift 3
  code=$(curl -sS --max-time "$BENCH_CURL_TIMEOUT" -o "$out" -w '%{http_code}' -X "$method" \
    "$@" "$url" 2>/dev/null) || true
  printf '%s\n' "${code:-000}"
}

# bench_fail_http WHAT CODE BODYFILE : a clear message for an unexpected answer.
bench_fail_http() {
  local hint=""
  case $2 in
    404 | 405) hint=" (is this endpoint implemented yet?)" ;;
    000) hint=" (no answer: is eunha running?)" ;;
  esac
  eu_die "$1 answered HTTP $2$hint: $(head -c 300 "$3" 2>/dev/null)"
}

bench_admin() {
  local method=$1 path=$2 body=${3:-} out code
  out=$(mktemp)
  if [ -n "$body" ]; then
    code=$(bench_http "$method" "http://127.0.0.1:$BENCH_ADMIN_PORT$path" "$out" \
      -H "Authorization: Bearer $BENCH_ADMIN_TOKEN" -H 'Content-Type: application/json' --data "$body")
  else
    code=$(bench_http "$method" "http://127.0.0.1:$BENCH_ADMIN_PORT$path" "$out" \
      -H "Authorization: Bearer $BENCH_ADMIN_TOKEN")
  fi
  case $code in
    2??) cat "$out" ;;
    *)
      bench_fail_http "$method $path" "$code" "$out"
      rm -f "$out"
      return 1
      ;;
  esac
  rm -f "$out"
}

# bench_api METHOD DOMAIN PATH TOKEN CURL_ARGS... : a public API call as Host
# DOMAIN; prints the body, fails on non-2xx. TOKEN may be empty.
bench_api() {
  local method=$1 domain=$2 path=$3 token=$4 out code auth=()
  shift 4
  [ -n "$token" ] && auth=(-H "Authorization: Bearer $token")
  out=$(mktemp)
  code=$(bench_http "$method" "http://127.0.0.1:$BENCH_PUBLIC_PORT$path" "$out" \
    -H "Host: $domain" "${auth[@]}" "$@")
  case $code in
    2??) cat "$out" ;;
    *)
      bench_fail_http "$method $path (Host $domain)" "$code" "$out"
      rm -f "$out"
      return 1
      ;;
  esac
  rm -f "$out"
}

# bench_json_field JSON FIELD : FIELD of a JSON object, failing when absent.
bench_json_field() {
  local v
  v=$(printf '%s' "$1" | jq -er ".$2 // empty" 2>/dev/null) || true
  [ -n "$v" ] || {
    eu_die "response has no '$2': $(printf '%s' "$1" | head -c 300)"
    return 1
  }
  printf '%s\n' "$v"
}

# bench_field JSON FIELD : sets BENCH_FIELD to the string FIELD of a JSON
# object, failing when absent. Seeding reads thousands of these, so when
# "FIELD": occurs exactly once (nothing nested can be mistaken for it) it is
# read with a bash regex; anything else goes through jq.
bench_field() {
  local json=$1 key="\"$2\":" rest re
  rest=${json//"$key"/}
  if [ $((${#json} - ${#rest})) -eq "${#key}" ]; then
    re="\"$2\":\"([^\"\\\\]*)\""
    if [[ $json =~ $re ]]; then
      BENCH_FIELD=${BASH_REMATCH[1]}
      [ -n "$BENCH_FIELD" ] && return 0
    fi
  fi
  BENCH_FIELD=$(printf '%s' "$json" | jq -er ".$2 // empty" 2>/dev/null) || true
  [ -n "$BENCH_FIELD" ] || {
    eu_die "response has no '$2': ${json:0:300}"
    return 1
  }
}

# Several requests through one curl process (--next between them), so that
# seeding a thousand tenants does not start ~100 processes per tenant.
# bench_batch_add OUTFILE METHOD URL CURL_ARGS... queues one; bench_batch_run
# WHAT sends them in order and fails unless every answer is 2xx. Bodies land
# in the OUTFILEs.
BENCH_BATCH=()
BENCH_BATCH_OUT=()
bench_batch_add() {
  local out=$1 method=$2 url=$3
  shift 3
  [ "${#BENCH_BATCH[@]}" -eq 0 ] || BENCH_BATCH+=(--next)
  BENCH_BATCH+=(-sS --max-time "$BENCH_CURL_TIMEOUT" -o "$out" -w '%{http_code}\n' -X "$method" "$@" "$url")
  BENCH_BATCH_OUT+=("$out")
}

bench_batch_run() {
  local what=$1 codes i body n=${#BENCH_BATCH_OUT[@]}
  local -a got=()
  codes=$(curl "${BENCH_BATCH[@]}" 2>/dev/null) || true
  BENCH_BATCH=()
  read -r -d '' -a got <<<"$codes" || true
  for ((i = 0; i < n; i++)); do
    case ${got[i]:-000} in
      2??) ;;
      *)
        body=
        [ -r "${BENCH_BATCH_OUT[i]}" ] && { IFS= read -r -d '' body <"${BENCH_BATCH_OUT[i]}" || true; }
        BENCH_BATCH_OUT=()
        case ${got[i]:-000} in
          404 | 405) body="(is this endpoint implemented yet?) $body" ;;
          000) body="(no answer: is eunha running?) $body" ;;
        esac
        eu_die "$what (request $((i + 1)) of $n) answered HTTP ${got[i]:-000}: ${body:0:300}"
        return 1
        ;;
    esac
  done
  BENCH_BATCH_OUT=()
}

# bench_read_file FILE : sets BENCH_FILE to FILE's contents, without a process.
bench_read_file() {
  BENCH_FILE=
  IFS= read -r -d '' BENCH_FILE <"$1" || true
}

# Creates USERS accounts u1..uN on DOMAIN (u1 is the owner), gets each a bearer
# token through the Mastodon password grant, makes everyone follow everyone
# else so home timelines fill, and appends "DOMAIN TOKEN ACCOUNT_ID" lines to OUT.
# Five curl processes per tenant: the accounts, the app, the tokens, the
# account ids and the follows, each a batch of requests sent one after another.
bench_seed_tenant() {
  local domain=$1 users=$2 out=$3 i j role app cid csec dir rc=0
  local admin="http://127.0.0.1:$BENCH_ADMIN_PORT" pub="http://127.0.0.1:$BENCH_PUBLIC_PORT"
  local -a toks=() ids=()
  dir=$(mktemp -d) || return 1
  for ((i = 1; i <= users; i++)); do
    role=user
    [ "$i" = 1 ] && role=owner
    bench_batch_add "$dir/account$i" POST "$admin/admin/v1/tenants/$domain/accounts" \
      -H "Authorization: Bearer $BENCH_ADMIN_TOKEN" -H 'Content-Type: application/json' \
      --data "{\"username\":\"u$i\",\"email\":\"u$i@$domain\",\"password\":\"$BENCH_PASSWORD\",\"role\":\"$role\"}"
  done
  bench_batch_run "POST /admin/v1/tenants/$domain/accounts" || rc=1
  if [ "$rc" = 0 ]; then
    bench_batch_add "$dir/app" POST "$pub/api/v1/apps" -H "Host: $domain" \
      --data-urlencode client_name=eunha-bench \
      --data-urlencode redirect_uris=urn:ietf:wg:oauth:2.0:oob \
      --data-urlencode "scopes=read write follow"
    bench_batch_run "POST /api/v1/apps (Host $domain)" || rc=1
  fi
  if [ "$rc" = 0 ]; then
    bench_read_file "$dir/app"
    app=$BENCH_FILE
    bench_field "$app" client_id && cid=$BENCH_FIELD &&
      bench_field "$app" client_secret && csec=$BENCH_FIELD || rc=1
  fi
  if [ "$rc" = 0 ]; then
    for ((i = 1; i <= users; i++)); do
      bench_batch_add "$dir/token$i" POST "$pub/oauth/token" -H "Host: $domain" \
        --data-urlencode grant_type=password --data-urlencode "username=u$i@$domain" \
        --data-urlencode "password=$BENCH_PASSWORD" --data-urlencode "client_id=$cid" \
        --data-urlencode "client_secret=$csec" --data-urlencode "scope=read write follow"
    done
    bench_batch_run "POST /oauth/token (Host $domain)" || rc=1
  fi
  for ((i = 1; i <= users && rc == 0; i++)); do
    bench_read_file "$dir/token$i"
    bench_field "$BENCH_FILE" access_token || rc=1
    toks[i]=$BENCH_FIELD
    bench_batch_add "$dir/lookup$i" GET "$pub/api/v1/accounts/lookup?acct=u$i" \
      -H "Host: $domain" -H "Authorization: Bearer ${toks[i]}"
  done
  if [ "$rc" = 0 ]; then
    bench_batch_run "GET /api/v1/accounts/lookup (Host $domain)" || rc=1
  else
    BENCH_BATCH=()
    BENCH_BATCH_OUT=()
  fi
  for ((i = 1; i <= users && rc == 0; i++)); do
    bench_read_file "$dir/lookup$i"
    bench_field "$BENCH_FILE" id || rc=1
    ids[i]=$BENCH_FIELD
  done
  if [ "$rc" = 0 ] && [ "$users" -gt 1 ]; then
    for ((i = 1; i <= users; i++)); do
      for ((j = 1; j <= users; j++)); do
        [ "$i" = "$j" ] && continue
        bench_batch_add /dev/null POST "$pub/api/v1/accounts/${ids[j]}/follow" \
          -H "Host: $domain" -H "Authorization: Bearer ${toks[i]}"
      done
    done
    bench_batch_run "POST /api/v1/accounts/:id/follow (Host $domain)" || rc=1
  fi
  rm -rf "$dir"
  [ "$rc" = 0 ] || return 1
  for ((i = 1; i <= users; i++)); do
    printf '%s %s %s\n' "$domain" "${toks[i]}" "${ids[i]}" >>"$out"
  done
}

# bench_seed_tenants DOMAINS_FILE USERS OUT JOBS DIR : bench_seed_tenant for every
# domain, JOBS at a time; fails when any does.
bench_seed_tenants() {
  local domains=$1 users=$2 out=$3 jobs=$4 dir=$5 d n=0 failed=0 running=0
  mkdir -p "$dir/seed"
  while read -r d; do
    [ -n "$d" ] || continue
    n=$((n + 1))
    (bench_seed_tenant "$d" "$users" "$dir/seed/$n.tokens" 2>"$dir/seed/$n.err") &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
      wait -n || failed=1
      running=$((running - 1))
      [ "$failed" = 0 ] || break
    fi
  done <"$domains"
  while [ "$running" -gt 0 ]; do
    wait -n || failed=1
    running=$((running - 1))
  done
  if [ "$failed" != 0 ]; then
    cat "$dir"/seed/*.err >&2 2>/dev/null
    eu_die "seeding tenants failed (see above)"
    return 1
  fi
  cat "$dir"/seed/*.tokens >>"$out"
  rm -rf "$dir/seed"
}

# bench_seed_statuses TOKENS N DIR : posts N statuses spread over every user of
# every tenant, through the load generator so a few thousand take seconds.
# It works through the tenants a group of BENCH_SEED_GROUP_LINES tokens at a
# time. With a database per tenant that mattered: spread over hundreds of
# tenants at once, each tenant's turn came round less often than the pool's
# idle timeout, every post paid a new PostgreSQL backend, and posting crawled
# (6 statuses/s over 200 tenants). Pooled, the placement's connections stay
# open and the groups cost only a load generator start each.
bench_seed_statuses() {
  local tokens=$1 n=$2 dir=$3 errors lines group=${BENCH_SEED_GROUP_LINES:-96} start=1 k
  local part=$dir/seed-group.tokens
  [ "$n" -gt 0 ] || return 0
  lines=$(wc -l <"$tokens")
  [ "$lines" -gt 0 ] || return 0
  while [ "$start" -le "$lines" ]; do
    sed -n "${start},$((start + group - 1))p" "$tokens" >"$part"
    # This group's share of n, rounded so the groups add up to n.
    k=$(((n * (start + group - 1 < lines ? start + group - 1 : lines)) / lines - (n * (start - 1)) / lines))
    if [ "$k" -gt 0 ]; then
      "$LOADGEN_BIN" -p "$BENCH_PUBLIC_PORT" --tokens "$part" -m status=1 -n "$k" -c 8 -t 30 \
        --label seed-statuses --json "$dir/seed-statuses.json" -q || {
        eu_die "the load generator failed while posting statuses"
        return 1
      }
      errors=$(jq -r .errors "$dir/seed-statuses.json")
      if [ "$errors" != 0 ]; then
        eu_die "posting statuses: $errors of $k failed: $(jq -c .errors_by_kind "$dir/seed-statuses.json") (is POST /api/v1/statuses implemented yet?)"
        return 1
      fi
    fi
    start=$((start + group))
  done
  rm -f "$part"
}

# bench_wait_answer DOMAIN SECONDS : polls GET /api/v1/instance until it answers 200.
bench_wait_answer() {
  local domain=$1 secs=$2 i code
  for ((i = 0; i < secs * 10; i++)); do
    code=$(bench_http GET "http://127.0.0.1:$BENCH_PUBLIC_PORT/api/v1/instance" /dev/null -H "Host: $domain")
    [ "$code" = 200 ] && return 0
    sleep 0.1
  done
  eu_die "$domain did not answer GET /api/v1/instance within $secs s (last HTTP $code)"
}

bench_mem_kib() {
  local k v rss=0 pc=0 pd=0
  [ -r "/proc/$1/smaps_rollup" ] || {
    echo "0 0"
    return 1
  }
  while read -r k v _; do
    case $k in
      Rss:) rss=$v ;;
      Private_Clean:) pc=$v ;;
      Private_Dirty:) pd=$v ;;
    esac
  done <"/proc/$1/smaps_rollup"
  echo "$rss $((pc + pd))"
}

bench_threads() {
  awk '/^Threads:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0
}

# Fields 14-17 of /proc/PID/stat after the ")" that ends the command name.
bench_cpu_ticks() {
  local s
  s=$(cat "/proc/$1/stat" 2>/dev/null) || {
    echo 0
    return 0
  }
  s=${s##*) }
  # shellcheck disable=SC2086 # split on purpose
  set -- $s
  echo $((${12} + ${13}))
}

bench_pg_postmaster() {
  head -n 1 "$1/postmaster.pid" 2>/dev/null
}

bench_pg_pids() {
  local pm
  pm=$(bench_pg_postmaster "$1") || return 1
  [ -n "$pm" ] || return 1
  echo "$pm"
  ps -o pid= --ppid "$pm" 2>/dev/null | tr -d ' '
}

bench_pg_cpu_ticks() {
  local pm pid total=0 s
  pm=$(bench_pg_postmaster "$1") || {
    echo 0
    return 0
  }
  for pid in $(bench_pg_pids "$1"); do
    total=$((total + $(bench_cpu_ticks "$pid")))
  done
  s=$(cat "/proc/$pm/stat" 2>/dev/null) || s=""
  s=${s##*) }
  # shellcheck disable=SC2086
  set -- $s
  echo $((total + ${14:-0} + ${15:-0}))
}

# The cluster's CPU by role, to tell the statements' cost (client backends)
# from what a write leaves behind (autovacuum, and the WAL writer,
# checkpointer and background writer). REAPED is the postmaster's own time
# and its children that exited: autovacuum workers exit after each table
# run, so most of it is theirs when clients keep their connections.
bench_pg_cpu_split() {
  local pm pid t client=0 av=0 bg=0 title s
  pm=$(bench_pg_postmaster "$1") || {
    echo "0 0 0 0"
    return 0
  }
  for pid in $(ps -o pid= --ppid "$pm" 2>/dev/null | tr -d ' '); do
    t=$(bench_cpu_ticks "$pid")
    title=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || title=""
    case $title in
      *autovacuum*) av=$((av + t)) ;;
      *writer* | *checkpointer* | *launcher* | *walsummarizer* | *"io worker"* | *logger* | *stats*) bg=$((bg + t)) ;;
      *) client=$((client + t)) ;;
    esac
  done
  s=$(cat "/proc/$pm/stat" 2>/dev/null) || s=""
  s=${s##*) }
  # shellcheck disable=SC2086
  set -- $s
  echo "$client $av $bg $((${12:-0} + ${13:-0} + ${14:-0} + ${15:-0}))"
}

bench_pg_mem_kib() {
  local pid
  # Backends come and go while this reads (autovacuum starts a worker every
  # naptime / databases seconds), so each file is read through cat, which
  # shrugs off one that vanished; awk given the names would stop at it
  # (mawk does) and print nothing, and the caller's read would fail.
  # A mapping header is "START-END PERMS ..."; an 's' in the 4th permission
  # character marks a shared mapping (shared buffers, dynamic shared memory).
  for pid in $(bench_pg_pids "$1"); do
    cat "/proc/$pid/smaps" 2>/dev/null || true
  done | awk '
    $1 ~ /^[0-9a-f]+-[0-9a-f]+$/ { shared = (substr($2, 4, 1) == "s"); next }
    $1 == "Private_Clean:" || $1 == "Private_Dirty:" { if (!shared) priv += $2 }
    $1 == "Pss:" { if (shared) shm += $2 }
    END { printf "%d %d\n", priv, shm }'
}

bench_psql() {
  psql "$1" -X -q -At -v ON_ERROR_STOP=1 -c "$2"
}

# bench_pg_db_bytes_sql NAME_SQL : an SQL expression for the bytes database
# NAME_SQL (an SQL string literal) takes on disk: pg_database_size without
# the relcache init file, which comes and goes with catalog invalidations
# (~160 KiB) and would swamp a per-tenant figure. Run it as a superuser.
bench_pg_db_bytes_sql() {
  printf "(SELECT pg_database_size(d.oid) - coalesce((pg_stat_file('base/' || d.oid || '/pg_internal.init', true)).size, 0) FROM pg_database d WHERE d.datname = %s)" "$1"
}

bench_clk_tck() {
  getconf CLK_TCK 2>/dev/null || echo 100
}

# bench_fmt_num N DECIMALS : N with thousands separators (1,017.95).
bench_fmt_num() {
  awk -v n="$1" -v d="${2:-2}" 'BEGIN {
    s = sprintf("%." d "f", n); neg = (substr(s, 1, 1) == "-"); if (neg) s = substr(s, 2)
    i = index(s, "."); ip = (i ? substr(s, 1, i - 1) : s); fp = (i ? substr(s, i) : "")
    while (length(ip) > 3) { fp = "," substr(ip, length(ip) - 2) fp; ip = substr(ip, 1, length(ip) - 3) }
    printf "%s%s%s\n", (neg ? "-" : ""), ip, fp }'
}

# bench_mib KIB : "12.34 MiB"
bench_mib() {
  awk -v k="$1" 'BEGIN { printf "%.2f MiB\n", k / 1024 }'
}

# bench_size KIB : "512 KiB" below a MiB, else "12.34 MiB" (per-tenant figures are small).
bench_size() {
  awk -v k="$1" 'BEGIN { if (k < 1024 && k > -1024) printf "%.0f KiB\n", k; else printf "%.2f MiB\n", k / 1024 }'
}

# bench_bytes BYTES : "512 B", "12.3 KiB" or "12.34 MiB" (disk per tenant can be
# a few hundred bytes).
bench_bytes() {
  awk -v b="$1" 'BEGIN { a = (b < 0 ? -b : b)
    if (a < 1024) printf "%.0f B\n", b; else if (a < 1048576) printf "%.1f KiB\n", b / 1024
    else printf "%.2f MiB\n", b / 1048576 }'
}

bench_machine_summary() {
  local cpu mem pgv redisv evv
  cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null)
  mem=$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null)
  pgv=$("$(eu_pg_bindir)/postgres" --version 2>/dev/null | awk '{ print $3 }')
  redisv=$(redis-server --version 2>/dev/null | sed -n 's/.*v=\([^ ]*\).*/\1/p')
  evv=$(pkg-config --modversion libevent 2>/dev/null)
  echo "- Machine: ${cpu:-unknown CPU}, $(nproc) CPUs, ${mem:-? GiB} RAM, $(uname -sr)"
  echo "- Versions: $("$EUNHA_BIN" version 2>/dev/null | head -n 1) (commit $(git -C "$BENCH_ROOT" rev-parse --short HEAD 2>/dev/null)$(git -C "$BENCH_ROOT" diff --quiet HEAD 2>/dev/null || echo ", uncommitted changes")), PostgreSQL $pgv, Redis $redisv, libevent $evv"
}

# bench_make_tmp PREFIX : a fresh directory the postgres user can reach.
bench_make_tmp() {
  local d
  d=$(mktemp -d "/tmp/$1.XXXXXX") || return 1
  chmod 755 "$d"
  echo "$d"
}

# bench_results_dir NAME : benchmark-results/NAME-DATE[-N], created.
bench_results_dir() {
  local base n=1 d
  base=$BENCH_ROOT/benchmark-results/$1-$(date +%Y%m%d)
  d=$base
  while [ -e "$d" ] && [ "$n" -lt 100 ]; do
    n=$((n + 1))
    d=$base-$n
  done
  mkdir -p "$d" && echo "$d"
}
