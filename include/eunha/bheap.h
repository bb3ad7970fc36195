/*
 * A bounded heap for parsers of untrusted input (libgumbo's allocator
 * hooks): every block it hands out is on one list, so an abandoned parse
 * is freed whole without walking the parser's tree; it refuses to grow
 * past a byte budget, and past a CPU time limit of the calling thread,
 * by jumping back to the caller's setjmp. The HTML sanitizer and the
 * preview card parser both read hostile markup this way.
 *
 * Use:
 *     struct eu_bheap *h = eu_bheap_new(budget, cpu_ms);   (on the heap:
 *         longjmp leaves the caller's changed locals undefined)
 *     opts.allocator = eu_bheap_alloc; opts.deallocator = eu_bheap_free;
 *     opts.userdata = h;
 *     if (setjmp(h->out)) { eu_bheap_free_all(h); ...give up... }
 *     ...parse, read the tree...
 *     eu_bheap_free_all(h);
 */
#ifndef EUNHA_BHEAP_H
#define EUNHA_BHEAP_H

#include <setjmp.h>
#include <stddef.h>
#include <time.h>

struct eu_bheap_block {
    struct eu_bheap_block *prev, *next;
    size_t size;
    size_t pad; /* keeps the payload 16-byte aligned */
};

struct eu_bheap {
    struct eu_bheap_block head; /* list sentinel */
    size_t live, budget;
    unsigned long allocs;
    unsigned clock_every;     /* read the CPU clock once per this many allocations */
    struct timespec deadline; /* of the creating thread's CPU time */
    jmp_buf out;              /* where a refused allocation jumps to */
};

/* A heap that allows budget bytes live and cpu_ms of this thread's CPU
 * time from now, reading the clock every clock_every allocations (cheap
 * enough at a few hundred; often enough to stop within milliseconds).
 * Freed with eu_bheap_free_all(), which also frees h. */
struct eu_bheap *eu_bheap_new(size_t budget, long cpu_ms, unsigned clock_every);

/* The allocator hooks: userdata is the heap. eu_bheap_alloc longjmps to
 * h->out when the budget or the time is spent. */
void *eu_bheap_alloc(void *userdata, size_t size);
void eu_bheap_free(void *userdata, void *ptr);

/* Frees every block still live, and h itself. */
void eu_bheap_free_all(struct eu_bheap *h);

#endif
