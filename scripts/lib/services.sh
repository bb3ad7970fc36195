# shellcheck shell=bash
# Shared helpers for scripts/run.sh and scripts/test.sh. Source it; do not run it.
#
#   eu_install_deps [PKG...]        apt-get install whatever build/runtime packages (and PKGs) are missing
#   eu_cmake_generator DIR          cmake's -G arguments for a new build directory DIR
#   eu_free_port [EXCLUDED...]      print a TCP port nobody listens on (not one of EXCLUDED)
#   eu_pg_init DIR                  initdb DIR unless it is a data directory already
#   eu_pg_start DIR PORT [--no-fsync]   initdb DIR if empty, start a private PostgreSQL on PORT
#                                   (lines in $EU_PG_EXTRA_CONF are added to its settings)
#   eu_pg_stop DIR                  stop it (fast shutdown); no-op when not running
#   eu_pg_kill DIR                  SIGKILL the postmaster and its children (a crash)
#   eu_pg_sync_primary_conf         settings for a primary that waits for a standby
#                                   (put them in EU_PG_EXTRA_CONF for eu_pg_start)
#   eu_pg_standby_start DIR PORT PRIMARY_PORT   a streaming standby of the primary
#                                   on PRIMARY_PORT (pg_basebackup -R into DIR); its
#                                   application_name is DIR's base name
#   eu_pg_wait_sync PRIMARY_PORT    wait until a synchronous standby streams from it
#   eu_pg_promote DIR               promote the standby in DIR to a primary
#   eu_redis_start DIR PORT         start a private, non-persistent Redis on PORT
#   eu_redis_stop DIR               stop it; no-op when not running
#   eu_redis_pause DIR / eu_redis_resume DIR   freeze it (accepts, never answers) / thaw it
#   eu_pg_user_can_reach DIR        true when the postgres user can traverse DIR
#
# PostgreSQL refuses to run as root, so when we are root initdb/pg_ctl run as
# the `postgres` system user (created if missing). As an ordinary user they run
# as that user. Servers bind 127.0.0.1 only; PostgreSQL uses trust auth with
# superuser `postgres`, so the URL is postgresql://postgres@127.0.0.1:PORT/postgres.

EU_DEPS=(build-essential cmake pkg-config libevent-dev libpq-dev libhiredis-dev
  libjansson-dev libsodium-dev libssl-dev libcurl4-openssl-dev libwebp-dev
  libjpeg-dev libpng-dev libsystemd-dev check postgresql redis-server curl libgumbo-dev
  libgif-dev libwslay-dev libicu-dev libqrencode-dev libzip-dev ninja-build)
# What only the tests need besides: the test SMTP server, the browser the
# pages are tested in, and the front proxy of the fleet's tests (scripts/test.sh
# installs these too; scripts/benchmark_fleet.sh installs haproxy).
EU_TEST_DEPS=(python3-aiosmtpd chromium haproxy nginx)

# eu_cmake_generator DIR : the generator arguments for configuring DIR:
# Ninja for a new build directory (its no-op build takes a third of a
# second where make's took half a minute, and a clean test build a quarter
# less CPU), nothing for one configured already (cmake refuses a change).
eu_cmake_generator() {
  if [ ! -f "$1/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then
    printf '%s\n' -G Ninja
  fi
}

eu_log() { printf '[eunha] %s\n' "$*" >&2; }
eu_die() { printf '[eunha] error: %s\n' "$*" >&2; return 1; }

# Runs a command as root: directly when we are root, else through sudo.
eu_as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    eu_die "need root to run: $*"
  fi
}

# eu_apt_install PKG... : installs the given packages, running `apt-get update`
# first (only called when something is missing).
eu_apt_install() {
  [ "$#" -gt 0 ] || return 0
  command -v apt-get >/dev/null 2>&1 || eu_die "apt-get not found; install these yourself: $*" || return 1
  eu_log "installing: $*"
  eu_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q || return 1
  eu_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"
}

eu_pkg_installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

eu_install_deps() {
  if ! command -v dpkg-query >/dev/null 2>&1; then
    eu_log "not a Debian-like system: skipping package installation (need: ${EU_DEPS[*]} $*)"
    return 0
  fi
  local missing=() p
  for p in "${EU_DEPS[@]}" "$@"; do
    eu_pkg_installed "$p" || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    eu_apt_install "${missing[@]}" || return 1
  fi
  return 0
}

