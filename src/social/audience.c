/*
 * The kept audiences of authors (include/eunha/audience.h): a
 * direct-mapped table by tenant and account, bounded in bytes. A post by
 * an author whose audience is kept sends the kept stamp; when the stamp
 * still matches, the post's statement reads no follower and the lists
 * come from here. Being direct-mapped, two busy authors whose slots
 * collide take turns being kept, which costs them the reading they would
 * otherwise do, never a wrong list: the stamp decides.
 */
#include "eunha/audience.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eunha/mem.h"

#define SLOTS 4096
/* What the kept lists may take in all: 10,000 followers' ids are about
 * 200 KB of text, so this keeps the audiences of a few hundred such
 * authors or of every small one. */
#define MAX_BYTES (32u << 20)

static struct eu_audience *slots[SLOTS];
static size_t kept_bytes;
static struct eu_audience_stats stats;

static size_t
slot_of(int64_t tenant, int64_t account)
{
    uint64_t h = (uint64_t)tenant * 0x9E3779B97F4A7C15ull ^ (uint64_t)account;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return (size_t)(h % SLOTS);
}

static int64_t
wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
eu_audience_unref(struct eu_audience *a)
{
    if (!a || --a->refs > 0)
        return;
    free(a->feeds);
    free(a->notify);
    free(a->inboxes);
    free(a);
}

/* Empties slot i. */
static void
drop(size_t i)
{
    struct eu_audience *a = slots[i];
    if (!a)
        return;
    slots[i] = NULL;
    kept_bytes -= a->bytes;
    eu_audience_unref(a);
}

struct eu_audience *
eu_audience_get(int64_t tenant, int64_t account)
{
    size_t i = slot_of(tenant, account);
    struct eu_audience *a = slots[i];
    if (!a || a->tenant != tenant || a->account != account)
        return NULL;
    if (wall_ms() >= a->until_ms) {
        drop(i);
        return NULL;
    }
    a->refs++;
    return a;
}

void
eu_audience_put(int64_t tenant, int64_t account, const char *stamp, int64_t until_ms, bool remote,
                const char *feeds, const char *notify, const char *inboxes)
{
    if (!stamp || !feeds || !notify || strlen(stamp) >= sizeof(((struct eu_audience *)0)->stamp))
        return;
    size_t i = slot_of(tenant, account);
    drop(i);
    size_t bytes = sizeof(struct eu_audience) + strlen(feeds) + strlen(notify) +
                   (inboxes ? strlen(inboxes) : 0) + 3;
    if (kept_bytes + bytes > MAX_BYTES)
        return;
    struct eu_audience *a = eu_xcalloc(1, sizeof(*a));
    a->refs = 1; /* the table's */
    a->tenant = tenant;
    a->account = account;
    strcpy(a->stamp, stamp);
    a->until_ms = until_ms;
    a->remote = remote;
    a->feeds = eu_xstrdup(feeds);
    a->notify = eu_xstrdup(notify);
    a->inboxes = inboxes ? eu_xstrdup(inboxes) : NULL;
    a->bytes = bytes;
    slots[i] = a;
    kept_bytes += bytes;
}

void
eu_audience_clear(void)
{
    for (size_t i = 0; i < SLOTS; i++)
        drop(i);
}

void
eu_audience_count(bool hit)
{
    if (hit)
        stats.hits++;
    else
        stats.reads++;
}

void
eu_audience_stats(struct eu_audience_stats *out)
{
    *out = stats;
}
