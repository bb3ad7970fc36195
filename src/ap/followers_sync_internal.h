/*
 * Followers collection synchronization (FEP-8fcf), the sending side, as
 * deliver.c uses it: which deliveries carry the Collection-Synchronization
 * header, the statement that lists the followers it digests, and the
 * digest itself. The partial collection the header points at is served by
 * followers_sync.c.
 */
#ifndef EUNHA_AP_FOLLOWERS_SYNC_INTERNAL_H
#define EUNHA_AP_FOLLOWERS_SYNC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

struct json_t;
struct eu_sql;

/* The digest as hex: 64 characters and a NUL. */
#define EU_AP_FOLLOWERS_DIGEST_LEN 65

/*
 * Whether activity goes to the followers of base/users/username and to
 * nobody publicly (Public in neither to nor cc, its own or its object's):
 * Mastodon sends the header with the deliveries of a followers-only
 * status, whose receivers must know who here expects them to hold it.
 */
bool eu_ap_followers_only(struct json_t *activity, const char *base, const char *username);

/*
 * The statement of the URIs of an account's followers on one server: $2
 * the account id, $3 the server's prefix (scheme://host[:port], as the
 * inbox URL starts): one row, the URIs joined by newlines (NULL for none).
 */
const struct eu_sql *eu_ap_followers_sync_uris_stmt(void);

/* The prefix of url that names its server (scheme://host[:port]) into out
 * (size n); false when url is not an absolute http(s) URL or out too small. */
bool eu_ap_url_prefix(const char *url, char *out, size_t n);

/* FEP-8fcf's digest of newline-separated URIs: the XOR of their SHA-256
 * hashes, as lower-case hex (64 zeros for none). uris may be NULL. */
void eu_ap_followers_digest(const char *uris, char out[EU_AP_FOLLOWERS_DIGEST_LEN]);

#endif