# eu_port_busy PORT : true when something accepts TCP connections on 127.0.0.1:PORT
# or a listening socket for PORT shows up in /proc/net/tcp{,6}.
eu_port_busy() {
  local port=$1 hex
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    return 0
  fi
  if [ -r /proc/net/tcp ]; then
    hex=$(printf '%04X' "$port")
    # column 2 is local address ADDR:PORT, column 4 state (0A = LISTEN)
    if awk -v h=":$hex" 'NR > 1 && substr($2, length($2) - 4) == h && $4 == "0A" { f = 1 } END { exit !f }' \
      /proc/net/tcp /proc/net/tcp6 2>/dev/null; then
      return 0
    fi
  fi
  return 1
}

eu_free_port() {
  local port i x ok lo=20000 span=40000 eph
  # Below the kernel's ephemeral range when there is room: a port from it
  # can be taken by any outgoing connection or port-0 listener (the test
  # servers) between this check and the bind, which broke parallel suites.
  eph=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true)
  if [ -n "$eph" ] && [ "$eph" -gt $((lo + 1000)) ]; then
    span=$((eph - lo))
  fi
  for ((i = 0; i < 200; i++)); do
    port=$((lo + (RANDOM * 32768 + RANDOM) % span))
    ok=1
    for x in "$@"; do
      [ "$x" = "$port" ] && ok=0
    done
    [ "$ok" -eq 1 ] || continue
    eu_port_busy "$port" && continue
    echo "$port"
    return 0
  done
  eu_die "no free TCP port found"
}

