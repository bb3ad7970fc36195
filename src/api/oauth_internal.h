/*
 * Shared by the OAuth files: oauth.c (sign-in and consent pages, browser
 * sessions, and the helpers below), oauth_apps.c (app registration),
 * oauth_token.c (token and revocation endpoints) and oauth_signup.c
 * (account registration). Nobody else includes it.
 */
#ifndef EUNHA_API_OAUTH_INTERNAL_H
#define EUNHA_API_OAUTH_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "eunha/cpupool.h"
#include "eunha/http.h"
#include "eunha/ratelimit.h"

struct eu_arena;
struct eu_req;
struct json_t;
struct pg_result;

#define EU_OAUTH_OOB_URI "urn:ietf:wg:oauth:2.0:oob"
/* argon2id at the cost src/admin/accounts.c uses, so both hash alike. */
#define EU_OAUTH_PWHASH_OPS 2
#define EU_OAUTH_PWHASH_MEM (19u * 1024u * 1024u)

/* Doorkeeper's descriptions of its errors. */
#define EU_OAUTH_INVALID_GRANT                                                                     \
    "The provided authorization grant is invalid, expired, revoked, does not match the "           \
    "redirection URI used in the authorization request, or was issued to another client."
#define EU_OAUTH_INVALID_CLIENT                                                                    \
    "Client authentication failed due to unknown client, no client authentication included, "      \
    "or unsupported authentication method."
#define EU_OAUTH_INVALID_SCOPE "The requested scope is invalid, unknown, or malformed."

/* The parameters of an authorization request, carried from page to page in
 * hidden fields. */
struct eu_oauth_authz {
    const char *client_id, *redirect_uri, *response_type, *scope, *state;
    const char *code_challenge, *code_challenge_method;
    bool force_login;
};

/* Everything a sign-in / consent request learns from the database. */
struct eu_oauth_flow {
    struct eu_req *req;
    struct json_t *params;
    struct eu_oauth_authz a;
    int64_t app_id;
    const char *app_name, *app_scopes, *app_redirects;
    bool have_session;
    int64_t user_id; /* 0: the session has not signed in */
    const char *csrf, *username;
    /* sign-in */
    const char *login;
    char *password; /* malloc'd; wiped and freed after hashing */
    char *stored_hash;
    const char *stored;          /* the user's password hash (arena), NULL for nobody */
    const char *gate_client;     /* the address holding a pwgate slot (arena) */
    eu_cpupool_done_cb verified; /* runs after the check, once the slot is given back */
    eu_req_rows_cb found;        /* eu_oauth_find_user()'s cb, and its arg */
    void *found_arg;
    bool approved, suspended;
    int verify_rc;
    /* the sign-in page without an OAuth client (/auth/sign_in), and the
     * local path it goes back to */
    bool standalone;
    const char *return_to;
    /* two-factor sign-in: the user needs a code (otp_required), the
     * browser is between its password and its code (otp_pending) */
    bool otp_required, otp_pending;
    const char *otp_secret;
    int64_t otp_consumed; /* -1: no step consumed yet */
    /* a failed sign-in, answered once the session has been rotated */
    int fail_status;
    const char *fail_message;
};

/* Queues the mail with the confirmation link of token to `to`: a sign-up's
 * (change false) or a new address's (oauth_mail.c). */
void eu_oauth_mail_confirmation(struct eu_req *req, const char *to, const char *token, bool change);

/* Route handlers: oauth_apps.c, oauth_token.c, oauth_signup.c. */
void eu_oauth_apps_create(struct eu_req *req);
void eu_oauth_apps_verify(struct eu_req *req);
void eu_oauth_metadata(struct eu_req *req);
void eu_oauth_token(struct eu_req *req);
void eu_oauth_revoke(struct eu_req *req);
void eu_oauth_register(struct eu_req *req);

/* The sign-up page (oauth_signup.c): GET and POST /auth/sign_up. */
void eu_oauth_sign_up_page(struct eu_req *req);
void eu_oauth_sign_up(struct eu_req *req);

