/*
 * The per-request arena. Allocation bumps a pointer through a chunk; chunks
 * start at 4 KiB and double (up to 64 KiB) so a small request touches one
 * malloc while a big one does not make thousands. An allocation bigger than a
 * quarter of the next chunk gets a chunk of its own, kept on a separate list,
 * so it does not waste the tail of the current chunk. Cleanup records live in
 * the arena itself: they are run before any chunk is released.
 */
#include "eunha/arena.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/mem.h"

#define ARENA_ALIGN 16
#define ARENA_FIRST_CHUNK 4096
#define ARENA_MAX_CHUNK (64 * 1024)

struct chunk {
    struct chunk *next;
    size_t size; /* usable bytes in data */
    size_t used;
    unsigned char data[];
};

struct cleanup {
    struct cleanup *next;
    eu_arena_cleanup_cb fn;
    void *data;
};

struct eu_arena {
    struct chunk *current;    /* bump chunk; older full chunks follow via next */
    struct chunk *large;      /* dedicated chunks of big allocations */
    struct cleanup *cleanups; /* newest first, so running the list is LIFO */
    size_t next_size;
    size_t used;
};

static struct chunk *
chunk_new(size_t size)
{
    /* ARENA_ALIGN - 1 spare bytes so the first allocation can be aligned
     * whatever malloc's own alignment is. */
    struct chunk *c = eu_xmalloc(sizeof *c + size + ARENA_ALIGN - 1);
    c->next = NULL;
    c->size = size + ARENA_ALIGN - 1;
    c->used = 0;
    return c;
}

/* Returns the offset in c->data at which n aligned bytes fit, or SIZE_MAX. */
static size_t
chunk_fit(const struct chunk *c, size_t n)
{
    uintptr_t base = (uintptr_t)c->data;
    uintptr_t at = (base + c->used + ARENA_ALIGN - 1) & ~(uintptr_t)(ARENA_ALIGN - 1);
    size_t off = (size_t)(at - base);
    if (off > c->size || c->size - off < n)
        return SIZE_MAX;
    return off;
}

struct eu_arena *
eu_arena_new(void)
{
    struct eu_arena *a = eu_xcalloc(1, sizeof *a);
    a->next_size = ARENA_FIRST_CHUNK;
    return a;
}

static void
chunks_free(struct chunk *c)
{
    while (c) {
        struct chunk *next = c->next;
        free(c);
        c = next;
    }
}

void
eu_arena_free(struct eu_arena *a)
{
    if (!a)
        return;
    /* Cleanups may still read arena memory (a JSON root built from arena
     * strings, say), so they run before any chunk goes. A cleanup that
     * registers another one gets it run too. */
    while (a->cleanups) {
        struct cleanup *c = a->cleanups;
        a->cleanups = c->next;
        c->fn(c->data);
    }
    chunks_free(a->current);
    chunks_free(a->large);
    free(a);
}

void *
eu_arena_alloc(struct eu_arena *a, size_t n)
{
    if (n == 0)
        n = 1; /* distinct pointers for distinct calls */
    a->used += n;

    if (n > a->next_size / 4) {
        if (n > SIZE_MAX - sizeof(struct chunk) - ARENA_ALIGN) {
            fprintf(stderr, "eunha: arena allocation of %zu bytes overflows\n", n);
            abort();
        }
        struct chunk *c = chunk_new(n);
        c->next = a->large;
        a->large = c;
        size_t off = chunk_fit(c, n);
        c->used = off + n;
        return c->data + off;
    }

    size_t off = a->current ? chunk_fit(a->current, n) : SIZE_MAX;
    if (off == SIZE_MAX) {
        struct chunk *c = chunk_new(a->next_size);
        if (a->next_size < ARENA_MAX_CHUNK)
            a->next_size *= 2;
        c->next = a->current;
        a->current = c;
        off = chunk_fit(c, n);
    }
    a->current->used = off + n;
    return a->current->data + off;
}

void *
eu_arena_calloc(struct eu_arena *a, size_t n)
{
    void *p = eu_arena_alloc(a, n);
    memset(p, 0, n);
    return p;
}

char *
eu_arena_strndup(struct eu_arena *a, const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *p = eu_arena_alloc(a, len + 1);
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

char *
eu_arena_strdup(struct eu_arena *a, const char *s)
{
    if (!s)
        return NULL;
    return eu_arena_strndup(a, s, strlen(s));
}

char *
eu_arena_vsprintf(struct eu_arena *a, const char *fmt, va_list ap)
{
    va_list measure;
    va_copy(measure, ap);
    int n = vsnprintf(NULL, 0, fmt, measure);
    va_end(measure);
    if (n < 0) {
        /* Only an invalid format gets here: a programmer error. */
        fprintf(stderr, "eunha: bad format '%s' in arena sprintf\n", fmt);
        abort();
    }
    char *p = eu_arena_alloc(a, (size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    return p;
}

char *
eu_arena_sprintf(struct eu_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = eu_arena_vsprintf(a, fmt, ap);
    va_end(ap);
    return p;
}

void
eu_arena_on_free(struct eu_arena *a, eu_arena_cleanup_cb fn, void *data)
{
    struct cleanup *c = eu_arena_alloc(a, sizeof *c);
    /* The record itself is bookkeeping, not something the caller asked for. */
    a->used -= sizeof *c;
    c->fn = fn;
    c->data = data;
    c->next = a->cleanups;
    a->cleanups = c;
}

size_t
eu_arena_used(const struct eu_arena *a)
{
    return a->used;
}
