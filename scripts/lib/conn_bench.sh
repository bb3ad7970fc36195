# shellcheck shell=bash
# What scripts/benchmark_idle_connections.sh and scripts/benchmark_streaming.sh
# share: thousands of connections on one Release eunha, from a Python client
# (scripts/lib/conn_bench.py has its shared part). Source it after
# scripts/lib/services.sh and scripts/lib/bench.sh; do not run it.
#
#   conn_bench_prepare [LIMIT]     raise this shell's (so eunha's and the
#                                  client's) open-file limit to LIMIT (empty:
#                                  the hard limit), sets NOFILE; needs python3
#   conn_bench_start NAME [LIMIT]  build; PostgreSQL and Redis on free ports;
#                                  one eunha whose idle timeout outlives the
#                                  measurement, LIMIT (a line such as
#                                  "max_connections = 10") in its [limits];
#                                  sets RESULTS (benchmark-results/NAME-DATE),
#                                  TMP (removed on exit) and what
#                                  bench_eunha_start sets
#   conn_bench_machine_summary     bench_machine_summary and the open-file
#                                  limit, into $RESULTS/machine.md and stdout

conn_bench_prepare() {
  local hard
  hard=$(ulimit -Hn)
  [ "$hard" = unlimited ] && hard=32768
  NOFILE=${1:-$hard}
  ulimit -n "$NOFILE" || eu_die "cannot raise the open-file limit to $NOFILE (ulimit -Hn: $(ulimit -Hn))"
  command -v python3 >/dev/null || eu_die "python3 is needed for the client"
}

conn_bench_start() {
  local name=$1 limits="" pg_port redis_port db=eunha_bench_$1
  [ -z "${2:-}" ] || limits=$2$'\n'
  bench_build eunha
  RESULTS=$(bench_results_dir "$name")
  TMP=$(bench_make_tmp "eunha-bench-$name")
  pg_port=$(eu_free_port)
  redis_port=$(eu_free_port "$pg_port")

  bench_trap_cleanup

  eu_pg_start "$TMP/pg" "$pg_port" >/dev/null
  eu_redis_start "$TMP/redis" "$redis_port" >/dev/null
  bench_admin_token

  cat >"$RESULTS/eunha.toml" <<CONF
[server]
listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
scheme = "http"

[admin]
token_file = "$TMP/admin_token"

[database]
url = "postgresql://postgres@127.0.0.1:$pg_port/$db"
template = "${db}_template"

[redis]
url = "redis://127.0.0.1:$redis_port/0"
prefix = "eunha-bench-$name-$$"

[limits]
${limits}max_connections_per_ip = 256
request_timeout_seconds = 600
api_requests_per_5min = 0

[log]
level = "warn"
CONF
  : >"$TMP/eunha.log"
  bench_eunha_start "$RESULTS/eunha.toml" "$TMP"
}

conn_bench_machine_summary() {
  {
    bench_machine_summary
    printf -- '- Open-file limit: %s\n' "$NOFILE"
  } | tee "$RESULTS/machine.md"
}
