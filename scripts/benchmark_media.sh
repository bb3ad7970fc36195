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
bench_build eunha
RESULTS=$(bench_results_dir media)
TMP=$(bench_make_tmp eunha-bench-media)
PG_PORT=$(eu_free_port)
REDIS_PORT=$(eu_free_port "$PG_PORT")
DB=eunha_bench_media
bench_trap_cleanup

# The photo, made with libjpeg (which eunha links anyway).
cat >"$TMP/mkjpeg.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <jpeglib.h>
int main(int argc, char **argv) {
    int w = 4000, h = 3000;
    FILE *f = fopen(argv[1], "wb");
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    unsigned char *row = malloc((size_t)w * 3);
    unsigned seed = 1;
    c.err = jpeg_std_error(&e);
    jpeg_create_compress(&c);
    jpeg_stdio_dest(&c, f);
    c.image_width = w; c.image_height = h; c.input_components = 3; c.in_color_space = JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 90, TRUE);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < (unsigned)h) {
        int y = (int)c.next_scanline;
        for (int x = 0; x < w; x++) {
            int n = (int)(rand_r(&seed) % 24) - 12;
            int v[3] = {x * 255 / w + n, y * 255 / h + n, (x + y) * 255 / (w + h) + n};
            for (int k = 0; k < 3; k++)
                row[3 * x + k] = (unsigned char)(v[k] < 0 ? 0 : v[k] > 255 ? 255 : v[k]);
        }
        JSAMPROW r[1] = {row};
        jpeg_write_scanlines(&c, r, 1);
    }
    jpeg_finish_compress(&c);
    fclose(f);
    (void)argc;
    return 0;
}
EOF
cc -O2 -o "$TMP/mkjpeg" "$TMP/mkjpeg.c" -ljpeg
PHOTO=$TMP/photo.jpg
"$TMP/mkjpeg" "$PHOTO"
PHOTO_BYTES=$(stat -c %s "$PHOTO")

eu_pg_start "$TMP/pg" "$PG_PORT" >/dev/null
eu_redis_start "$TMP/redis" "$REDIS_PORT" >/dev/null
bench_admin_token
CONTROL_URL="postgresql://postgres@127.0.0.1:$PG_PORT/$DB"

cat >"$RESULTS/eunha.toml" <<EOF
[server]
listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
scheme = "http"
cpu_threads = 2

[admin]
token_file = "$TMP/admin_token"

[database]
url = "$CONTROL_URL"
template = "${DB}_template"

[redis]
url = "redis://127.0.0.1:$REDIS_PORT/0"
prefix = "eunha-bench-media-$$"

[limits]
api_requests_per_5min = 0

[log]
level = "warn"

[media]
root = "$TMP/media"
process_inline_bytes = 0
EOF
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