/* The browser's session for a form outside the authorize flow (the
 * sign-up page), as the sign-in form keeps it: cb gets the CSRF token
 * (arena) of the session the cookie names, or, with create, of a new
 * anonymous session whose cookie is set; NULL when there is none. */
typedef void (*eu_oauth_session_cb)(struct eu_req *req, const char *csrf, void *arg);
void eu_oauth_browser_session(struct eu_req *req, bool create, eu_oauth_session_cb cb, void *arg);

/* Percent-encodes s for a query component. Arena-owned. */
const char *eu_oauth_url_encode(struct eu_arena *a, const char *s);
/* Doorkeeper's error body: {"error": code, "error_description": desc}. */
void eu_oauth_reply_error(struct eu_req *req, int status, const char *code, const char *desc);
/* Constant-time equality of two strings of any lengths (compared through
 * their hashes so neither length nor content leaks); false when either is
 * NULL. */
bool eu_oauth_secret_equal(const char *a, const char *b);
/* s, or NULL when s is NULL or empty. */
const char *eu_oauth_str_or_null(const char *s);
/* The client's address (req->remote_ip) when it is an IPv4 or IPv6
 * address, as the IP blocks' statements take it; NULL otherwise. Borrowed
 * from req. */
const char *eu_oauth_client_ip(const struct eu_req *req);
/* raw's scopes (split on spaces and '+'), without duplicates, joined with
 * single spaces; NULL when one is unknown or there is none. Owned by a. */
const char *eu_oauth_scopes_normalize(struct eu_arena *a, const char *raw);
/* Whether every scope in want is granted by app_scopes. */
bool eu_oauth_scopes_within(const char *want, const char *app_scopes);
/* Whether a browser would run or render redirect URI u instead of leaving
 * for it (javascript:, data:, vbscript:, in any case). */
bool eu_oauth_redirect_uri_is_forbidden(const char *u);

/* Counts one sign-in attempt, by the HTML form or the password grant
 * alike, against the client's IP, then calls done as eu_ratelimit_check()
 * does. */
void eu_oauth_count_sign_in(struct eu_req *req, eu_ratelimit_done_cb done, void *arg);
/* Counts one attempt on the account the lookup found (user_id, or 0 and
 * the login as typed) from this client, then calls done likewise. */
void eu_oauth_count_account(struct eu_req *req, int64_t user_id, const char *login,
                            eu_ratelimit_done_cb done, void *arg);
/* After a successful sign-in: this address is the owner's. */
void eu_oauth_remember_address(struct eu_req *req, int64_t user_id);
/* Copies password into f and looks the user of f->login up; cb gets the
 * row (or none). The copy is wiped and freed with the request at the
 * latest. */
void eu_oauth_find_user(struct eu_oauth_flow *f, const char *password, eu_req_rows_cb cb,
                        void *arg);
/* Fills the user part of f from eu_oauth_find_user()'s row at column col
 * (otp_required included); the stored hash goes to *stored (arena), NULL
 * for nobody. */
void eu_oauth_read_user_row(struct eu_oauth_flow *f, const struct pg_result *res, int col,
                            const char **stored);
/* Runs the password check on the CPU pool (stored NULL for an unknown
 * login, hashed anyway) and then done; on a full pool answers 429 or 503
 * itself and done never runs. */
void eu_oauth_verify_password(struct eu_oauth_flow *f, const char *stored, eu_cpupool_done_cb done);
/* Wipes and frees f's password copy and stored hash; idempotent. */
void eu_oauth_flow_free_password(struct eu_oauth_flow *f);
/* return_to if it is a path on this host ("/" then not "/" or "\\",
 * no control characters), else "/". Borrowed or static. */
const char *eu_oauth_local_path(const char *return_to);
/* Answers status (429 or 503) with Retry-After: too many password checks
 * are queued. */
void eu_oauth_reply_cpu_busy(struct eu_req *req, int status);

#endif
