/*
 * A compiled set of filter keywords (kwmatch.c): one Aho-Corasick automaton
 * that tells, in one pass over a text, which of the keywords occur in it,
 * with the matching rules filters.c has always applied:
 *
 *  - ASCII letters match either case; other bytes (UTF-8 included) match
 *    only themselves, as strncasecmp() in the C locale did;
 *  - a whole-word keyword that starts (ends) with a word byte must start
 *    (end) at a word boundary, Mastodon's \b only where the keyword has a
 *    word edge; word bytes are ASCII letters, digits, '_' and every byte of
 *    a non-ASCII character;
 *  - an empty keyword matches nothing.
 *
 * A run costs time linear in the text plus the number of keywords found,
 * whatever the number of keywords compiled. The object is immutable after
 * eu_kwmatch_new(), so any number of runs may share it; it holds no
 * reference to the keywords it was built from.
 */
#ifndef EUNHA_SOCIAL_KWMATCH_INTERNAL_H
#define EUNHA_SOCIAL_KWMATCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct eu_kwmatch;

struct eu_kwmatch_pattern {
    const char *text; /* NUL-terminated; read during eu_kwmatch_new() only */
    bool whole_word;
};

/*
 * Compiles n patterns; pattern i is reported by eu_kwmatch_run() as i. The
 * same text may appear several times (as different filters' keywords do);
 * each copy is reported. Aborts on out-of-memory like eu_xmalloc(). The
 * caller frees the result with eu_kwmatch_free().
 */
struct eu_kwmatch *eu_kwmatch_new(const struct eu_kwmatch_pattern *patterns, size_t n);
void eu_kwmatch_free(struct eu_kwmatch *m);

/* The n given to eu_kwmatch_new(). */
size_t eu_kwmatch_count(const struct eu_kwmatch *m);
/* Bytes of heap m holds, for a cache's memory budget. */
size_t eu_kwmatch_size(const struct eu_kwmatch *m);

/*
 * Runs the NUL-terminated text through m once. Writes the indices of the
 * patterns that occur, in ascending order, to hits (room for
 * eu_kwmatch_count(m) entries, owned by the caller) and returns how many.
 */
size_t eu_kwmatch_run(const struct eu_kwmatch *m, const char *text, uint32_t *hits);

#endif