# Directory holding initdb/pg_ctl: $EUNHA_PG_BINDIR, else the newest
# /usr/lib/postgresql/*/bin, else wherever pg_ctl is on PATH.
eu_pg_bindir() {
  if [ -n "${EUNHA_PG_BINDIR:-}" ]; then
    echo "$EUNHA_PG_BINDIR"
    return 0
  fi
  local d
  d=$(printf "%s\n" /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
  if [ -n "$d" ] && [ -x "$d/pg_ctl" ]; then
    echo "$d"
    return 0
  fi
  if command -v pg_ctl >/dev/null 2>&1; then
    dirname "$(command -v pg_ctl)"
    return 0
  fi
  eu_die "PostgreSQL server binaries (pg_ctl) not found; set EUNHA_PG_BINDIR"
}

eu_pg_ensure_user() {
  [ "$(id -u)" -eq 0 ] || return 0
  id postgres >/dev/null 2>&1 && return 0
  eu_log "creating system user postgres"
  useradd --system --user-group --home-dir /var/lib/postgresql --no-create-home \
    --shell /bin/sh postgres
}

# eu_as_pg CMD... : runs CMD as the postgres user when root, else as ourselves.
# Runs from / so the server never inherits a cwd it cannot read.
eu_as_pg() {
  if [ "$(id -u)" -eq 0 ]; then
    (cd / && runuser -u postgres -- "$@")
  else
    (cd / && "$@")
  fi
}

eu_pg_user_can_reach() {
  eu_as_pg test -x "$1" 2>/dev/null
}

eu_abspath() {
  case $1 in
    /*) printf '%s\n' "$1" ;;
    *) printf '%s/%s\n' "$PWD" "$1" ;;
  esac
}

eu_pg_running() {
  local dir bin
  dir=$(eu_abspath "$1")
  bin=$(eu_pg_bindir) || return 1
  [ -f "$dir/postmaster.pid" ] || return 1
  eu_as_pg "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1
}

# eu_pg_init DIR : initdb DIR (an empty or missing directory) unless it
# already holds a data directory; does not start the server.
eu_pg_init() {
  local dir bin
  dir=$(eu_abspath "${1:?eu_pg_init DIR}")
  bin=$(eu_pg_bindir) || return 1
  eu_pg_ensure_user || return 1
  mkdir -p "$dir" || return 1
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$dir" || return 1
  fi
  chmod 700 "$dir" || return 1
  if [ ! -f "$dir/PG_VERSION" ]; then
    if [ -n "$(ls -A "$dir")" ]; then
      eu_die "$dir is not empty and not a PostgreSQL data directory"
      return 1
    fi
    eu_log "initdb $dir"
    eu_as_pg "$bin/initdb" -D "$dir" -A trust -U postgres --no-sync -E UTF8 --locale=C.UTF-8 \
      >"$dir.initdb.log" 2>&1 || {
      # C.UTF-8 may be missing on some systems; fall back to plain C.
      rm -rf "${dir:?}"/* 2>/dev/null
      eu_as_pg "$bin/initdb" -D "$dir" -A trust -U postgres --no-sync -E UTF8 --locale=C \
        >"$dir.initdb.log" 2>&1
    } || {
      cat "$dir.initdb.log" >&2
      eu_die "initdb failed"
      return 1
    }
    rm -f "$dir.initdb.log"
    grep -q "^include_if_exists = 'eunha.conf'" "$dir/postgresql.conf" ||
      echo "include_if_exists = 'eunha.conf'" >>"$dir/postgresql.conf"
  fi
}

eu_pg_start() {
  local dir port nofsync=0 bin
  dir=$(eu_abspath "${1:?eu_pg_start DIR PORT [--no-fsync]}")
  port=${2:?eu_pg_start DIR PORT [--no-fsync]}
  [ "${3:-}" = "--no-fsync" ] && nofsync=1
  bin=$(eu_pg_bindir) || return 1
  eu_pg_ensure_user || return 1

  mkdir -p "$dir" || return 1
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$dir" || return 1
  fi
  chmod 700 "$dir" || return 1
  if ! eu_pg_user_can_reach "$dir"; then
    eu_die "user postgres cannot reach $dir (a parent directory is not traversable); use a directory under /tmp"
    return 1
  fi

  if eu_pg_running "$dir"; then
    eu_log "PostgreSQL already running in $dir"
    return 0
  fi

  eu_pg_init "$dir" || return 1

  # Rewritten on every start so a changed port or fsync choice takes effect;
  # a bare `pg_ctl start` later (EUNHA_TEST_PG_START) reuses these settings.
  {
    echo "# written by scripts/lib/services.sh"
    echo "listen_addresses = '127.0.0.1'"
    echo "port = $port"
    echo "unix_socket_directories = '$dir'"
    echo "max_connections = 300"
    # Settings a caller adds for one run (a benchmark's statement profile).
    [ -z "${EU_PG_EXTRA_CONF:-}" ] || printf '%s\n' "$EU_PG_EXTRA_CONF"
    if [ "$nofsync" -eq 1 ]; then
      # synchronous_commit stays on: with fsync off it costs only a write(),
      # and it keeps a commit that was acknowledged through a crash of
      # PostgreSQL's processes (test_faults kills them) though not of the OS.
      echo "fsync = off"
      echo "full_page_writes = off"
    fi
  } >"$dir/eunha.conf" || return 1
  [ "$(id -u)" -eq 0 ] && chown postgres: "$dir/eunha.conf"

  eu_log "starting PostgreSQL on 127.0.0.1:$port ($dir)"
  if ! eu_as_pg "$bin/pg_ctl" -D "$dir" -l "$dir/log" -w -t 60 start >/dev/null; then
    tail -n 30 "$dir/log" >&2 2>/dev/null
    eu_die "PostgreSQL failed to start (log: $dir/log)"
    return 1
  fi
}

eu_pg_stop() {
  local dir bin
  dir=$(eu_abspath "${1:?eu_pg_stop DIR}")
  bin=$(eu_pg_bindir) || return 1
  eu_pg_running "$dir" || return 0
  eu_log "stopping PostgreSQL ($dir)"
  eu_as_pg "$bin/pg_ctl" -D "$dir" -m fast -w -t 60 stop >/dev/null ||
    eu_as_pg "$bin/pg_ctl" -D "$dir" -m immediate -w -t 30 stop >/dev/null
}

# A crash, not a shutdown: nothing is flushed or checkpointed, so the next
# eu_pg_start runs crash recovery from the WAL.
eu_pg_kill() {
  local dir pid kids i
  dir=$(eu_abspath "${1:?eu_pg_kill DIR}")
  [ -f "$dir/postmaster.pid" ] || return 0
  pid=$(head -n 1 "$dir/postmaster.pid")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kids=$(pgrep -P "$pid" || true)
  eu_log "killing PostgreSQL ($dir, pid $pid)"
  # shellcheck disable=SC2086 # one pid a word
  kill -KILL "$pid" $kids 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    # shellcheck disable=SC2086
    kill -0 "$pid" $kids 2>/dev/null || return 0
    sleep 0.1
  done
  eu_die "PostgreSQL processes survived SIGKILL"
}

# Settings for a primary whose commits wait for a standby: a commit is
# acknowledged only once a standby has its WAL on disk, so promoting that
# standby after the primary dies loses no acknowledged write. Until a
# standby streams, every write on such a primary waits.
eu_pg_sync_primary_conf() {
  printf '%s\n' "wal_level = replica" "max_wal_senders = 5" "synchronous_commit = on" \
    "synchronous_standby_names = '*'"
}

# eu_pg_standby_start DIR PORT PRIMARY_PORT : copies the running primary on
# 127.0.0.1:PRIMARY_PORT into DIR (pg_basebackup -R: it writes
# standby.signal and primary_conninfo) and starts it on PORT as a hot,
# streaming standby. DIR must not exist or be empty. $EU_PG_EXTRA_CONF is
# the standby's own (the primary's eunha.conf is rewritten by eu_pg_start):
# left without synchronous_standby_names, the standby once promoted takes
# writes without waiting for a standby of its own. It connects with
# application_name set to DIR's base name, so a primary can name it in
# synchronous_standby_names.
eu_pg_standby_start() {
  local dir port primary bin
  dir=$(eu_abspath "${1:?eu_pg_standby_start DIR PORT PRIMARY_PORT}")
  port=${2:?eu_pg_standby_start DIR PORT PRIMARY_PORT}
  primary=${3:?eu_pg_standby_start DIR PORT PRIMARY_PORT}
  bin=$(eu_pg_bindir) || return 1
  eu_pg_ensure_user || return 1
  mkdir -p "$dir" || return 1
  [ -z "$(ls -A "$dir")" ] || eu_die "$dir is not empty" || return 1
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$dir" || return 1
  fi
  chmod 700 "$dir" || return 1
  eu_log "pg_basebackup of 127.0.0.1:$primary into $dir"
  eu_as_pg "$bin/pg_basebackup" -h 127.0.0.1 -p "$primary" -U postgres -D "$dir" -R \
    -X stream -c fast --no-sync >"$dir.basebackup.log" 2>&1 || {
    cat "$dir.basebackup.log" >&2
    eu_die "pg_basebackup from port $primary failed"
    return 1
  }
  rm -f "$dir.basebackup.log" "$dir/postmaster.pid" "$dir/postmaster.opts"
  # After the line -R wrote, so it wins: the same connection, named.
  echo "primary_conninfo = 'host=127.0.0.1 port=$primary user=postgres application_name=$(basename "$dir")'" \
    >>"$dir/postgresql.auto.conf" || return 1
  eu_pg_start "$dir" "$port" --no-fsync
}

# eu_pg_wait_sync PRIMARY_PORT [SECONDS] : waits (30 s by default) until a
# standby streams from the primary on PRIMARY_PORT as a synchronous one.
eu_pg_wait_sync() {
  local port=${1:?eu_pg_wait_sync PRIMARY_PORT [SECONDS]} secs=${2:-30} bin i n
  bin=$(eu_pg_bindir) || return 1
  for ((i = 0; i < secs * 10; i++)); do
    n=$("$bin/psql" -X -A -t -h 127.0.0.1 -p "$port" -U postgres -d postgres -c \
      "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync' AND state = 'streaming'" \
      2>/dev/null || true)
    [ "${n:-0}" -ge 1 ] 2>/dev/null && return 0
    sleep 0.1
  done
  eu_die "no synchronous standby streams from port $port"
}

# eu_pg_promote DIR : promotes the standby in DIR (pg_ctl promote) and waits
# until it takes writes.
eu_pg_promote() {
  local dir bin
  dir=$(eu_abspath "${1:?eu_pg_promote DIR}")
  bin=$(eu_pg_bindir) || return 1
  eu_log "promoting the standby in $dir"
  eu_as_pg "$bin/pg_ctl" -D "$dir" -w -t 60 promote >/dev/null
}

eu_redis_pid() {
  local pid
  [ -f "$1/redis.pid" ] || return 1
  pid=$(cat "$1/redis.pid" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

eu_redis_start() {
  local dir port i
  dir=$(eu_abspath "${1:?eu_redis_start DIR PORT}")
  port=${2:?eu_redis_start DIR PORT}
  command -v redis-server >/dev/null 2>&1 || eu_die "redis-server not found" || return 1
  mkdir -p "$dir" || return 1
  if eu_redis_pid "$dir" >/dev/null; then
    eu_log "Redis already running in $dir"
    return 0
  fi
  rm -f "$dir/redis.pid"
  echo "$port" >"$dir/port"
  eu_log "starting Redis on 127.0.0.1:$port ($dir)"
  redis-server --port "$port" --bind 127.0.0.1 --daemonize yes --save '' --appendonly no \
    --pidfile "$dir/redis.pid" --logfile "$dir/log" --dir "$dir" || {
    eu_die "redis-server failed (log: $dir/log)"
    return 1
  }
  for ((i = 0; i < 100; i++)); do
    if redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG; then
      return 0
    fi
    sleep 0.1
  done
  tail -n 20 "$dir/log" >&2 2>/dev/null
  eu_die "Redis did not answer on port $port (log: $dir/log)"
}

# eu_redis_pause DIR / eu_redis_resume DIR : SIGSTOP / SIGCONT the server, so
# it keeps its port and accepts connections but answers nothing (a hung Redis).
eu_redis_pause() { local pid; pid=$(eu_redis_pid "${1:?eu_redis_pause DIR}") && kill -STOP "$pid"; }
eu_redis_resume() { local pid; pid=$(eu_redis_pid "${1:?eu_redis_resume DIR}") && kill -CONT "$pid"; }

eu_redis_stop() {
  local dir pid port i
  dir=$(eu_abspath "${1:?eu_redis_stop DIR}")
  pid=$(eu_redis_pid "$dir") || return 0
  port=$(cat "$dir/port" 2>/dev/null || true)
  eu_log "stopping Redis ($dir)"
  kill -CONT "$pid" 2>/dev/null || true # a paused one could not answer SHUTDOWN
  # SHUTDOWN SAVE writes dump.rdb, which a later eu_redis_start on the same
  # DIR loads: the data survives a stop/start like PostgreSQL's does.
  if [ -n "$port" ]; then
    redis-cli -h 127.0.0.1 -p "$port" shutdown save >/dev/null 2>&1 || true
  fi
  if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null || true; fi
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || {
      rm -f "$dir/redis.pid"
      return 0
    }
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null
  rm -f "$dir/redis.pid"
  return 0
}

# eu_sq STRING : STRING quoted for /bin/sh (single quotes).
eu_sq() {
  local s=${1//\'/\'\\\'\'}
  printf "'%s'" "$s"
}

# eu_test_services_up DIR : starts a throwaway PostgreSQL (DIR/pg) and Redis
# (DIR/redis) on free ports for the tests, writes the small control scripts
# they run with system() (DIR/pg-stop, ...) and exports the EUNHA_TEST_*
# variables naming them (see scripts/test.sh). scripts/test.sh calls it once
# for the servers every suite shares; scripts/with-services.sh calls it again
# for each suite that stops, kills or pauses its servers, so that suite owns
# a pair nobody else is using. With EUNHA_TEST_PG_SEED (an initdb'd data
# directory that is not running) the data directory is copied from it, which
# is much cheaper than another initdb.
eu_test_services_up() {
  local dir pg_port redis_port lib try
  dir=$(eu_abspath "${1:?eu_test_services_up DIR}")
  if [ -n "${EUNHA_TEST_PG_SEED:-}" ] && [ -f "$EUNHA_TEST_PG_SEED/PG_VERSION" ] &&
    [ ! -e "$dir/pg" ]; then
    cp -a "$EUNHA_TEST_PG_SEED" "$dir/pg" || return 1
  fi
  # A free port can still be taken before the server binds it (others run
  # tests on this machine too): another port then, up to three times.
  for try in 1 2 3; do
    pg_port=$(eu_free_port) || return 1
    eu_pg_start "$dir/pg" "$pg_port" --no-fsync && break
    [ "$try" -lt 3 ] || return 1
  done
  for try in 1 2 3; do
    redis_port=$(eu_free_port "$pg_port") || return 1
    eu_redis_start "$dir/redis" "$redis_port" && break
    [ "$try" -lt 3 ] || return 1
    eu_redis_stop "$dir/redis" || true
  done

  # The control scripts re-use this library, so a restart goes through the
  # same code (same port, same data directory).
  lib=$(eu_sq "$(eu_abspath "${BASH_SOURCE[0]}")")
  eu_test_ctl "$dir/pg-stop" "$lib" eu_pg_stop "$dir/pg" || return 1
  eu_test_ctl "$dir/pg-kill" "$lib" eu_pg_kill "$dir/pg" || return 1
  eu_test_ctl "$dir/pg-start" "$lib" eu_pg_start "$dir/pg" "$pg_port" --no-fsync || return 1
  eu_test_ctl "$dir/redis-stop" "$lib" eu_redis_stop "$dir/redis" || return 1
  eu_test_ctl "$dir/redis-start" "$lib" eu_redis_start "$dir/redis" "$redis_port" || return 1
  eu_test_ctl "$dir/redis-pause" "$lib" eu_redis_pause "$dir/redis" || return 1
  eu_test_ctl "$dir/redis-resume" "$lib" eu_redis_resume "$dir/redis" || return 1

  export EUNHA_TEST_PG_URL="postgresql://postgres@127.0.0.1:$pg_port/postgres"
  export EUNHA_TEST_REDIS_URL="redis://127.0.0.1:$redis_port/0"
  EUNHA_TEST_PG_STOP=$(eu_sq "$dir/pg-stop")
  EUNHA_TEST_PG_START=$(eu_sq "$dir/pg-start")
  EUNHA_TEST_PG_KILL=$(eu_sq "$dir/pg-kill")
  EUNHA_TEST_REDIS_STOP=$(eu_sq "$dir/redis-stop")
  EUNHA_TEST_REDIS_START=$(eu_sq "$dir/redis-start")
  EUNHA_TEST_REDIS_PAUSE=$(eu_sq "$dir/redis-pause")
  EUNHA_TEST_REDIS_RESUME=$(eu_sq "$dir/redis-resume")
  export EUNHA_TEST_PG_STOP EUNHA_TEST_PG_START EUNHA_TEST_PG_KILL EUNHA_TEST_REDIS_STOP
  export EUNHA_TEST_REDIS_START EUNHA_TEST_REDIS_PAUSE EUNHA_TEST_REDIS_RESUME
}

# eu_test_golden DIR EUNHA_BIN : migrates a template database once on the
# test PostgreSQL ($EUNHA_TEST_PG_URL) with `eunha migrate`, and exports
# EUNHA_TEST_PG_GOLDEN naming it. The integration harness copies it as each
# server's template, so a server start does not run every tenant migration
# again. Without it (the migrate failed) servers migrate their own.
eu_test_golden() {
  local dir bin url
  dir=$(eu_abspath "${1:?eu_test_golden DIR EUNHA_BIN}")
  bin=${2:?eu_test_golden DIR EUNHA_BIN}
  url=${EUNHA_TEST_PG_URL%/postgres}
  mkdir -p "$dir"
  printf '[database]\nurl = "%s/eunha_golden_ctl"\ntemplate = "eunha_golden"\ncreate_strategy = "file_copy"\n' "$url" \
    >"$dir/golden.toml"
  if "$bin" migrate -c "$dir/golden.toml" >"$dir/golden.log" 2>&1; then
    export EUNHA_TEST_PG_GOLDEN=eunha_golden
  else
    unset EUNHA_TEST_PG_GOLDEN
    eu_log "eunha migrate of the golden template failed (servers will migrate their own):"
    cat "$dir/golden.log" >&2
  fi
}

# eu_test_services_down DIR : stops what eu_test_services_up DIR started.
eu_test_services_down() {
  local dir
  dir=$(eu_abspath "${1:?eu_test_services_down DIR}")
  eu_pg_stop "$dir/pg" || true
  eu_redis_stop "$dir/redis" || true
}

# eu_test_tmp_release DIR : stops DIR's servers and removes DIR, or keeps it
# (and says so) when EUNHA_TEST_KEEP=1. For a script's EXIT trap.
eu_test_tmp_release() {
  eu_test_services_down "$1" || true
  if [ "${EUNHA_TEST_KEEP:-0}" = 1 ]; then
    eu_log "kept $1"
  else
    rm -rf "$1"
  fi
}

# eu_test_ctl FILE LIB FUNCTION ARGS... : writes a script that sources LIB
# (already quoted) and runs FUNCTION ARGS.
eu_test_ctl() {
  local file=$1 lib=$2 fn=$3 arg args=""
  shift 3
  for arg in "$@"; do args="$args $(eu_sq "$arg")"; done
  {
    echo '#!/usr/bin/env bash'
    echo 'set -euo pipefail'
    echo ". $lib"
    echo "$fn$args"
  } >"$file" || return 1
  chmod 755 "$file"
}

# eu_test_tmpdir : prints a new temporary directory the postgres user can
# traverse (mktemp makes it 0700; initdb and postgres run as that user).
eu_test_tmpdir() {
  local tmp
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/eunha-test.XXXXXX") || return 1
  chmod 755 "$tmp"
  if ! eu_pg_user_can_reach "$tmp"; then
    rmdir "$tmp"
    tmp=$(mktemp -d /tmp/eunha-test.XXXXXX) || return 1
    chmod 755 "$tmp"
  fi
  echo "$tmp"
}
