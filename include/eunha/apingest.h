/*
 * Remote ActivityPub documents into rows: the inbound side's pure parsing
 * (an actor, a note or an object Mastodon converts) into C structs, and the
 * statements that store them for one tenant.
 *
 * Parsing is strict and bounded: every URI must be http(s) (and the id on
 * the host the caller expects, when it names one), strings have length caps
 * (a document over a cap is refused, not truncated), arrays are read up to
 * a cap and the rest ignored, HTML goes through eu_sanitize_html(), and
 * timestamps that are not ISO 8601 are taken as absent. Parsers are pure
 * (no I/O, any thread); everything they return is allocated in the arena
 * given, and the JSON document is only borrowed during the call.
 *
 * Storing runs registered statements (eu_ingest_sql[], $1 the tenant) on a
 * connection of the tenant's pool: a job's eu_job_conn(), or one a handler
 * acquired. Each store is one statement, so it is atomic by itself; to
 * store an actor and its note in one transaction, send "BEGIN" with
 * eu_db_conn_exec() first and "COMMIT" after both callbacks. Counters
 * (statuses_count, replies_count, ...) move with the rows through the
 * triggers of migrations 0013 and 0020. Loop thread only.
 */
#ifndef EUNHA_APINGEST_H
#define EUNHA_APINGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct eu_arena;
struct eu_db_conn;
struct eu_error;
struct json_t;

/* Caps. A longer string refuses the document; a longer array is cut. */
#define EU_AP_MAX_URI 2048
#define EU_AP_MAX_NAME 1024        /* display names, field names, usernames */
#define EU_AP_MAX_TEXT (64 * 1024) /* summaries, field values, spoilers */
#define EU_AP_MAX_KEY (16 * 1024)  /* publicKeyPem */
#define EU_AP_MAX_FIELDS 16
#define EU_AP_MAX_ALIASES 16
#define EU_AP_MAX_TAGS 64 /* of each kind: mentions, hashtags */
#define EU_AP_MAX_ATTACHMENTS 16
#define EU_AP_MAX_POLL_OPTIONS 64
#define EU_AP_MAX_RECIPIENTS 1024 /* to + cc entries looked at */

#define EU_AP_PUBLIC "https://www.w3.org/ns/activitystreams#Public"

/* statuses.visibility */
enum eu_ap_visibility {
    EU_AP_PUBLIC_VIS = 0,
    EU_AP_UNLISTED = 1,
    EU_AP_PRIVATE = 2,
    EU_AP_DIRECT = 3,
};

struct eu_ap_field {
    const char *name;  /* plain text */
    const char *value; /* sanitized HTML */
};

/* A custom emoji a tag names: {"type": "Emoji", "name": ":x:", "icon"}. */
struct eu_ap_emoji {
    const char *shortcode; /* without the colons: [a-zA-Z0-9_]{2,128} */
    const char *url;       /* icon.url, an http(s) URL */
    const char *uri;       /* its id, or NULL */
};

struct eu_ap_actor {
    const char *id, *type;    /* type: Person, Service, Application, Group, Organization */
    const char *domain;       /* the id's host, lower case (accounts.domain) */
    const char *username;     /* preferredUsername */
    const char *display_name; /* name, "" when absent */
    const char *note;         /* summary, sanitized; "" when absent */
    const char *url;          /* profile page; NULL when absent */
    const char *inbox, *shared_inbox, *outbox, *followers, *following, *featured;
    const char *key_id, *public_key_pem; /* NULL when the actor has no key */
    const char *avatar_url, *header_url; /* icon/image */
    const char *published;               /* ISO 8601 or NULL */
    const char *moved_to;                /* movedTo or NULL */
    bool locked, bot, discoverable, indexable;
    struct eu_ap_field *fields;
    size_t n_fields;
    const char **also_known_as;
    size_t n_also_known_as;
    struct eu_ap_emoji *emojis; /* custom emoji of its tag, at most EU_AP_MAX_TAGS */
    size_t n_emojis;
};

struct eu_ap_mention {
    const char *href; /* the mentioned actor's id */
    const char *name; /* "@user@host" as written, or NULL */
};

struct eu_ap_attachment {
    const char *type;                               /* Document, Image, Video, Audio */
    const char *url, *media_type, *name, *blurhash; /* url always set */
    int width, height;                              /* 0 when absent */
    double focus_x, focus_y;                        /* focalPoint, -1..1; 0 when absent */
};

struct eu_ap_poll_option {
    const char *name;
    int64_t votes; /* replies.totalItems, 0 when absent */
};

