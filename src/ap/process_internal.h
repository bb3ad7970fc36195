/*
 * Shared by the files of inbox processing (process.c: the job, the actor,
 * dispatch and sending; process_follow.c: the social graph; process_status.c:
 * statuses and what points at them) and nobody else.
 *
 * One job is one struct eu_proc, alive until eu_proc_finish(). Every step runs a
 * statement on the job's connection and continues in a eu_proc_step_cb that is
 * only called on success: a database failure ends the job with an error,
 * so it is retried, and every step is written to be harmless when it runs
 * again.
 *
 * A step that waits on a remote server (eu_proc_fetch_signed,
 * eu_proc_resolve_actor) first detaches the job from its tenant's turn
 * (eu_job_detach): a slow host must not hold the turn, the turn's
 * connection or any connection while it answers. The next statement takes
 * a connection of the tenant's pool again (p->conn), held to the end.
 */
#ifndef EUNHA_AP_PROCESS_INTERNAL_H
#define EUNHA_AP_PROCESS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eunha/apingest.h"
#include "eunha/apresolve.h"
#include "eunha/error.h"

struct eu_app;
struct eu_arena;
struct eu_db_conn;
struct eu_job;
struct eu_sql;
struct eu_tenant;
struct json_t;
struct pg_result;

/* Local names collected from a note's mentions and addressing. */
#define EU_PROC_MAX_LOCAL_NAMES EU_AP_MAX_TAGS
/* Entries of a Flag's object looked at. */
#define EU_PROC_MAX_FLAG_OBJECTS 100
/* Jobs of one tenant waiting on one remote host at once (fetches of
 * objects and actors named by activities). A flood of activities naming a
 * slow host takes this many, not all the tenant's detached jobs; the rest
 * wait in the table (EU_PROC_DEFER_S) instead of in memory. */
#define EU_PROC_MAX_WAITS_PER_HOST 4
/* A job that finds no room to wait (the per-host cap above, or the queue's
 * cap of detached jobs) runs again this many seconds later. */
#define EU_PROC_DEFER_S 30

struct eu_proc {
    struct eu_job *job;
    struct eu_app *app;
    struct eu_tenant *t;
    struct eu_arena *arena; /* everything below that is allocated; freed at the end */
    const char *base;       /* scheme://domain of the tenant */

    /* The activity (borrowed from the job's payload). */
    struct json_t *activity;
    const char *type, *id;
    struct json_t *object;   /* the object as given: a string or an object */
    const char *object_id;   /* its id, or NULL */
    const char *object_type; /* its type when embedded, or NULL */

    /* The actor's row. */
    const char *actor_uri, *actor_id, *actor_host;
    const char *actor_followers, *actor_inbox, *actor_featured;
    bool actor_suspended;

    /* What the CPU pool parsed (parse_note / parse_actor). */
    struct eu_ap_note note;
    struct eu_ap_actor parsed_actor;
    struct eu_error err;
    int parse_rc;
    void (*parsed)(struct eu_proc *p);

    /* Scratch of the handlers. */
    const char *s1, *s2, *s3;
    int64_t n1;
    struct pg_result *rows; /* a result kept across steps; cleared at the end */
    int row, nrows;

    void (*step)(struct eu_proc *p, struct pg_result *res);
    void (*sent)(struct eu_proc *p);

    /* After the job detached: the tenant's connection it took for its
     * next statements (released at the end), or NULL. */
    struct eu_db_conn *conn;
    /* A statement, or a step, waiting for that connection. */
    const struct eu_sql *wait_sql;
    int wait_n;
    const char **wait_params;
    void (*wait_then)(struct eu_proc *p);
    /* The remote wait in progress: the host it counts against, its
     * caller's callback. */
    char wait_host[300];
    eu_ap_fetch_cb fetched;
    eu_ap_actor_cb resolved;
};

typedef void (*eu_proc_step_cb)(struct eu_proc *p, struct pg_result *res);

/* process.c */

/* Ends the job: error NULL is done, otherwise it is retried. Frees p. */
void eu_proc_finish(struct eu_proc *p, const char *error);
/* Ends a job that is dropped on purpose, logging why at debug level. */
void eu_proc_skip(struct eu_proc *p, const char *why);
/* Runs statement s ($1 the tenant, then params) on the job's connection;
 * step runs with the result on success, else the job fails. */
void eu_proc_stmt(struct eu_proc *p, const struct eu_sql *s, int n, const char *const *params,
                  eu_proc_step_cb step);
/* The connection p's statements run on now: the turn's, or once the job
 * detached the one it took since (NULL until it takes one). */
struct eu_db_conn *eu_proc_conn(struct eu_proc *p);
/* Calls then(p) once p has a connection (eu_proc_conn() not NULL), taking
 * one from the tenant's pool when the job detached; a pool that cannot
 * give one ends the job with an error (retried). */
