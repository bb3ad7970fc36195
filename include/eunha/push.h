/*
 * Web Push, as Mastodon's: the subscription API (src/api/push.c,
 * /api/v1/push/subscription), the tenant's VAPID key, and the "web_push"
 * job that encrypts and posts one notification to one subscription
 * (src/social/push.c). Notifications queue their pushes in the statement
 * that writes them (src/social/notify.c). The crypto is eunha/webpush.h.
 */
#ifndef EUNHA_PUSH_H
#define EUNHA_PUSH_H

#include "eunha/router.h"
#include "eunha/sql.h"

struct eu_job;
struct eu_req;

/* Every notification type a subscription's alerts name, in Mastodon's
 * order; NULL-terminated. */
extern const char *const eu_push_alert_types[];

/*
 * Calls cb(req, key, arg) with the tenant's VAPID public key (base64url of
 * its P-256 point), making the pair on first need (on the CPU pool; a race
 * between processes ends with one pair). key is "" when it cannot be made
 * (logged), so the answer it goes in still goes out. Database failures are
 * answered as eu_req_stmt() answers them, and cb then does not run.
 */
typedef void (*eu_push_key_cb)(struct eu_req *req, const char *key, void *arg);
void eu_push_server_key(struct eu_req *req, eu_push_key_cb cb, void *arg);

/* The "web_push" job's handler, for src/app/kinds.c. */
void eu_push_deliver_run(struct eu_job *job);

extern const struct eu_sql eu_push_sql[];
extern const struct eu_sql eu_push_deliver_sql[];
extern const struct eu_route eu_push_routes[];

#endif
