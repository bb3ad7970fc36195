/*
 * Declarations shared by the social group's files (social.c,
 * notifications.c, filters.c, search.c, conversations.c, reports.c) and
 * the streaming API's renders (stream_events.c): the route handlers that
 * social.c's table names, and the status-list reply they share.
 */
#ifndef EUNHA_API_SOCIAL_INTERNAL_H
#define EUNHA_API_SOCIAL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

struct eu_req;
struct eu_sql;
struct json_t;

/*
 * Renders the statuses with these ids (newest first), applies the viewer's
 * filters for filter_context (NULL: none) and replies 200 with the array
 * and a Link header built from first_id/last_id (NULL: none).
 */
void eu_social_reply_statuses(struct eu_req *req, const char *const *ids, size_t n,
                              const char *first_id, const char *last_id,
                              const char *filter_context);

/*
 * Hashtags as social.c shows them, for featured.c: whether name is one
 * (letters, digits, '_', any non-ASCII, not only digits); the Tag entity
 * (id NULL for a tag nobody used; following left out for an anonymous
 * viewer), a new reference the caller owns; and the statement that reads
 * a tag by name ($2 the viewer, $3 the name: id, lower name, followed),
 * no row when there is none.
 */
bool eu_social_tag_name_is_valid(const char *name);
struct json_t *eu_social_tag_json(struct eu_req *req, const char *id, const char *name,
                                  bool following);
const struct eu_sql *eu_social_tag_stmt(void);

/* notifications.c */
/* GET /api/v1/timelines/list/:id (social.c); the streaming API renders
 * list events through it. */
void eu_timelines_list(struct eu_req *req);
void eu_notifications_index(struct eu_req *req);
void eu_notifications_show(struct eu_req *req);
void eu_notifications_dismiss(struct eu_req *req);
void eu_notifications_clear(struct eu_req *req);
void eu_notifications_unread_count(struct eu_req *req);
void eu_notifications_groups_index(struct eu_req *req);
void eu_notifications_groups_show(struct eu_req *req);
void eu_notifications_groups_dismiss(struct eu_req *req);
void eu_notifications_groups_accounts(struct eu_req *req);
void eu_notifications_groups_unread_count(struct eu_req *req);

/* filters.c */
void eu_filters_v1_index(struct eu_req *req);
void eu_filters_v1_show(struct eu_req *req);
void eu_filters_v1_create(struct eu_req *req);
void eu_filters_v1_update(struct eu_req *req);
void eu_filters_v1_destroy(struct eu_req *req);
void eu_filters_v2_index(struct eu_req *req);
void eu_filters_v2_show(struct eu_req *req);
void eu_filters_v2_create(struct eu_req *req);
void eu_filters_v2_update(struct eu_req *req);
void eu_filters_v2_destroy(struct eu_req *req);
void eu_filters_keywords_index(struct eu_req *req);
void eu_filters_keywords_create(struct eu_req *req);
void eu_filters_keywords_show(struct eu_req *req);
void eu_filters_keywords_update(struct eu_req *req);
void eu_filters_keywords_destroy(struct eu_req *req);
void eu_filters_statuses_index(struct eu_req *req);
void eu_filters_statuses_create(struct eu_req *req);
void eu_filters_statuses_show(struct eu_req *req);
void eu_filters_statuses_destroy(struct eu_req *req);

/* search.c */
void eu_search_v2(struct eu_req *req);

/* reports.c */
void eu_reports_create(struct eu_req *req);

/* conversations.c */
void eu_conversations_index(struct eu_req *req);
void eu_conversations_destroy(struct eu_req *req);
void eu_conversations_read(struct eu_req *req);
/* The viewer's conversation holding the status of param "id" (404: none
 * to tell of): the streaming API's "conversation" payload. */
void eu_conversations_stream(struct eu_req *req);

#endif
