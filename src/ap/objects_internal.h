/*
 * What the files of src/ap/ that serve documents share: the SQL fragments
 * that build a local object's address, the note columns, and the reply
 * helpers of every ActivityPub document.
 */
#ifndef EUNHA_AP_OBJECTS_INTERNAL_H
#define EUNHA_AP_OBJECTS_INTERNAL_H

#include <stdbool.h>

#include "eunha/entities.h"

struct eu_req;
struct json_t;
struct pg_result;

/* Statements write ActivityPub's timestamps ("2024-05-01T12:00:00Z",
 * without fractions, as Mastodon's documents do) with eunha_ap_ts(), an
 * actor's URI with eunha_actor_uri() and a status's with
 * eunha_status_uri() (migration 0040): local ones are derived from the
 * tenant's base URL, so they follow its domain; remote ones are what their
 * server said. */

/*
 * The note columns (see eu_ap_note_stmt()) of statuses row s by accounts
 * row a, with $3 the base URL; objects.c reads them by these names.
 */
#define EU_AP_NOTE_COLUMNS                                                                         \
    "s.id, a.username, s.visibility, s.reblog_of_id, eunha_ap_ts(s.created_at) AS published,"      \
    " CASE WHEN s.edited_at IS NULL THEN NULL ELSE eunha_ap_ts(s.edited_at) END AS updated,"       \
    " s.sensitive, s.spoiler_text, s.content, s.language,"                                         \
    " (SELECT eunha_status_uri(p.local, p.id, p.uri, pa.username, $3) FROM statuses p"             \
    "  JOIN accounts pa ON pa.tenant_id = $1 AND pa.id = p.account_id"                             \
    "  WHERE p.tenant_id = $1 AND p.id = s.in_reply_to_id) AS in_reply_to,"                        \
    " s.conversation_id,"                                                                          \
    " (SELECT coalesce(json_agg(json_build_array(eunha_actor_uri(ma.domain, ma.username,"          \
    "  ma.uri, $3), ma.username, ma.domain) ORDER BY m.id), '[]')::text FROM mentions m"           \
    "  JOIN accounts ma ON ma.tenant_id = $1 AND ma.id = m.account_id"                             \
    "  WHERE m.tenant_id = $1 AND m.status_id = s.id AND NOT m.silent) AS mentions,"               \
    " (SELECT coalesce(json_agg(t.name ORDER BY lower(t.name)), '[]')::text"                       \
    "  FROM statuses_tags st JOIN tags t ON t.tenant_id = $1 AND t.id = st.tag_id"                 \
    "  WHERE st.tenant_id = $1 AND st.status_id = s.id) AS tags,"                                  \
    " (SELECT json_build_object('multiple', sp.multiple,"                                          \
    "  'end', eunha_ap_ts(sp.expires_at), 'expired', sp.expires_at <= now(),"                      \
    "  'hidden', sp.hide_totals AND sp.expires_at > now(),"                                        \
    "  'voters', (SELECT count(*) FROM poll_votes pv WHERE pv.tenant_id = $1"                      \
    "   AND pv.poll_id = sp.id),"                                                                  \
    "  'options', (SELECT json_agg(json_build_array(po.title, (SELECT count(*)"                    \
    "   FROM poll_votes pv WHERE pv.tenant_id = $1 AND pv.poll_id = sp.id"                         \
    "   AND (po.i - 1)::int = ANY (pv.choices))) ORDER BY po.i)"                                   \
    "   FROM unnest(sp.options) WITH ORDINALITY po(title, i)))::text"                              \
    "  FROM polls sp WHERE sp.tenant_id = $1 AND sp.status_id = s.id) AS poll,"                    \
    " (SELECT json_build_array(eunha_status_uri(o.local, o.id, o.uri, oa.username, $3),"           \
    "  eunha_actor_uri(oa.domain, oa.username, oa.uri, $3))::text FROM statuses o"                 \
    "  JOIN accounts oa ON oa.tenant_id = $1 AND oa.id = o.account_id"                             \
    "  WHERE o.tenant_id = $1 AND o.id = s.reblog_of_id AND o.deleted_at IS NULL) AS original,"    \
    " (SELECT coalesce(json_agg(eunha_media_json(nma) ORDER BY nma.position), '[]')::text"         \
    "  FROM media_attachments nma WHERE nma.tenant_id = $1 AND nma.status_id = s.id"               \
    "  AND nma.position >= 0 AND nma.state = 'ready') AS media,"                                   \
    " eunha_emojis_in($1, NULL, s.spoiler_text || ' ' || s.content) AS emojis,"                    \
    " s.quote_policy,"                                                                             \
    " (SELECT json_build_object('state', qo.state, 'uri', coalesce(eunha_status_uri(qs.local,"     \
    "  qs.id, qs.uri, qsa.username, $3), qo.quoted_uri), 'approval', CASE WHEN qs.local"           \
    "  THEN $3 || '/users/' || qsa.username || '/quote_authorizations/' || qo.id"                  \
    "  ELSE qo.approval_uri END)::text FROM quotes qo"                                             \
    "  LEFT JOIN statuses qs ON qs.tenant_id = $1 AND qs.id = qo.quoted_status_id"                 \
    "  LEFT JOIN accounts qsa ON qsa.tenant_id = $1 AND qsa.id = qs.account_id"                    \
    "  WHERE qo.tenant_id = $1 AND qo.status_id = s.id) AS quote"

