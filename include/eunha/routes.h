/*
 * The process's route table (src/http/routes.c): every route of the public
 * and admin listeners in one place.
 */
#ifndef EUNHA_ROUTES_H
#define EUNHA_ROUTES_H

#include <stddef.h>

#include "eunha/router.h"

/* The core table: admin listener, discovery, instance. */
extern const struct eu_route eu_routes[];
extern const size_t eu_routes_count;

/* One table per resource group of the Mastodon API, each ending with an
 * all-zero entry; they live beside their handlers in src/api/. */
extern const struct eu_route eu_oauth_routes[]; /* oauth.c: apps, OAuth, registration, web pages */
extern const struct eu_route eu_accounts_routes[]; /* accounts.c: accounts, relationships, lists */
extern const struct eu_route
    eu_statuses_routes[]; /* statuses.c: statuses, home/public/tag timelines */
extern const struct eu_route
    eu_social_routes[]; /* social.c: notifications, markers, filters, search... */
extern const struct eu_route eu_stream_routes[];        /* http/streaming.c: WebSocket, SSE */
extern const struct eu_route eu_timed_routes[];         /* scheduled.c: scheduled statuses, polls */
extern const struct eu_route eu_media_routes[];         /* media.c: uploads, /system/ files */
extern const struct eu_route eu_announcements_routes[]; /* announcements.c */

/* The per-group tables above, NULL-terminated. */
extern const struct eu_route *const eu_route_tables[];

#endif
