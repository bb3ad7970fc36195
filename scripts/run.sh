#!/usr/bin/env bash
# Runs Eunha locally: installs missing packages, builds Release into build/,
# starts a private PostgreSQL and Redis under ./var/, writes var/eunha.toml if
# missing, starts `build/eunha serve`, creates demo tenants `localhost` and
# `demo.localhost` plus a demo user, and stays in the foreground.
# Ctrl-C stops eunha and the servers this script started. Re-running reuses var/.
#
# Environment:
#   EUNHA_PG_PORT (55432), EUNHA_REDIS_PORT (56379)  ports of the private servers
#   EUNHA_DATABASE_URL, EUNHA_REDIS_URL   use these existing servers instead
#                                         (no private server is started)
#   EUNHA_LISTEN (127.0.0.1:8080), EUNHA_ADMIN_LISTEN (127.0.0.1:9180)
#                                         used only when writing var/eunha.toml
#   EUNHA_SKIP_BUILD=1                    use the existing build/eunha
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/lib/services.sh
. "$ROOT/scripts/lib/services.sh"

VAR=$ROOT/var
CONFIG=$VAR/eunha.toml
TOKEN_FILE=$VAR/admin_token
PG_PORT=${EUNHA_PG_PORT:-55432}
REDIS_PORT=${EUNHA_REDIS_PORT:-56379}
LISTEN=${EUNHA_LISTEN:-127.0.0.1:8080}
ADMIN_LISTEN=${EUNHA_ADMIN_LISTEN:-127.0.0.1:9180}

eu_install_deps

if [ "${EUNHA_SKIP_BUILD:-0}" != 1 ]; then
  mapfile -t generator < <(eu_cmake_generator build)
  cmake "${generator[@]}" -S . -B build -DCMAKE_BUILD_TYPE=Release
  cmake --build build -j"${EUNHA_JOBS:-$(nproc 2>/dev/null || echo 2)}"
fi
[ -x build/eunha ] || eu_die "build/eunha not found"

mkdir -p "$VAR"

# PostgreSQL runs as the postgres user, which must be able to reach its data
# directory; when the checkout is somewhere it cannot (e.g. under /root), use /tmp.
PG_DIR=$VAR/pg
if ! eu_pg_user_can_reach "$VAR"; then
  PG_DIR=/tmp/eunha-pg-$(id -u)-$(printf '%s' "$ROOT" | cksum | cut -d' ' -f1)
  eu_log "postgres cannot reach $VAR; PostgreSQL data lives in $PG_DIR"
fi
REDIS_DIR=$VAR/redis

STARTED_PG=0
STARTED_REDIS=0
EUNHA_PID=

# shellcheck disable=SC2317 # invoked through traps
cleanup() {
  local rc=$?
  trap - INT TERM EXIT
  if [ -n "$EUNHA_PID" ] && kill -0 "$EUNHA_PID" 2>/dev/null; then
    eu_log "stopping eunha (pid $EUNHA_PID)"
    kill -TERM "$EUNHA_PID" 2>/dev/null || true
    local i
    for ((i = 0; i < 300; i++)); do
      kill -0 "$EUNHA_PID" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$EUNHA_PID" 2>/dev/null; then
      eu_log "eunha did not stop in 30s; killing it"
      kill -KILL "$EUNHA_PID" 2>/dev/null || true
    fi
    wait "$EUNHA_PID" 2>/dev/null || true
  fi
  [ "$STARTED_PG" = 1 ] && { eu_pg_stop "$PG_DIR" || true; }
  [ "$STARTED_REDIS" = 1 ] && { eu_redis_stop "$REDIS_DIR" || true; }
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -z "${EUNHA_DATABASE_URL:-}" ]; then
  STARTED_PG=1 # also when left running by an earlier run: var/ is ours
  eu_pg_start "$PG_DIR" "$PG_PORT"
  export EUNHA_DATABASE_URL="postgresql://postgres@127.0.0.1:$PG_PORT/eunha"
else
  eu_log "using existing PostgreSQL: EUNHA_DATABASE_URL"
fi
if [ -z "${EUNHA_REDIS_URL:-}" ]; then
  STARTED_REDIS=1
  eu_redis_start "$REDIS_DIR" "$REDIS_PORT"
  export EUNHA_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
else
  eu_log "using existing Redis: EUNHA_REDIS_URL"
fi

if [ ! -s "$TOKEN_FILE" ]; then
  (
    umask 077
    od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$TOKEN_FILE"
  )