void eu_proc_with_conn(struct eu_proc *p, void (*then)(struct eu_proc *p));
/*
 * eu_ap_fetch_signed() of url, and eu_ap_resolve_actor() (refresh:
 * eu_ap_resolve_actor_refresh()) of uri, for a job: the job is detached
 * from its tenant's turn first and gives back any connection it holds, so
 * the wait holds neither. Past EU_PROC_MAX_WAITS_PER_HOST waits of the
 * tenant on that host, or when the queue will not detach another job, the
 * job is put off (EU_PROC_DEFER_S), p is freed and cb never runs.
 */
void eu_proc_fetch_signed(struct eu_proc *p, const char *url, eu_ap_fetch_cb cb);
void eu_proc_resolve_actor(struct eu_proc *p, const char *uri, bool refresh, eu_ap_actor_cb cb);
/* Keeps a copy of res in p->rows (rows counted in p->nrows, p->row the
 * cursor) for the following steps; freed with p. */
void eu_proc_keep(struct eu_proc *p, struct pg_result *res);
/* The id of a JSON value that is a string or an object with a string "id";
 * NULL otherwise. Borrowed from v. */
const char *eu_proc_json_id(struct json_t *v);
/* The NAME of BASE/users/NAME or BASE/@NAME, allocated in p's arena, or NULL. */
const char *eu_proc_local_name(struct eu_proc *p, const char *uri);
/* The ID of BASE/users/NAME/statuses/ID, in p's arena, or NULL. */
const char *eu_proc_local_status_id(struct eu_proc *p, const char *uri);
/* The URI of local account NAME (BASE/users/NAME), in p's arena. */
const char *eu_proc_local_uri(struct eu_proc *p, const char *name);
/* Parses p->object as a note, or as an actor, on the CPU pool; then calls
 * then(p) on the loop with p->parse_rc (0: p->note / p->parsed_actor set). */
void eu_proc_parse_note(struct eu_proc *p, void (*then)(struct eu_proc *p));
void eu_proc_parse_actor(struct eu_proc *p, void (*then)(struct eu_proc *p));

/*
 * Queues activity (a new reference, taken) for delivery to inbox, signed
 * by local account actor_id. dedupe (may be NULL) makes a second send of
 * the same thing while the first waits a no-op. Then calls then(p).
 *
 * Until the delivery helper's eu_ap_deliver_to_inbox() is merged, this
 * writes the "ap_deliver" job row itself; repoint it there.
 */
void eu_ap_process_send(struct eu_proc *p, const char *inbox, struct json_t *activity,
                        const char *actor_id, const char *dedupe, void (*then)(struct eu_proc *p));

/* process_follow.c */
void eu_proc_follow(struct eu_proc *p);
void eu_proc_accept(struct eu_proc *p);
void eu_proc_reject(struct eu_proc *p);
void eu_proc_undo(struct eu_proc *p);
void eu_proc_block(struct eu_proc *p);
void eu_proc_move(struct eu_proc *p);
void eu_proc_delete_actor(struct eu_proc *p);

/* process_status.c */
void eu_proc_create(struct eu_proc *p);
void eu_proc_update(struct eu_proc *p);
void eu_proc_delete(struct eu_proc *p);
void eu_proc_like(struct eu_proc *p);
void eu_proc_announce(struct eu_proc *p);
void eu_proc_flag(struct eu_proc *p);
void eu_proc_featured(struct eu_proc *p, bool add);
/* process_featured.c: Add or Remove of a Hashtag to or from the actor's
 * featured hashtags. */
void eu_proc_featured_tag(struct eu_proc *p, bool add);

/* process_quote.c: a QuoteRequest for a local post; the Accept or
 * Reject of ours (eu_proc_is_quote_answer() tells them from a Follow's);
 * the Delete of an authorization (eu_proc_is_quote_revoke()); the quote
 * of a stored Note, then then(p); whether a Note quotes a local post
 * (which makes it worth storing). */
void eu_proc_quote_request(struct eu_proc *p);
bool eu_proc_is_quote_answer(struct eu_proc *p);
void eu_proc_quote_answer(struct eu_proc *p, bool accepted);
bool eu_proc_is_quote_revoke(struct eu_proc *p);
void eu_proc_quote_revoke(struct eu_proc *p);
void eu_proc_quote_note(struct eu_proc *p, const char *status_id, void (*then)(struct eu_proc *p));
/* eu_proc_quote_note() for an Update's Note, which also removes the quote
 * of an edit that quotes nothing any more (Mastodon 4.5's update_quote!). */
void eu_proc_quote_update(struct eu_proc *p, const char *status_id,
                          void (*then)(struct eu_proc *p));
bool eu_proc_quotes_local(struct eu_proc *p);

/* process_poll.c */
/* Stores the poll of p->note (parsed; a Question of the actor) for its
 * stored status status_id, counts included; then then(p). A note without
 * options goes straight to then(p). */
void eu_proc_poll_store(struct eu_proc *p, const char *status_id, void (*then)(struct eu_proc *p));
/* Whether p's Create is a vote on a local poll (a Note with a name, no
 * content, replying to a local status), which eu_proc_poll_vote() takes. */
bool eu_proc_is_vote(struct eu_proc *p);
void eu_proc_poll_vote(struct eu_proc *p);

#endif
