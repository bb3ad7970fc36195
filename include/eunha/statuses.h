/*
 * Statuses as other groups see them: the Status entity renderer, and where
 * the rule that decides whether a viewer may see a status lives (SQL
 * functions, below). Every read of a status anywhere in the API goes
 * through one or the other, so visibility is enforced in one place.
 */
#ifndef EUNHA_STATUSES_H
#define EUNHA_STATUSES_H

#include <stddef.h>

struct eu_req;
struct eu_task_run;
struct json_t;

/*
 * Whether a viewer may see a status, and whether a status's author is shown
 * in lists of statuses, are SQL functions (migration 0040):
 * eunha_status_visible() and eunha_status_audience() for a status,
 * eunha_not_domain_hidden() and eunha_not_shunned() for its author. Every
 * statement that reads statuses for a viewer calls them.
 */

/* array: a new reference the callback owns (json_decref it or pass it on to
 * eu_req_reply_json, which steals it). */
typedef void (*eu_statuses_rendered_cb)(struct eu_req *req, struct json_t *array, void *arg);

/*
 * Loads the statuses with these ids (decimal strings, in this order), drops
 * the ones the viewer (req->auth.account_id, 0 = anonymous) may not see or
 * that are deleted (and reblogs whose original is hidden), and renders
 * Mastodon Status entities: account, reblog nested, mentions, tags, emojis
 * [], media_attachments (in order), counts, favourited/reblogged/bookmarked/muted/
 * pinned for an authenticated viewer, the poll (for the viewer), card null,
 * filtered []. The array keeps the order of ids. ids and its strings are only
 * read during the call. One database query whatever n is. On a database failure it answers
 * the request itself (eu_req_reply_db_error) and does not call cb. cb runs
 * later, never from inside this call; must be called on the loop thread.
 */
void eu_statuses_render(struct eu_req *req, const char *const *ids, size_t n,
                        eu_statuses_rendered_cb cb, void *arg);

/* The rendered-entity cache's figures (src/api/render_cache.c), for
 * /metrics. */
struct eu_rc_stats {
    size_t entries;
    unsigned long long hits, misses; /* statuses and accounts served, or built */
};
void eu_rc_stats(struct eu_rc_stats *out);
/* Empties the cache (at exit, and when it is turned off). */
void eu_rc_free(void);

/*
 * The statuses' timed tasks (eu_task_kinds[] in src/queue/kinds.c). The
 * scheduled-status publisher (scheduled.c) posts the statuses that are due
 * and sleeps until the next; the poll closer (polls.c) closes expired polls,
 * notifies their authors and voters, and sleeps until the next expiry.
 */
void eu_scheduled_task_run(struct eu_task_run *run);
void eu_polls_task_run(struct eu_task_run *run);

#endif