fi
chmod 600 "$TOKEN_FILE"
ADMIN_TOKEN=$(cat "$TOKEN_FILE")

if [ ! -f "$CONFIG" ]; then
  eu_log "writing $CONFIG"
  cat >"$CONFIG" <<EOF
# Local development config written by scripts/run.sh. Edit freely; run.sh
# never overwrites it. EUNHA_DATABASE_URL / EUNHA_REDIS_URL override the urls.
[server]
listen = "$LISTEN"
admin_listen = "$ADMIN_LISTEN"
scheme = "http"
cpu_threads = 2

[admin]
token_file = "$TOKEN_FILE"

[database]
url = "postgresql://postgres@127.0.0.1:$PG_PORT/eunha"
template = "eunha_template"

[redis]
url = "redis://127.0.0.1:$REDIS_PORT/0"
prefix = "eunha"

[log]
level = "info"
EOF
fi

# The listeners come from the config actually in use (it may have been edited).
toml_get() { # KEY -> value of `KEY = "..."` in $CONFIG
  sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*\"\\([^\"]*\\)\".*/\\1/p" "$CONFIG" | head -n 1
}
ADMIN_ADDR=$(toml_get admin_listen)
ADMIN_ADDR=${ADMIN_ADDR:-127.0.0.1:9180}
PUBLIC_ADDR=$(toml_get listen)
PUBLIC_ADDR=${PUBLIC_ADDR:-127.0.0.1:8080}
ADMIN_URL=http://$ADMIN_ADDR

build/eunha serve -c "$CONFIG" &
EUNHA_PID=$!

eu_log "waiting for $ADMIN_URL/healthz"
ready=0
for ((i = 0; i < 600; i++)); do
  if ! kill -0 "$EUNHA_PID" 2>/dev/null; then
    eu_die "eunha exited during startup"
    exit 1
  fi
  if curl -fsS -o /dev/null "$ADMIN_URL/healthz" 2>/dev/null; then
    ready=1
    break
  fi
  sleep 0.1
done
[ "$ready" = 1 ] || {
  eu_die "eunha not healthy after 60s"
  exit 1
}

# admin_post PATH JSON : POST to the admin API; 2xx and 409 (exists) are fine.
admin_post() {
  local code
  code=$(curl -sS -o "$VAR/.admin_response" -w '%{http_code}' -X POST \
    -H "Authorization: Bearer $ADMIN_TOKEN" -H 'Content-Type: application/json' \
    --data "$2" "$ADMIN_URL$1") || code=000
  case $code in
    2??) eu_log "created: POST $1" ;;
    409) eu_log "exists already: POST $1" ;;
    *)
      eu_log "POST $1 -> HTTP $code: $(cat "$VAR/.admin_response" 2>/dev/null)"
      rm -f "$VAR/.admin_response"
      return 1
      ;;
  esac
  rm -f "$VAR/.admin_response"
}

DEMO_PASSWORD_FILE=$VAR/demo_password
if [ ! -s "$DEMO_PASSWORD_FILE" ]; then
  (
    umask 077
    od -An -tx1 -N12 /dev/urandom | tr -d ' \n' >"$DEMO_PASSWORD_FILE"
  )
fi
DEMO_PASSWORD=$(cat "$DEMO_PASSWORD_FILE")

admin_post /admin/v1/tenants '{"domain":"localhost","title":"Eunha (localhost)"}' || true
admin_post /admin/v1/tenants '{"domain":"demo.localhost","title":"Eunha demo"}' || true
admin_post /admin/v1/tenants/localhost/accounts \
  "{\"username\":\"demo\",\"email\":\"demo@localhost\",\"password\":\"$DEMO_PASSWORD\",\"role\":\"owner\"}" || true

PUBLIC_PORT=${PUBLIC_ADDR##*:}
cat <<EOF

Eunha is running (pid $EUNHA_PID). Try:
  curl -H 'Host: demo.localhost' http://127.0.0.1:$PUBLIC_PORT/api/v1/instance
  curl -H 'Host: localhost' http://127.0.0.1:$PUBLIC_PORT/api/v2/instance
Admin API: $ADMIN_URL  (token in $TOKEN_FILE)
  curl -H "Authorization: Bearer \$(cat $TOKEN_FILE)" $ADMIN_URL/admin/v1/tenants
Demo user on localhost: demo / $DEMO_PASSWORD  (in $DEMO_PASSWORD_FILE)
Press Ctrl-C to stop.

EOF

set +e
wait "$EUNHA_PID"
rc=$?
set -e
EUNHA_PID=
exit "$rc"
