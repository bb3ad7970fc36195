#!/usr/bin/env bash
# Soak: does eunha's memory stay flat under hours-like load? One process
# serves EUNHA_SOAK_TENANTS tenants (a few users each, following each other,
# with some statuses) while eunha-loadgen sends a mixed open-loop load spread
# over every tenant's tokens for EUNHA_SOAK_SECONDS. A sampler reads eunha's
# RSS, private memory, Private_Dirty, open descriptors, threads and the
# render cache's size every EUNHA_SOAK_SAMPLE_SECONDS into samples.csv. At
# the end it prints the curve (one row a minute), the load generator's
# summary and a verdict: memory at the end of the warm-up against the end of
# the load, in KiB and %, and the least-squares slope after the warm-up.
#
# It builds Release binaries into build-bench/ (BENCH_BUILD=DIR for another
# directory), brings up its own PostgreSQL cluster and Redis server on free
# 127.0.0.1 ports and removes them on exit, Ctrl-C included. Raw output goes
# to benchmark-results/soak-DATE/ (git-ignored); the summary is appended to
# benchmark-results/README.md unless EUNHA_SOAK_NO_README=1.
#
# Why these choices:
# - Open loop at a fixed rate, not closed loop: a leak is judged against
#   work done, so every minute must carry the same work; a closed loop on a
#   shared machine would do less work while neighbours compile.
# - The verdict reads Private_Dirty, the heap and other written pages, and
#   reports private memory (Private_Clean + Private_Dirty) and RSS beside
#   it: RSS moves with how much of the shared binary and libraries happens
#   to be paged in, and Private_Clean with which other processes map the
#   same libraries (see the verdict below).
# - The first minutes are excluded: caches (render cache, token cache,
#   prepared statements on each placement connection, malloc's arenas) fill
#   then and are meant to. Growth after they are full is what a leak looks
#   like; EUNHA_SOAK_WARMUP_SECONDS says where that starts.
# - Both the end-point difference and the slope are reported: one sample can
#   land on a burst of in-flight requests, a slope over ~100 samples does not.
# - The load keeps posting, so PostgreSQL and Redis grow by design (more
#   rows, longer timelines); only eunha's own memory is judged.
#
# Knobs (environment):
#   EUNHA_SOAK_SECONDS=1200         seconds of load
#   EUNHA_SOAK_RATE=300             open-loop requests/s over all tenants
#   EUNHA_SOAK_SAMPLE_SECONDS=10    sampling interval
#   EUNHA_SOAK_WARMUP_SECONDS=180   where the verdict's baseline is taken
#   EUNHA_SOAK_COOLDOWN_SECONDS=30  samples kept after the load stops (idle tail)
#   EUNHA_SOAK_TENANTS=100          tenants
#   EUNHA_SOAK_USERS=3              users per tenant, all following each other
#   EUNHA_SOAK_STATUSES=10          statuses seeded per tenant
#   EUNHA_SOAK_MIX=...              loadgen --mix (default below: reads and 10% posts)
#   EUNHA_SOAK_CONNECTIONS=64       most loadgen connections
#   EUNHA_SOAK_TOLERANCE_PERCENT=2  heap growth after warm-up still called flat
#   EUNHA_SOAK_NO_README=1          do not append to benchmark-results/README.md
#   BENCH_BUILD, BENCH_SKIP_BUILD   as for the other benchmarks (scripts/lib/bench.sh)
set -euo pipefail

