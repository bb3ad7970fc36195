/*
 * The bounded heap of include/eunha/bheap.h. Blocks carry a header that
 * links them into one list, so freeing a whole parse is a walk of that
 * list: gumbo_destroy_output() recurses once per level of nesting, which a
 * CPU pool thread's small stack cannot afford on hostile input.
 */
#include "eunha/bheap.h"

#include <stdbool.h>
#include <stdlib.h>

#include "eunha/mem.h"

static bool
past(const struct timespec *deadline)
{
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return now.tv_sec > deadline->tv_sec ||
           (now.tv_sec == deadline->tv_sec && now.tv_nsec > deadline->tv_nsec);
}

struct eu_bheap *
eu_bheap_new(size_t budget, long cpu_ms, unsigned clock_every)
{
    struct eu_bheap *h = eu_xcalloc(1, sizeof(*h));
    h->budget = budget;
    h->clock_every = clock_every ? clock_every : 1;
    h->head.next = h->head.prev = &h->head;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &h->deadline);
    h->deadline.tv_sec += cpu_ms / 1000;
    h->deadline.tv_nsec += (cpu_ms % 1000) * 1000000L;
    if (h->deadline.tv_nsec >= 1000000000L) {
        h->deadline.tv_sec++;
        h->deadline.tv_nsec -= 1000000000L;
    }
    return h;
}

void *
eu_bheap_alloc(void *userdata, size_t size)
{
    struct eu_bheap *h = userdata;
    if (size > h->budget - h->live)
        longjmp(h->out, 1);
    if (++h->allocs % h->clock_every == 0 && past(&h->deadline))
        longjmp(h->out, 1);
    struct eu_bheap_block *b = eu_xmalloc(sizeof(*b) + size);
    b->size = size;
    b->next = h->head.next;
    b->prev = &h->head;
    h->head.next->prev = b;
    h->head.next = b;
    h->live += size;
    return b + 1;
}

void
eu_bheap_free(void *userdata, void *ptr)
{
    struct eu_bheap *h = userdata;
    if (!ptr)
        return;
    struct eu_bheap_block *b = (struct eu_bheap_block *)ptr - 1;
    b->prev->next = b->next;
    b->next->prev = b->prev;
    h->live -= b->size;
    free(b);
}

void
eu_bheap_free_all(struct eu_bheap *h)
{
    struct eu_bheap_block *b = h->head.next;
    while (b != &h->head) {
        struct eu_bheap_block *next = b->next;
        free(b);
        b = next;
    }
    free(h);
}
