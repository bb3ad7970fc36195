/*
 * An author's audience as its last plain post found it, kept by this
 * process under the author's accounts.audience_stamp (migration 0075), so
 * that the author's next post reads no follower at all while the stamp
 * has not moved: the home feeds that take a plain status, the followers
 * who asked to be told of it, whether any remote follower would receive
 * it, and their inboxes. statuses.insert_plain compares the stamp and
 * answers the lists only when they changed (src/api/statuses.c).
 *
 * Entries are shared and read-only; a caller keeps one with a reference
 * across a statement, since the table may drop it meanwhile. Event loop
 * only. The table is direct-mapped and bounded in bytes: an author whose
 * audience is not kept costs its post the reading it always did.
 */
#ifndef EUNHA_AUDIENCE_H
#define EUNHA_AUDIENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct eu_audience {
    int refs;
    int64_t tenant, account;
    char stamp[24];
    int64_t until_ms; /* wall clock: a mute that lapses then changes it; INT64_MAX */
    bool remote;      /* a remote follower would receive a post */
    /* PostgreSQL array texts, as the statement answered them: the feeds
     * ("{author,follower,...}"), the bell ("{...}") and the remote
     * followers' inboxes (a text[], shared inbox else own; NULL: none). */
    char *feeds, *notify, *inboxes;
    size_t bytes;
};

/* The kept audience of tenant's account, with a reference the caller drops
 * with eu_audience_unref(); NULL when none is kept or it has lapsed. */
struct eu_audience *eu_audience_get(int64_t tenant, int64_t account);

/* Keeps an audience (strings copied; inboxes may be NULL), replacing the
 * account's older one; ignored when it would not fit the table's bytes.
 * until_ms: wall-clock milliseconds after which it is not used, or
 * INT64_MAX. */
void eu_audience_put(int64_t tenant, int64_t account, const char *stamp, int64_t until_ms,
                     bool remote, const char *feeds, const char *notify, const char *inboxes);

void eu_audience_unref(struct eu_audience *a);

/* Drops everything kept (at exit, and for the tests' counts). */
void eu_audience_clear(void);

/* Posts that used a kept audience and posts that read it, since the
 * process started (/metrics). */
struct eu_audience_stats {
    unsigned long long hits, reads;
};
void eu_audience_stats(struct eu_audience_stats *out);
void eu_audience_count(bool hit);

#endif
