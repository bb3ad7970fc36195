/*
 * Creating notifications. Every module that causes one (follows, mentions,
 * favourites, reblogs, edits, polls) calls eu_notify(); it is fire and
 * forget: the notification is written after the caller's change, and a
 * failure is logged, not answered, as Mastodon does.
 */
#ifndef EUNHA_NOTIFY_H
#define EUNHA_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct eu_req;
struct eu_tenant;
struct eu_registry;

/*
 * Notifies account recipient_id of type ("mention", "status", "reblog",
 * "follow", "follow_request", "favourite", "poll", "update") from account
 * from_id about status_id (0 for none). Nothing is written when recipient
 * and sender are the same (except "poll"), when the recipient blocks the
 * sender or mutes them with hide_notifications, or when the recipient muted
 * the status's conversation. Safe to call from any callback on the loop.
 */
void eu_notify(struct eu_registry *reg, struct eu_tenant *t, int64_t recipient_id, int64_t from_id,
               const char *type, int64_t status_id);

/* Whether notifications are also mailed to the users who want them
 * ([mail] is set); the wiring says so once at start. */
void eu_notify_set_mail(bool on);

struct eu_job;
/* The "notification_mail" job (src/social/notification_mail.c); its
 * statements are eu_notification_mail_sql[] (sql.h). */
void eu_notification_mail_run(struct eu_job *job);

/* Recipients per statement of eu_notify_many(). */
#define EU_NOTIFY_BATCH 500

/*
 * eu_notify() for n recipients of one notification (a post's mentions,
 * its subscribers' "status", a closed poll's voters), in one statement per
 * EU_NOTIFY_BATCH of them: a post to thousands does not send thousands of
 * statements racing for the tenant's connections. recipients is borrowed.
 */
void eu_notify_many(struct eu_registry *reg, struct eu_tenant *t, const int64_t *recipients,
                    size_t n, int64_t from_id, const char *type, int64_t status_id);

#endif
