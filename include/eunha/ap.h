/*
 * The ActivityPub documents a tenant serves (src/ap/): WebFinger, actors,
 * notes and the activities that wrap them, collections, and the tenant's
 * instance actor. Every address follows Mastodon's shapes under the
 * tenant's base URL (BASE, "https://DOMAIN"):
 *
 *   actor      BASE/users/NAME (key BASE/users/NAME#main-key), page BASE/@NAME
 *   note       BASE/users/NAME/statuses/ID, its activity .../ID/activity
 *   instance   BASE/actor (key BASE/actor#main-key)
 *
 * The builders here are apart from inbox processing and delivery, which
 * call them to build what they send.
 */
#ifndef EUNHA_AP_H
#define EUNHA_AP_H

#include <stdbool.h>
#include <stdint.h>

#include "eunha/db.h"
#include "eunha/router.h"
#include "eunha/sql.h"

struct eu_app;
struct eu_req;
struct eu_tenant;
struct json_t;
struct pg_result;

/* The routes of the ActivityPub documents, each table beside its handlers
 * and ending with {0}. BASE/users/NAME itself, BASE/@NAME and BASE/@NAME/ID
 * are routed with the HTML pages (eu_web_routes, src/api/web.c), which hand
 * ActivityPub clients to eu_ap_actor_show() and eu_ap_note_show(). */
extern const struct eu_route eu_ap_webfinger_routes[];      /* webfinger.c */
extern const struct eu_route eu_ap_instance_actor_routes[]; /* instance_actor.c */
extern const struct eu_route eu_ap_collections_routes[];    /* collections.c */
extern const struct eu_route eu_ap_objects_routes[];        /* objects.c */
extern const struct eu_route eu_ap_quotes_routes[];         /* process_quote.c */

/* note_collections.c: a status's replies, likes and shares. */
extern const struct eu_route eu_ap_note_collections_routes[];
extern const struct eu_sql eu_ap_note_collections_sql[];
/* followers_sync.c: FEP-8fcf's partial followers collection. */
extern const struct eu_route eu_ap_followers_sync_routes[];
extern const struct eu_sql eu_ap_followers_sync_sql[];

/* The statements of src/ap/ (see sql.h), each table ending with {0}. */
extern const struct eu_sql eu_ap_actors_sql[];      /* actors.c, webfinger.c */
extern const struct eu_sql eu_ap_objects_sql[];     /* objects.c */
extern const struct eu_sql eu_ap_collections_sql[]; /* collections.c */
/* authfetch.c's: whether the tenant suspended a host (a domain block). */
extern const struct eu_sql eu_ap_domain_policy_sql[];
extern const struct eu_sql eu_ap_instance_actor_sql[]; /* instance_actor.c */

/* Content types of what this file's documents are served as. */
#define EU_AP_CONTENT_TYPE "application/activity+json; charset=utf-8"
#define EU_AP_PUBLIC "https://www.w3.org/ns/activitystreams#Public"

/*
 * True when req asks for ActivityPub JSON: its Accept names
 * application/activity+json or application/ld+json (with or without
 * Mastodon's activitystreams profile). A browser's Accept does not.
 */
bool eu_ap_accept_is_activity(const struct eu_req *req);

/* ------------------------------------------------------------ notes */

/*
 * A status as ActivityPub. eu_ap_note_stmt() is a registered statement
 * taking $2 the status ids (an array literal "{1,2}") and $3 the base URL;
 * it returns one row per id that is a live status of a local account of
 * the tenant, whatever its visibility (callers decide who may see it), in
 * no given order. The columns are what eu_ap_note_json() and
 * eu_ap_activity_json() read; other statements of src/ap/ select the same
 * columns (EU_AP_NOTE_COLUMNS in objects_internal.h).
 */
const struct eu_sql *eu_ap_note_stmt(void);
/* The same columns for every live local status among the ids, whoever
 * would receive it (a user's archive, src/api/takeout_archive.c). */
const struct eu_sql *eu_ap_notes_by_ids_stmt(void);

/* The status id of row, as text borrowed from res. */
const char *eu_ap_note_row_id(const struct pg_result *res, int row);
/* Its visibility code (0 public, 1 unlisted, 2 private, 3 direct). */
int eu_ap_note_row_visibility(const struct pg_result *res, int row);
/* Whether row is a reblog (an Announce, which has no Note of its own). */
bool eu_ap_note_row_is_reblog(const struct pg_result *res, int row);

