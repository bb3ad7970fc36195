#!/usr/bin/env bash
# Static checks that scripts/test.sh runs before the tests, so CI holds the
# tree to them: cppcheck's warning, performance and portability checks on
# every C file we own, and clang-format (the repository's .clang-format) on
# every tracked .c/.h file, that every header compiles alone, and the
# layering of src/ (the "layers" check, below). Exits non-zero, naming the
# files, when any finds something. `scripts/lint.sh --fix` rewrites the files clang-format
# would change instead of failing on them.
#
# cppcheck reads our headers but not the system's (it would take minutes and
# report on libraries we do not own), except the two whose macros it must
# understand to parse our code: jansson's json_*_foreach and sys/queue.h.
# varFuncNullUB (NULL ending a variadic list) is left out: glibc defines NULL
# as ((void *)0), so the tests' NULL-terminated lists are well defined here.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
# shellcheck source=scripts/lib/services.sh
. "$ROOT/scripts/lib/services.sh"

fix=0
[ "${1:-}" = "--fix" ] && fix=1
# EUNHA_LINT_CHECKS picks the checks ("cppcheck format headers layers", all
# by default): scripts/test.sh runs the quick ones before the build and
# cppcheck beside the suites.
checks=" ${EUNHA_LINT_CHECKS:-cppcheck format headers layers} "

need=()
command -v cppcheck >/dev/null 2>&1 || need+=(cppcheck)
command -v clang-format >/dev/null 2>&1 || need+=(clang-format)
[ "${#need[@]}" -eq 0 ] || eu_apt_install "${need[@]}"

status=0
mapfile -t files < <(git ls-files '*.c' '*.h')

dirs=()
for d in src tools tests fuzz; do [ -d "$d" ] && dirs+=("$d"); done
if [[ $checks == *" cppcheck "* ]]; then
  queue_h=$(find /usr/include -path '*/sys/queue.h' | head -n 1)
  eu_log "cppcheck on ${#files[@]} files"
  if ! cppcheck --enable=warning,performance,portability --inline-suppr --std=c11 \
    -D_GNU_SOURCE -D__GNUC__ -DEUNHA_E2E_DIR='"tests/e2e"' -DEUNHA_FEDIFY_DIR='"tests/fedify"' -DEUNHA_BROWSER_DIR='"tests/browser"' -Iinclude -Isrc --include=/usr/include/jansson.h \
    ${queue_h:+--include="$queue_h"} --quiet --error-exitcode=1 -j "${EUNHA_JOBS:-2}" \
    --suppress=missingIncludeSystem --suppress=varFuncNullUB "${dirs[@]}" 2>&1; then
    eu_log "cppcheck found problems (above)"
    status=1
  fi
fi

# Every header compiles alone (STYLE.md): a file that includes it first
# needs nothing else included before it. The public headers and each
# room's *_internal.h, with the build's include paths and warnings.
if [[ $checks == *" headers "* ]]; then
  mapfile -t headers < <(git ls-files 'include/eunha/*.h' 'src/*_internal.h' 'src/*/*_internal.h')
  eu_log "compiling ${#headers[@]} headers alone"
  hflags=(-std=c11 -D_GNU_SOURCE -Iinclude -Isrc -Wall -Wextra -Wno-unused-parameter -Wshadow
    -Wstrict-prototypes -Wmissing-prototypes -Werror)
  for pkg in libpq hiredis; do
    read -r -a more <<<"$(pkg-config --cflags "$pkg" 2>/dev/null || true)"
    hflags+=("${more[@]}")
  done
  for h in "${headers[@]}"; do
    if ! printf '#include "%s"\n' "${h#*/}" | cc "${hflags[@]}" -I"$(dirname "$h")" \
      -fsyntax-only -x c - 2>"${TMPDIR:-/tmp}/eunha-header.$$"; then
      cat "${TMPDIR:-/tmp}/eunha-header.$$" >&2
      eu_log "$h does not compile alone"
      status=1
    fi
  done
  rm -f "${TMPDIR:-/tmp}/eunha-header.$$"
fi