# The whole script is one block, so bash reads it all before running any of
# it: a run lasts twenty minutes, and bash reads a plain script as it goes,
# so editing the file meanwhile would run a mix of old and new lines.
{

SOAK_SECONDS=${EUNHA_SOAK_SECONDS:-1200}
RATE=${EUNHA_SOAK_RATE:-300}
SAMPLE=${EUNHA_SOAK_SAMPLE_SECONDS:-10}
WARMUP=${EUNHA_SOAK_WARMUP_SECONDS:-180}
COOLDOWN=${EUNHA_SOAK_COOLDOWN_SECONDS:-30}
TENANTS=${EUNHA_SOAK_TENANTS:-100}
USERS=${EUNHA_SOAK_USERS:-3}
STATUSES=${EUNHA_SOAK_STATUSES:-10}
# The loadgen has no favourite kind; posting is the write it can do.
MIX=${EUNHA_SOAK_MIX:-home=25,public=15,notifications=20,verify=10,account=20,status=10}
CONNECTIONS=${EUNHA_SOAK_CONNECTIONS:-64}
TOLERANCE=${EUNHA_SOAK_TOLERANCE_PERCENT:-2}
NO_README=${EUNHA_SOAK_NO_README:-0}
# The hosting profile the density benchmark uses, so the two read alike.
PLACEMENT_CONNECTIONS=4
POOL=2
IDLE_TIMEOUT=20
QUEUE_POLL=300
CPU_THREADS=2

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/lib/services.sh
. "$ROOT/scripts/lib/services.sh"
# shellcheck source=scripts/lib/bench.sh
. "$ROOT/scripts/lib/bench.sh"

is_uint() { case $1 in '' | *[!0-9]*) return 1 ;; esac }
for v in SOAK_SECONDS RATE SAMPLE WARMUP COOLDOWN TENANTS USERS STATUSES CONNECTIONS TOLERANCE; do
  is_uint "${!v}" || {
    eu_die "EUNHA_SOAK_$v must be a whole number, not '${!v}'"
    exit 2
  }
done
if [ "$SAMPLE" -lt 1 ] || [ "$TENANTS" -lt 1 ] || [ "$USERS" -lt 1 ] || [ "$RATE" -lt 1 ]; then
  eu_die "EUNHA_SOAK_SAMPLE_SECONDS, _TENANTS, _USERS and _RATE must be at least 1"
  exit 2
fi
if [ "$WARMUP" -ge "$SOAK_SECONDS" ]; then
  # A short trial run still gets a verdict, from a third of the way in.
  WARMUP=$((SOAK_SECONDS / 3))
  eu_log "warm-up is not shorter than the run; taking the baseline at ${WARMUP}s"
fi

eu_install_deps
bench_require_cmd jq jq
bench_build
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

RESULTS=$(bench_results_dir soak)
TMP=$(bench_make_tmp eunha-soak)
PG_PORT=$(eu_free_port)
REDIS_PORT=$(eu_free_port "$PG_PORT")
DB=eunha_soak
SAMPLER_PID=
CSV=$RESULTS/samples.csv

# shellcheck disable=SC2317 # invoked through traps
bench_cleanup_hook() {
  if [ -n "$SAMPLER_PID" ]; then
    kill "$SAMPLER_PID" 2>/dev/null || true
    wait "$SAMPLER_PID" 2>/dev/null || true
  fi
}
bench_trap_cleanup

eu_pg_start "$TMP/pg" "$PG_PORT" >/dev/null
eu_redis_start "$TMP/redis" "$REDIS_PORT" >/dev/null

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
min_connections = 0
acquire_timeout_seconds = 5
idle_timeout_seconds = $IDLE_TIMEOUT

[workers]
queue_idle_poll_seconds = $QUEUE_POLL

[redis]
url = "redis://127.0.0.1:$REDIS_PORT/0"
prefix = "eunha-soak-$$"

[limits]
# Mastodon's per-token limit (300 requests in 5 minutes) would turn the load
# into 429s, which cost eunha almost nothing and so would hide a leak on the
# paths that do work.
api_requests_per_5min = 0
registrations_per_30min = 0

[log]
level = "warn"
EOF

bench_eunha_start "$RESULTS/eunha.toml" "$TMP"
sleep 2
read -r START_RSS START_PRIV < <(bench_mem_kib "$EUNHA_PID")
eu_log "eunha started: private $(bench_mib "$START_PRIV"), RSS $(bench_mib "$START_RSS")"