/*
 * The Note (Question when the status has a poll) of a row of the note
 * columns, without "@context": id, type, summary, inReplyTo, published,
 * updated, url, attributedTo, to, cc, sensitive, conversation, content,
 * contentMap, attachment (its ready media as Documents, file URLs from
 * app's store), tag, and the poll's fields. base is the tenant's
 * base URL, domain its domain (for "@user@domain" mention names). Not for
 * a reblog row (returns NULL). New reference the caller owns.
 */
struct json_t *eu_ap_note_json(struct eu_app *app, const char *base, const char *domain,
                               const struct pg_result *res, int row);

/*
 * The activity of a row: Create with the Note inline, or Announce of the
 * original's URI for a reblog; id BASE/users/NAME/statuses/ID/activity,
 * actor, published, to and cc as Mastodon addresses them. Without
 * "@context". New reference the caller owns.
 */
struct json_t *eu_ap_activity_json(struct eu_app *app, const char *base, const char *domain,
                                   const struct pg_result *res, int row);

/*
 * Adds the "@context" a Note or an activity holding one carries (the
 * activitystreams context and Mastodon's extension terms the Note uses) as
 * the document's first member. Takes obj's reference and returns it.
 */
struct json_t *eu_ap_note_with_context(struct json_t *obj);

/* ------------------------------------------------------ instance actor */

/* What signing as the tenant's instance actor needs. Strings are owned by
 * the struct's provider and valid during the callback only. */
struct eu_ap_instance_actor {
    int64_t account_id;
    const char *public_key_pem;
    const char *private_key_pem; /* PKCS#8 PEM */
};

/* ia is NULL when status is not EU_DB_OK (the database could not be
 * reached, or the key could not be made: EU_DB_ERROR). */
typedef void (*eu_ap_instance_actor_cb)(const struct eu_ap_instance_actor *ia,
                                        enum eu_db_status status, void *arg);

/*
 * Looks up tenant t's instance actor and creates it on first need: its RSA
 * key is made on the CPU pool, then one statement inserts the accounts row
 * and the settings row 'instance_actor_id' together. Concurrent first
 * calls, in this process or another, end with the same actor (the loser's
 * insert does nothing and it reads the winner's row). cb runs later on the
 * loop thread, never from inside this call; the call holds a reference to
 * t until then. Its id is BASE/actor and its key id BASE/actor#main-key
 * whatever the account id.
 */
void eu_ap_instance_actor(struct eu_app *app, struct eu_tenant *t, eu_ap_instance_actor_cb cb,
                          void *arg);

/* -------------------------------------------------------- handlers */

/* Actor documents (actors.c): BASE/users/:username and BASE/@:username
 * when eu_ap_accept_is_activity(). The "username" or "acct" ("@name")
 * parameter names the account. */
void eu_ap_actor_show(struct eu_req *req, const char *username);
/* The actor document of local account username, whatever the tenant's
 * authorized fetch (for the Update that outbox.c sends, and a user's
 * archive; req is one that no client sent). */
void eu_ap_actor_document(struct eu_req *req, const char *username);
/* Notes (objects.c): BASE/@:username/:id when eu_ap_accept_is_activity(). */
void eu_ap_note_show(struct eu_req *req, const char *username, const char *id);

/* ------------------------------------------- authorized fetch (authfetch.c) */

typedef void (*eu_ap_resume_fn)(struct eu_req *req, void *arg);
/*
 * Whether a GET of an ActivityPub document may be served now: true when the
 * tenant does not ask for signed fetches or req's signature was verified
 * (req->ap_signer). false: the gate took req over; it calls resume(req,
 * arg) once the signature verifies, or answers 401 (503 when the key's
 * server cannot be reached) itself.
 */
bool eu_ap_fetch_allowed(struct eu_req *req, eu_ap_resume_fn resume, void *arg);
/*
 * Verifies sig (parsed from req by eu_httpsig_parse) with its key: from the
 * key cache, the tenant's rows or a signed fetch, fetched once more when
 * verification fails (the sender rotated it). done(req, owner, arg) runs
 * with the key's owner (an actor URI) once it verifies; otherwise req is
 * answered here: 401 (bad signature, unusable key) or 503 (the key's server
 * or ours cannot be reached). sig must live as long as req.
 */
struct eu_httpsig;
typedef void (*eu_ap_verified_fn)(struct eu_req *req, const char *owner, void *arg);
void eu_ap_verify_signature(struct eu_req *req, struct eu_httpsig *sig, eu_ap_verified_fn done,
                            void *arg);
/* The request as eu_httpsig_parse() reads it, borrowed from req (arena).
 * false when the request has no Host or was already answered. */
struct eu_httpsig_request;
bool eu_ap_request_for_signature(struct eu_req *req, const char *method,
                                 struct eu_httpsig_request *out);

#endif
