#!/usr/bin/env bash
# What an upload costs: upload-to-ready time and eunha CPU for a
# 12-megapixel JPEG (4000x3000, quality 90, a gradient with noise: about
# what a phone writes) through the API, on a Release build with its own
# PostgreSQL and Redis on loopback.
#
#   1. v1: POST /api/v1/media, processed while the client waits (the answer
#      is the ready attachment): time is the request's.
#   2. v2: POST /api/v2/media with [media] process_inline_bytes = 0, so every
#      image goes through the media_process job: 202, then GET
#      /api/v1/media/:id every 20 ms until 200; time is from the POST to
#      that 200.
#
# RUNS (default 5) uploads each. CPU is eunha's (utime + stime over all its
# threads, the CPU pool's decode, re-encode, WebP preview and blurhash
# included) over the uploads, divided by them.
#
# Builds into build-bench/ (BENCH_BUILD=DIR; BENCH_SKIP_BUILD=1 to reuse).
# Raw output: benchmark-results/media-DATE/ (git-ignored).
set -euo pipefail

RUNS=${EUNHA_BENCH_MEDIA_RUNS:-5}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/lib/services.sh
. "$ROOT/scripts/lib/services.sh"
# shellcheck source=scripts/lib/bench.sh
. "$ROOT/scripts/lib/bench.sh"

bench_require_cmd jq jq
bench_build eunha eunha-imgbench
RESULTS=$(bench_results_dir media)
TMP=$(bench_make_tmp eunha-bench-media)
PG_PORT=$(eu_free_port)
REDIS_PORT=$(eu_free_port "$PG_PORT")
DB=eunha_bench_media
bench_trap_cleanup

# The photo tools/imgbench times on its own, so the two figures share an input.
PHOTO=$TMP/photo.jpg
"$BENCH_BUILD/eunha-imgbench" --write "$PHOTO"
PHOTO_BYTES=$(stat -c %s "$PHOTO")

eu_pg_start "$TMP/pg" "$PG_PORT" >/dev/null
eu_redis_start "$TMP/redis" "$REDIS_PORT" >/dev/null
bench_admin_token
CONTROL_URL="postgresql://postgres@127.0.0.1:$PG_PORT/$DB"

{
  bench_base_toml "$CONTROL_URL" "$DB" "$REDIS_PORT" "eunha-bench-media-$$"
  cat <<EOF
[media]
root = "$TMP/media"
process_inline_bytes = 0
EOF
} >"$RESULTS/eunha.toml"
: >"$TMP/eunha.log"
bench_eunha_start "$RESULTS/eunha.toml" "$TMP"
DOMAIN=media.example
bench_admin POST /admin/v1/tenants "{\"domain\":\"$DOMAIN\",\"title\":\"Media\"}" >/dev/null
bench_seed_tenant "$DOMAIN" 1 "$TMP/tokens"
TOKEN=$(awk 'NR == 1 { print $2 }' "$TMP/tokens")
PUB="http://127.0.0.1:$BENCH_PUBLIC_PORT"
HZ=$(getconf CLK_TCK)

now_ms() { date +%s%3N; }

# upload VERSION : prints "STATUS ID"
upload() {
  curl -sS --max-time 120 -o "$TMP/up.json" -w '%{http_code}' -H "Host: $DOMAIN" \
    -H "Authorization: Bearer $TOKEN" -H 'Expect:' -F "file=@$PHOTO;type=image/jpeg" \
    "$PUB/api/$1/media" >"$TMP/up.code"
  echo "$(cat "$TMP/up.code") $(jq -r .id "$TMP/up.json")"
}

# run_phase VERSION : RUNS uploads, one JSON line.
run_phase() {
  local v=$1 i st id t0 t1 code cpu0 cpu1 ms=()
  cpu0=$(bench_cpu_ticks "$EUNHA_PID")
  for ((i = 0; i < RUNS; i++)); do
    t0=$(now_ms)
    read -r st id < <(upload "$v")
    if [ "$st" = 202 ]; then
      for ((j = 0; j < 3000; j++)); do
        code=$(curl -sS -o /dev/null -w '%{http_code}' -H "Host: $DOMAIN" \
          -H "Authorization: Bearer $TOKEN" "$PUB/api/v1/media/$id")
        [ "$code" = 206 ] || break
        sleep 0.02
      done
      st=$code
    fi
    t1=$(now_ms)
    [ "$st" = 200 ] || eu_die "upload $v ended with $st: $(cat "$TMP/up.json")"
    ms+=($((t1 - t0)))
  done
  cpu1=$(bench_cpu_ticks "$EUNHA_PID")
  printf '%s\n' "${ms[@]}" | jq -s --arg v "$v" --argjson runs "$RUNS" \
    --argjson bytes "$PHOTO_BYTES" --argjson cpu_ms "$(((cpu1 - cpu0) * 1000 / HZ))" \
    '{api: $v, runs: $runs, photo: "4000x3000 JPEG", photo_bytes: $bytes,
      upload_to_ready_ms: {min: min, median: (sort | .[length / 2 | floor]), max: max},
      eunha_cpu_ms_per_upload: ($cpu_ms / $runs | floor)}'
}

run_phase v1 | tee "$RESULTS/v1.json"
run_phase v2 | tee "$RESULTS/v2.json"

bench_machine_summary | tee "$RESULTS/machine.md"
