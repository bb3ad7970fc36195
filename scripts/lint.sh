#!/usr/bin/env bash
# Static checks that scripts/test.sh runs before the tests, so CI holds the
# tree to them: cppcheck's warning, performance and portability checks on
# every C file we own, and clang-format (the repository's .clang-format) on
# every tracked .c/.h file, and that every header compiles alone. Exits
# non-zero, naming the files, when any finds something. `scripts/lint.sh --fix` rewrites the files clang-format
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
# EUNHA_LINT_CHECKS picks the checks ("cppcheck format headers", all by
# default): scripts/test.sh runs the quick format and headers checks before
# the build and cppcheck beside the suites.
checks=" ${EUNHA_LINT_CHECKS:-cppcheck format headers} "

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
    -D_GNU_SOURCE -D__GNUC__ -DEUNHA_E2E_DIR='"tests/e2e"' -DEUNHA_FEDIFY_DIR='"tests/fedify"' -Iinclude -Isrc --include=/usr/include/jansson.h \
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
