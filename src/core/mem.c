/*
 * Allocation wrappers that abort on out-of-memory. A server that cannot get a
 * few bytes cannot answer anyone sensibly, and NULL checks at every call site
 * would hide the real logic; so we fail loudly in one place instead.
 */
#include "eunha/mem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
die_oom(size_t n)
{
    /* No allocation here: stdio on stderr is unbuffered. */
    fprintf(stderr, "eunha: out of memory allocating %zu bytes\n", n);
    abort();
}

void *
eu_xmalloc(size_t n)
{
    /* malloc(0) may return NULL legitimately; ask for one byte instead so
     * "never NULL" holds. */
    void *p = malloc(n ? n : 1);
    if (!p)
        die_oom(n);
    return p;
}

void *
eu_xcalloc(size_t count, size_t n)
{
    void *p = calloc(count ? count : 1, n ? n : 1);
    if (!p)
        die_oom(count * n);
    return p;
}

void *
eu_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        die_oom(n);
    return q;
}

char *
eu_xstrdup(const char *s)
{
    if (!s)
        return NULL;
    return eu_xstrndup(s, strlen(s));
}

char *
eu_xstrndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *p = eu_xmalloc(len + 1);
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

char *
eu_xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0) {
        /* vasprintf only fails on allocation or an invalid format. */
        die_oom(0);
    }
    return s;
}
