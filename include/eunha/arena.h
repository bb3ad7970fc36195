/*
 * A per-request arena: bump allocation from chunks, all released at once when
 * the request is finished. It keeps a cleanup list, run in reverse order of
 * registration on destroy, so every PGresult, JSON root or pending handle of a
 * request is released with it.
 */
#ifndef EUNHA_ARENA_H
#define EUNHA_ARENA_H

#include <stdarg.h>
#include <stddef.h>

struct eu_arena;

typedef void (*eu_arena_cleanup_cb)(void *data);

/* Returns a new arena; free it with eu_arena_free(). */
struct eu_arena *eu_arena_new(void);
/* Runs the cleanups (last registered first), then releases every chunk. */
void eu_arena_free(struct eu_arena *a);
/* Returns n bytes aligned for any type, owned by the arena. Never NULL. */
void *eu_arena_alloc(struct eu_arena *a, size_t n);
/* Like eu_arena_alloc, zeroed. */
void *eu_arena_calloc(struct eu_arena *a, size_t n);
/* Copies of strings owned by the arena. */
char *eu_arena_strdup(struct eu_arena *a, const char *s);
char *eu_arena_strndup(struct eu_arena *a, const char *s, size_t n);
char *eu_arena_sprintf(struct eu_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
char *eu_arena_vsprintf(struct eu_arena *a, const char *fmt, va_list ap);
/* Registers fn(data) to run when the arena is freed. */
void eu_arena_on_free(struct eu_arena *a, eu_arena_cleanup_cb fn, void *data);
/* Bytes handed out so far (for tests and metrics). */
size_t eu_arena_used(const struct eu_arena *a);

#endif