# layers: a room of src/ may include the public headers (include/eunha/) of
# its own rank and lower ones, never a higher one's (docs/ARCHITECTURE.md,
# "Layers"). Same-rank rooms may use each other (queue/ and media/; http/ and
# outbound/; db/, redis/, tenant/). There is no exception list: a lower room
# reaches up only through a callback or table that the wiring (app/) hands
# it, declared in the lower room's own header.
# The ranks, low to high:
declare -A rank=(
  [core]=0                          # config, log, arena, allocation, CPU pool
  [db]=1 [redis]=1 [tenant]=1       # storage and the tenant registry
  [http]=2                          # the request layer every handler stands on:
                                    # server, router, auth, query, pages, JSON out,
                                    # the streaming hub
  [outbound]=2                      # HTTP the other way: the one outbound client,
                                    # for federation and the S3 store alike
  [queue]=3 [media]=3               # durable jobs and timed tasks; uploads
  [social]=4                        # the core both protocols share
  [ap]=5                            # ActivityPub
  [api]=6                           # Mastodon REST: a post delivers through ap/, so
                                    # api/ stands on ap/, never the other way
  [admin]=7                         # the operator's API, over both protocols
  [app]=8                           # the wiring: the app, lists of tables
)
# Owner of each public header: one line a header, "header room".
owners='
admin admin
ap ap
apdeliver ap
api api
apinbox ap
apingest ap
apkeys ap
app core
approcess ap
apresolve ap
cards social
arena core
bheap core
auth http
config core
cpupool core
db db
dblisten db
domainblock social
entities social
error core
feeds social
audience social
fetch outbound
filters social
http http
httpsig ap
isotime core
jsonout http
log core
mail outbound
mailer social
media media
mediaapi media
mediaclean media
mediaemoji media
mediastore media
mem core
migrate db
net core
notify social
page http
params api
polls social
push social
queue queue
ratelimit http
redis redis
router http
routes app
sanitize ap
secrets core
serve app
sql db
statuses social
stream social
streaming http
tenant tenant
text social
toml core
trends social
utf8 core
webpush outbound
'
if [[ $checks == *" layers "* ]]; then
  declare -A owner=()
  while read -r h r; do [ -n "$h" ] && owner[$h]=$r; done <<<"$owners"
  bad=0
  for h in include/eunha/*.h; do
    h=${h#include/eunha/}
    h=${h%.h}
    if [ -z "${owner[$h]:-}" ]; then
      echo "  include/eunha/$h.h: no owning room in scripts/lint.sh's table" >&2
      bad=1
    fi
  done
  while IFS= read -r f; do
    room=${f#src/}
    room=${room%%/*}
    r=${rank[$room]:-}
    if [ -z "$r" ]; then
      echo "  $f: room '$room' has no rank in scripts/lint.sh" >&2
      bad=1
      continue
    fi
    while IFS= read -r h; do
      o=${owner[$h]:-}
      [ -n "$o" ] || continue
      if [ "${rank[$o]}" -gt "$r" ]; then
        echo "  $f includes eunha/$h.h, owned by the higher room $o/" >&2
        bad=1
      fi
    done < <(sed -n 's|^#include "eunha/\([a-z0-9_]*\)\.h".*|\1|p' "$f")
    # A room's private headers (*_internal.h) are its own.
    while IFS= read -r p; do
      if [ "${p%%/*}" != "$room" ]; then
        echo "  $f includes $p, private to src/${p%%/*}/" >&2
        bad=1
      fi
    done < <(sed -n 's|^#include "\([a-z]*/[a-z0-9_]*_internal\.h\)".*|\1|p' "$f")
  done < <(git ls-files 'src/*/*.c' 'src/*/*.h')
  if [ "$bad" -ne 0 ]; then
    eu_log "a lower room includes a higher one's header (above); see docs/ARCHITECTURE.md"
    status=1
  fi
fi

unformatted=()
[[ $checks == *" format "* ]] || files=()
# One clang-format for every file; only when it objects, one per file to
# name them (264 process starts take minutes on a loaded 2-core machine).
if [ "${#files[@]}" -gt 0 ] && ! clang-format --dry-run --Werror "${files[@]}" >/dev/null 2>&1; then
  for f in "${files[@]}"; do
    if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
      unformatted+=("$f")
    fi
  done
fi
if [ "${#unformatted[@]}" -gt 0 ]; then
  if [ "$fix" -eq 1 ]; then
    clang-format -i "${unformatted[@]}"
    eu_log "reformatted ${#unformatted[@]} files"
  else
    printf '  %s\n' "${unformatted[@]}" >&2
    eu_log "${#unformatted[@]} files differ from .clang-format; run scripts/lint.sh --fix"
    status=1
  fi
fi
exit "$status"