DOMAINS=$RESULTS/domains
TOKENS=$RESULTS/tokens
awk -v n="$TENANTS" 'BEGIN { for (i = 1; i <= n; i++) printf "t%d.soak.test\n", i }' >"$DOMAINS"
: >"$TOKENS"
chmod 600 "$TOKENS"
eu_log "creating $TENANTS tenants"
"$LOADGEN_BIN" -p "$BENCH_ADMIN_PORT" --hosts "$DOMAINS" -m tenant -n "$TENANTS" -c 8 -t 60 \
  --admin-token-file "$TMP/admin_token" -q --json "$RESULTS/create.json"
if [ "$(jq -r .errors "$RESULTS/create.json")" != 0 ]; then
  eu_die "creating tenants failed: $(jq -c '.errors_by_kind, .status' "$RESULTS/create.json")"
  exit 1
fi
T=$SECONDS
eu_log "seeding $USERS users per tenant"
bench_seed_tenants "$DOMAINS" "$USERS" "$TOKENS" 4 "$RESULTS"
eu_log "seeded users in $((SECONDS - T))s; posting $((TENANTS * STATUSES)) statuses"
bench_seed_statuses "$TOKENS" $((TENANTS * STATUSES)) "$RESULTS"
eu_log "seeded in $((SECONDS - T))s"
read -r _ SEEDED_PRIV < <(bench_mem_kib "$EUNHA_PID")

# mem_dirty_kib PID : Private_Dirty in KiB. Private_Clean is mostly library
# text, and a library page counts as private only while no other process maps
# it: on a shared machine it moves by a MiB as other programs start and stop,
# with eunha doing nothing. Private_Dirty (heap, stacks, written data) is
# what a leak grows.
mem_dirty_kib() {
  awk '$1 == "Private_Dirty:" { print $2; exit }' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0
}

# render_cache_entries : the gauge from /metrics; the render cache filling up
# to its bound is the warm-up this run has to wait out.
render_cache_entries() {
  curl -sS --max-time 5 -H "Authorization: Bearer $BENCH_ADMIN_TOKEN" \
    "http://127.0.0.1:$BENCH_ADMIN_PORT/metrics" 2>/dev/null |
    awk '$1 == "eunha_render_cache_entries" { print $2; found = 1 } END { if (!found) print "" }'
}