/* The rows the note columns come from: live statuses of local accounts. */
#define EU_AP_NOTE_FROM                                                                            \
    " FROM statuses s JOIN accounts a ON a.tenant_id = $1 AND a.id = s.account_id"                 \
    " AND a.domain IS NULL"

/* A reblog counts in an outbox only while what it boosts may be shown to
 * anyone. */
#define EU_AP_REBLOG_SHOWN                                                                         \
    " AND (s.reblog_of_id IS NULL OR EXISTS (SELECT 1 FROM statuses ro"                            \
    "  WHERE ro.tenant_id = $1 AND ro.id = s.reblog_of_id AND ro.deleted_at IS NULL"               \
    "  AND ro.visibility <= 1))"

/* The "@context" of a Note and of documents holding Notes: the
 * activitystreams context and the Mastodon terms a Note uses. New
 * reference. */
struct json_t *eu_ap_note_context(void);

/* Local usernames: letters, digits and '_', as sign-up allows; the
 * instance actor's "instance.actor" is never one. */
bool eu_ap_username_is_valid(const char *s);

/* Finishes req with doc (reference stolen) as application/activity+json,
 * with Vary: Accept (the same URL serves HTML to browsers). */
void eu_ap_reply(struct eu_req *req, int status, struct json_t *doc);

/* The base of local account NAME's addresses, "BASE/users/NAME".
 * Arena-owned. */
const char *eu_ap_actor_uri(struct eu_req *req, const char *username);

/* The actor row statement (actors.c): $2 username (any case), $3 base URL;
 * no row for an unknown name. Columns: actors.c's enum. */
enum {
    EU_AP_ACTOR_ID,
    EU_AP_ACTOR_USERNAME,
    EU_AP_ACTOR_SUSPENDED,
    EU_AP_ACTOR_USABLE, /* a confirmed, approved user */
    EU_AP_ACTOR_STATUSES,
    EU_AP_ACTOR_FOLLOWERS,
    EU_AP_ACTOR_FOLLOWING,
};
extern const struct eu_sql *const eu_ap_actor_stmt;

/* The instance actor's document (instance_actor.c): GET BASE/actor. */
void eu_ap_instance_actor_show(struct eu_req *req);

/* WebFinger (webfinger.c). */
void eu_ap_webfinger(struct eu_req *req);

/* Routes of objects.c and collections.c, referred to from the route table
 * in actors.c. */
void eu_ap_users_status(struct eu_req *req);
void eu_ap_users_status_activity(struct eu_req *req);
void eu_ap_outbox(struct eu_req *req);
void eu_ap_followers(struct eu_req *req);
void eu_ap_following(struct eu_req *req);
void eu_ap_featured(struct eu_req *req);
void eu_ap_endorsements(struct eu_req *req);
void eu_ap_featured_tags(struct eu_req *req);
void eu_ap_instance_outbox(struct eu_req *req);

#endif