struct eu_ap_note {
    const char *id, *type; /* Note, Question, Article, Page, Image, Video, Audio, Event */
    const char *attributed_to;
    const char *in_reply_to;         /* NULL when not a reply */
    const char *published, *updated; /* ISO 8601 or NULL */
    const char *url;                 /* NULL when absent */
    const char *content;             /* sanitized HTML ("" when none) */
    const char *spoiler_text;        /* summary as plain text, "" when none */
    const char *language;            /* from contentMap, or NULL */
    bool sensitive;
    enum eu_ap_visibility visibility;
    struct eu_ap_mention *mentions;
    size_t n_mentions;
    const char **tags; /* hashtag names without '#' */
    size_t n_tags;
    struct eu_ap_emoji *emojis; /* custom emoji of its tag, at most EU_AP_MAX_TAGS */
    size_t n_emojis;
    struct eu_ap_attachment *attachments;
    size_t n_attachments;
    /* Question only: n_options > 0. */
    struct eu_ap_poll_option *options;
    size_t n_options;
    bool multiple;        /* anyOf */
    const char *end_time; /* endTime or closed (a time), or NULL */
    bool closed;          /* closed was given */
    int64_t voters_count; /* votersCount, -1 when absent */
};

/*
 * Reads an actor document. expected_host (may be NULL) is the host the
 * document was fetched from or the activity came from: the id must be on
 * it. key_id (may be NULL) picks which of several publicKey entries to
 * keep (else the first); a key's owner must be the actor. Returns 0 and
 * fills out (allocated in a), or -1 with err (status 422 and a message).
 */
int eu_ap_actor_parse(struct eu_arena *a, struct json_t *doc, const char *expected_host,
                      const char *key_id, struct eu_ap_actor *out, struct eu_error *err);

/* Whether type is one eu_ap_note_parse() reads (NULL: no). */
bool eu_ap_is_note_type(const char *type);

/*
 * Reads a Note, Question, or an object Mastodon converts (Article, Page,
 * Image, Video, Audio, Event). expected_host as above.
 * followers_url (may be NULL) is the author's followers collection, used
 * for the visibility as Mastodon derives it: Public in to -> public,
 * Public in cc -> unlisted, the followers collection in to or cc ->
 * private, else direct (without followers_url, a collection whose URI ends
 * in "/followers" counts). language (may be NULL) is preferred when
 * contentMap has it. A converted object becomes its name in bold, its
 * summary and a link to its url, as Mastodon shows them; an Image, Video or
 * Audio without attachments gets the first file of each kind its url list
 * names. Returns 0 and
 * fills out (allocated in a), or -1 with err.
 */
int eu_ap_note_parse(struct eu_arena *a, struct json_t *doc, const char *expected_host,
                     const char *followers_url, const char *language, struct eu_ap_note *out,
                     struct eu_error *err);

/*
 * The lower-cased host of an http(s) URI (port included when it has one),
 * allocated in a, or NULL when uri is not an absolute http(s) URI.
 */
const char *eu_ap_uri_host(struct eu_arena *a, const char *uri);

/* ------------------------------------------------------------ storing */

/*
 * id is the stored row's id as decimal text (borrowed; valid during the
 * callback), or NULL when nothing was stored (see each function); status
 * as for eu_db_result_cb (EU_DB_OK when the statement ran).
 */
typedef void (*eu_ingest_stored_cb)(const char *id, int status, void *arg);

/*
 * Inserts or updates the remote account with actor->id as its uri
 * (domain, username and every address from the document, fields as jsonb,
 * bot for Service and Application actors, last_fetched_at now). A local
 * account is never overwritten: id is NULL then. conn is the tenant's.
 */
void eu_ingest_account_upsert(struct eu_db_conn *conn, const struct eu_ap_actor *actor,
                              eu_ingest_stored_cb cb, void *arg);

/*
 * Inserts the remote status note->id by account_id (its author's row, from
 * eu_ingest_account_upsert()), or updates it when it exists, belongs to
 * that author and note->updated is newer than its last edit (the old
 * version goes to status_edits). Its parent is found by URI (or, for a
 * reply to a local status, by base_url + "/users/NAME/statuses/ID");
 * an unknown parent's URI is kept in in_reply_to_uri and resolved when the
 * parent arrives. Mentions become rows for the accounts whose uri is a
 * mention's href and for local accounts named by base_url + "/users/NAME"
 * or "/@NAME"; hashtags become statuses_tags. id is NULL when nothing
 * changed (deleted before, someone else's, or a stale update).
 */
void eu_ingest_status_store(struct eu_db_conn *conn, const struct eu_ap_note *note,
                            const char *account_id, const char *base_url, eu_ingest_stored_cb cb,
                            void *arg);

/*
 * Marks the status with uri deleted when its author's account has uri
 * actor_uri (boosts of it go too, as a local delete does). id is the
 * status's id, or NULL when there was none to delete.
 */
void eu_ingest_status_delete(struct eu_db_conn *conn, const char *uri, const char *actor_uri,
                             eu_ingest_stored_cb cb, void *arg);

#endif