# sample_loop T0 : appends one CSV row every SAMPLE seconds, timed against
# T0 rather than by sleeping SAMPLE after each read, so rows stay on the grid
# however long a read takes on a busy machine. The phase column says whether
# the load generator was still running (it writes $RESULTS/load.done last).
sample_loop() {
  local t0=$1 k=0 now target rss priv dirty rc fds threads ticks phase
  local -a fd
  while :; do
    target=$((t0 + k * SAMPLE * 1000000))
    now=${EPOCHREALTIME/./}
    if [ "$now" -lt "$target" ]; then
      sleep "$(awk -v d=$((target - now)) 'BEGIN { printf "%.3f", d / 1e6 }')"
    fi
    [ -r "/proc/$EUNHA_PID/smaps_rollup" ] || break
    read -r rss priv < <(bench_mem_kib "$EUNHA_PID")
    dirty=$(mem_dirty_kib "$EUNHA_PID")
    rc=$(render_cache_entries)
    fd=("/proc/$EUNHA_PID/fd/"*)
    fds=${#fd[@]}
    threads=$(bench_threads "$EUNHA_PID")
    ticks=$(bench_cpu_ticks "$EUNHA_PID")
    phase=load
    [ -e "$RESULTS/load.done" ] && phase=cooldown
    # Whole smaps at the baseline (and, from the main script, at the end), so
    # growth can be pinned on a mapping: the brk heap, a malloc arena, a
    # library's pages.
    if [ $((k * SAMPLE)) -ge "$WARMUP" ] && [ ! -e "$RESULTS/smaps-baseline" ]; then
      cat "/proc/$EUNHA_PID/smaps" >"$RESULTS/smaps-baseline" 2>/dev/null || true
    fi
    printf '%d,%s,%s,%s,%s,%s,%s,%s,%s,%s\n' $((k * SAMPLE)) "$(date -u +%H:%M:%S)" "$rss" "$priv" \
      "$fds" "$threads" "$ticks" "$phase" "$dirty" "$rc" >>"$CSV"
    k=$((k + 1))
  done
}

# New columns go at the end, so a reader of older files finds the first
# eight where they were.
echo "t_s,utc,rss_kib,private_kib,fds,threads,cpu_ticks,phase,private_dirty_kib,render_cache_entries" >"$CSV"
rm -f "$RESULTS/load.done"
LOAD_START_UTC=$(date -u +%H:%M)
T0=${EPOCHREALTIME/./}
sample_loop "$T0" &
SAMPLER_PID=$!
eu_log "soak: $RATE req/s over $TENANTS tenants for ${SOAK_SECONDS}s, sampling every ${SAMPLE}s into $CSV"
"$LOADGEN_BIN" -p "$BENCH_PUBLIC_PORT" --tokens "$TOKENS" -m "$MIX" -r "$RATE" -c "$CONNECTIONS" \
  -d "$SOAK_SECONDS" --label "soak: $TENANTS tenants at $RATE req/s" --json "$RESULTS/load.json" |
  tee "$RESULTS/load.txt"
cat "/proc/$EUNHA_PID/smaps" >"$RESULTS/smaps-end" 2>/dev/null || true
touch "$RESULTS/load.done"
sleep "$COOLDOWN"
# One more sample past the cooldown's last grid point, so the idle tail is
# never empty, then stop the sampler before eunha.
sleep "$SAMPLE"
kill "$SAMPLER_PID" 2>/dev/null || true
wait "$SAMPLER_PID" 2>/dev/null || true
SAMPLER_PID=
read -r PG_PRIV PG_SHM < <(bench_pg_mem_kib "$TMP/pg")
REDIS_MEM=$(redis-cli -p "$REDIS_PORT" info memory 2>/dev/null | sed -n 's/^used_memory_human:\(.*\)\r$/\1/p')
bench_eunha_stop

# ---- analysis ----------------------------------------------------------------
# series COL : over the load samples from the warm-up on, "T0 V0 T1 V1 SLOPE
# MIN MAX": the first (baseline) and last (end) sample of column COL, the
# least-squares slope in KiB a minute, and the range.
series() {
  awk -F, -v w="$WARMUP" -v c="$1" '
    NR == 1 || $8 != "load" || $1 < w { next }
    { if (!n) { bt = $1; bv = $c; mn = $c; mx = $c }
      et = $1; ev = $c
      if ($c > mx) mx = $c
      if ($c < mn) mn = $c
      n++; sx += $1; sy += $c; sxx += $1 * $1; sxy += $1 * $c }
    END {
      d = n * sxx - sx * sx
      printf "%d %d %d %d %.1f %d %d\n", bt, bv, et, ev, (n > 1 && d != 0) ? (n * sxy - sx * sy) / d * 60 : 0, mn, mx
    }' "$CSV"
}
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f\n", b ? 100 * (a - b) / b : 0 }'; }
read -r B_T B_PRIV E_T E_PRIV SLOPE MINP MAXP < <(series 4)
read -r _ B_RSS _ E_RSS _ _ _ < <(series 3)
read -r _ B_DIRTY _ E_DIRTY DSLOPE MIND MAXD < <(series 9)
read -r _ FD_B _ FD_E _ MINFD MAXFD < <(series 5)
GROWTH=$((E_PRIV - B_PRIV))
GROWTH_PCT=$(pct "$E_PRIV" "$B_PRIV")
RSS_GROWTH=$((E_RSS - B_RSS))
RSS_GROWTH_PCT=$(pct "$E_RSS" "$B_RSS")
DGROWTH=$((E_DIRTY - B_DIRTY))
DGROWTH_PCT=$(pct "$E_DIRTY" "$B_DIRTY")
read -r LAST_PRIV < <(awk -F, 'NR > 1 { p = $4 } END { print p }' "$CSV")
RC_END=$(awk -F, 'NR > 1 && $8 == "load" { v = $10 } END { print v }' "$CSV")
# The verdict judges Private_Dirty, not the private total: in the first
# 20-minute run the total rose 6.5% after warm-up with RSS and the heap flat,
# all of it library pages other processes had stopped mapping. And a heap
# that still grows a little just after the warm-up but not at all in the
# second half has settled, where a leak grows all the way: the second half
# is judged on its own before anything is called growth.
H_T=$(((B_T + E_T) / 2))
read -r H_T H_DIRTY < <(awk -F, -v h="$H_T" 'NR > 1 && $8 == "load" && $1 >= h { print $1, $9; exit }' "$CSV") || true
H_GROWTH=$((E_DIRTY - ${H_DIRTY:-$E_DIRTY}))
H_GROWTH_PCT=$(pct "$E_DIRTY" "${H_DIRTY:-$E_DIRTY}")
within() { awk -v p="$1" -v t="$TOLERANCE" 'BEGIN { exit !(p <= t) }'; }
WHAT="Private_Dirty (the heap) moved $DGROWTH KiB ($DGROWTH_PCT%) from ${B_T}s to ${E_T}s"
if within "$DGROWTH_PCT"; then
  VERDICT="flat: $WHAT, within the ${TOLERANCE}% tolerance"
elif [ $((E_T - H_T)) -ge $((2 * SAMPLE)) ] && within "$H_GROWTH_PCT"; then
  # (Three samples at least: a "second half" of one sample says nothing.)
  VERDICT="settled: $WHAT, but only $H_GROWTH KiB ($H_GROWTH_PCT%) from ${H_T}s on; a leak would grow there too"
else
  VERDICT="GROWS: $WHAT, more than the ${TOLERANCE}% tolerance, and $H_GROWTH KiB ($H_GROWTH_PCT%) from ${H_T}s on"
fi

# One row a minute (the first sample of each minute), plus the warm-up
# baseline, the last load sample, the first idle one and the very last.
minute_rows() {
  awk -F, -v b="$B_PRIV" -v bt="$B_T" -v et="$E_T" -v s="$SAMPLE" '
    NR > 1 { row[++n] = $0 }
    END {
      for (i = 1; i <= n; i++) {
        split(row[i], f, ","); split(i > 1 ? row[i - 1] : "", p, ",")
        if (f[1] % 60 < s || f[1] == bt || f[1] == et || i == n || (f[8] == "cooldown" && p[8] == "load"))
          printf "| %d:%02d | %s | %s | %.2f MiB | %.2f MiB | %+d KiB | %.2f MiB | %d | %d | %s |\n", int(f[1] / 60),
            f[1] % 60, f[2], f[8], f[3] / 1024, f[4] / 1024, f[4] - b, f[9] / 1024, f[5], f[6], f[10]
      }
    }' "$CSV"
}

J=$RESULTS/load.json
ms2() { jq -r "$1 * 100 | round / 100" "$J"; }
ERRS_BY=$(jq -r '.errors_by_kind | to_entries | map("\(.key) \(.value)") | join(", ")' "$J")
[ -n "$ERRS_BY" ] || ERRS_BY=none
KINDS=$(jq -r '.kinds | to_entries | map("\(.key) \(.value.sent) (p50 \(.value.latency_ms.p50 * 100 | round / 100) ms, p99 \(.value.latency_ms.p99 * 100 | round / 100) ms, \(.value.errors) errors)") | join("; ")' "$J")
TCK=$(bench_clk_tck)
CPU_PCT=$(awk -F, -v tck="$TCK" 'NR == 1 || $8 != "load" { next }
  !n++ { t0 = $1; c0 = $7 } { t1 = $1; c1 = $7 }
  END { printf "%.1f", (t1 > t0) ? 100 * (c1 - c0) / tck / (t1 - t0) : 0 }' "$CSV")

{
  echo
  echo "### Soak, $(date -u +%Y-%m-%d) (load from $LOAD_START_UTC UTC)"
  echo
  bench_machine_summary
  echo "- $TENANTS tenants, $USERS users each following each other, $STATUSES statuses each seeded before the load. Hosting profile: pooled placement with placement_connections $PLACEMENT_CONNECTIONS, tenant pool $POOL, idle timeout ${IDLE_TIMEOUT} s, queue poll ${QUEUE_POLL} s, cpu_threads $CPU_THREADS, rate limiter off."
  echo "- Load: open loop at $RATE req/s for $SOAK_SECONDS s over all ${TENANTS} tenants' tokens, at most $CONNECTIONS connections, mix \`$MIX\`. Sampled every $SAMPLE s; warm-up baseline at ${WARMUP} s; ${COOLDOWN} s of idle samples after the load."
  echo "- The machine has $(nproc) cores and was shared with other engineers compiling and running tests during the run, so latency (and CPU) figures are noisy; memory is the point of this run."
  echo "- Raw output: benchmark-results/$(basename "$RESULTS")/ (samples.csv has every sample)"
  echo
  echo "**Verdict:** $VERDICT. Its slope after warm-up: $DSLOPE KiB/min, range $(bench_mib "$MIND") to $(bench_mib "$MAXD"). Private memory (Private_Clean + Private_Dirty) moved $GROWTH KiB ($GROWTH_PCT%) over the same span, slope $SLOPE KiB/min, range $(bench_mib "$MINP") to $(bench_mib "$MAXP"); Private_Clean is library pages, which count as private only while no other process maps them, so on a shared machine it moves with the neighbours. RSS moved $RSS_GROWTH KiB ($RSS_GROWTH_PCT%). Open descriptors after warm-up ranged $MINFD to $MAXFD ($FD_B at ${B_T} s, $FD_E at the end). Render cache: ${RC_END:-?} entries at the end of the load."
  echo
  echo "eunha private memory: $(bench_mib "$START_PRIV") started with no tenants, $(bench_mib "$SEEDED_PRIV") after seeding, $(bench_mib "$B_PRIV") at the warm-up baseline, $(bench_mib "$E_PRIV") at the end of the load, $(bench_mib "$LAST_PRIV") after ${COOLDOWN} s idle."
  echo
  echo "| Time | UTC | Phase | RSS | Private | Private vs baseline | Private dirty | FDs | Threads | Render cache |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  minute_rows
  echo
  echo "Load generator: $(jq -r .requests "$J") requests, $(bench_fmt_num "$(jq -r .requests_per_second "$J")" 1) req/s achieved of $RATE offered; p50 $(ms2 .latency_ms.p50) ms, p95 $(ms2 .latency_ms.p95) ms, p99 $(ms2 .latency_ms.p99) ms, max $(ms2 .latency_ms.max) ms; $(jq -r .errors "$J") errors ($ERRS_BY); unsent $(jq -r .unsent "$J"). eunha CPU $CPU_PCT% of one core on average; loadgen CPU $(jq -r '.loadgen.cpu_percent * 10 | round / 10' "$J")%."
  echo
  echo "By kind: $KINDS."
  echo
  echo "At the end: PostgreSQL private $(bench_mib "$PG_PRIV") + shared once $(bench_mib "$PG_SHM"); Redis used_memory ${REDIS_MEM:-?} (both grow with the posts by design)."
} >"$RESULTS/table.md"
cat "$RESULTS/table.md"
if [ "$NO_README" != 1 ]; then
  cat "$RESULTS/table.md" >>"$ROOT/benchmark-results/README.md"
  eu_log "appended to benchmark-results/README.md"
fi
exit
}
