/*
 * Allocation wrappers that abort on out-of-memory, so callers never check for
 * NULL. Sizes that come from the network must be capped by config first.
 */
#ifndef EUNHA_MEM_H
#define EUNHA_MEM_H

#include <stddef.h>

/* Returns memory the caller frees with free(). Never NULL. */
void *eu_xmalloc(size_t n);
/* Returns zeroed memory the caller frees with free(). Never NULL. */
void *eu_xcalloc(size_t count, size_t n);
/* Resizes p; the caller frees the result with free(). Never NULL. */
void *eu_xrealloc(void *p, size_t n);
/* Returns a copy of s (NULL gives NULL) that the caller frees with free(). */
char *eu_xstrdup(const char *s);
/* Returns a copy of the first n bytes of s, NUL-terminated; caller frees. */
char *eu_xstrndup(const char *s, size_t n);
/* printf into a new string that the caller frees with free(). */
char *eu_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
