/*
 * HTTP signatures, both forms the fediverse uses: draft-cavage-http-signatures
 * (the `Signature:` header Mastodon has sent since 2018, with `Digest:`) and
 * RFC 9421 HTTP Message Signatures (`Signature-Input:` and `Signature:`, with
 * RFC 9530 `Content-Digest:`), signed and checked with RSA keys as Mastodon
 * does.
 *
 * Everything here is a pure function of its arguments: no loop, no database,
 * no global state, so it may run on any thread. Cost decides where: an RSA
 * signature with a 2048-bit key takes 0.3 to 1 ms (`openssl speed rsa2048`:
 * 0.28 ms on the 2-core test machine), so signing runs on the CPU pool
 * (include/eunha/cpupool.h), never on the loop; verifying one (public
 * exponent 65537) takes 16 to 30 microseconds and may run on the loop.
 * Parsing a PEM key takes tens of microseconds: callers that verify often
 * keep parsed keys (eu_httpsig_public_key_parse()).
 *
 * Verifying is two steps so the caller can find the key in between:
 * eu_httpsig_parse() reads the headers, checks that the signature covers
 * what it must, that its time is fresh and that the body matches its digest,
 * and builds the string that was signed; the caller then looks up (or
 * fetches) the key named by eu_httpsig_key_id() and calls eu_httpsig_verify().
 */
#ifndef EUNHA_HTTPSIG_H
#define EUNHA_HTTPSIG_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* OpenSSL's EVP_PKEY, forward-declared so its headers stay out of ours. */
struct evp_pkey_st;

/* Why a signature was refused (or EU_HTTPSIG_OK). */
enum eu_httpsig_result {
    EU_HTTPSIG_OK = 0,
    EU_HTTPSIG_NONE,            /* the request carries no signature */
    EU_HTTPSIG_MALFORMED,       /* a signature header does not parse, or is too long */
    EU_HTTPSIG_UNSUPPORTED,     /* an algorithm or component this code does not do */
    EU_HTTPSIG_NOT_COVERED,     /* the signature leaves out what it must cover */
    EU_HTTPSIG_MISSING_HEADER,  /* a covered header is not in the request */
    EU_HTTPSIG_EXPIRED,         /* Date / created / expires outside the window */
    EU_HTTPSIG_DIGEST_MISMATCH, /* the body does not match its Digest / Content-Digest */
    EU_HTTPSIG_BAD_KEY,         /* the key is not a usable RSA public key */
    EU_HTTPSIG_BAD_SIGNATURE,   /* the signature does not verify with the key */
};

/* A short lower-case phrase for logs and error bodies ("signature expired"). */
const char *eu_httpsig_result_str(enum eu_httpsig_result r);

/* How long a signature's time may lie in the past (Date, created): Mastodon
 * refuses older ones too. */
#define EU_HTTPSIG_MAX_AGE_S (12 * 60 * 60)
/* How far a created time may lie in the future: clocks disagree a little. */
#define EU_HTTPSIG_MAX_SKEW_S 60
/* Longest signature header read (Signature, Signature-Input, Authorization). */
#define EU_HTTPSIG_MAX_HEADER 8192

/* ------------------------------------------------------------ digests */

/*
 * The draft-cavage `Digest` value of body ("SHA-256=<base64>"), or the RFC
 * 9530 `Content-Digest` value ("sha-256=:<base64>:"). body may be NULL when
 * len is 0. Returns a malloc'd string the caller frees.
 */
char *eu_httpsig_digest(const void *body, size_t len);
char *eu_httpsig_content_digest(const void *body, size_t len);

/*
 * Whether a received `Digest` value (draft-cavage; a comma-separated list of
 * algorithm=base64, SHA-256 and SHA-512 understood) or `Content-Digest`
 * value (an RFC 8941 dictionary, sha-256 and sha-512 understood) matches
 * body: EU_HTTPSIG_OK when every understood entry matches and there is at
 * least one, EU_HTTPSIG_DIGEST_MISMATCH when one differs,
 * EU_HTTPSIG_UNSUPPORTED when none is understood, EU_HTTPSIG_MALFORMED when
 * the value does not parse.
 */
enum eu_httpsig_result eu_httpsig_digest_check(const char *value, const void *body, size_t len);
enum eu_httpsig_result eu_httpsig_content_digest_check(const char *value, const void *body,
                                                       size_t len);

/* ------------------------------------------------------------ signing */

/* A header: name and value. */
struct eu_httpsig_header {
    const char *name;
    const char *value;
};

/* What eu_httpsig_sign_*() asks the caller to send: Host (as signed),
 * Date, the digest header when there is a body, and the signature
 * header(s). Names are static strings; values are malloc'd and freed by
 * eu_httpsig_signed_release(). */
#define EU_HTTPSIG_SIGNED_MAX 5
struct eu_httpsig_signed {
    int n;
    struct eu_httpsig_header headers[EU_HTTPSIG_SIGNED_MAX];
};

/* What to sign. */
struct eu_httpsig_sign_args {
    const char *method; /* "GET", "POST" */
    const char *url;    /* http(s)://host[:port]/path?query, as it will be requested */
    const void *body;   /* NULL: no body (a GET) */
    size_t body_len;
    const char *key_id;      /* the actor's key id, e.g. https://host/users/alice#main-key */
    const char *key_pem;     /* the actor's private key (PKCS#8 or PKCS#1 PEM) ... */
    struct evp_pkey_st *key; /* ... or the key already parsed (used when not NULL) */
    time_t now;              /* the signature's time: Date, created */
    /* The body's digest header value when the caller has it already (one
     * activity goes to many inboxes with one body): "SHA-256=..." for
     * draft-cavage, "sha-256=:...:" for RFC 9421; NULL: computed here. */
    const char *digest;
};

/*
 * Signs a request the draft-cavage way Mastodon does: rsa-sha256
 * (RSASSA-PKCS1-v1_5 with SHA-256) over "(request-target) host date" and,
 * with a body, "digest"; the result holds Host, Date, Digest (with a body)
 * and Signature. Runs on a CPU pool thread (an RSA signature). Returns 0 and
 * fills *out (release it with eu_httpsig_signed_release()), or -1 with *out
 * empty when the URL, key id or key is unusable.
 */
int eu_httpsig_sign_cavage(const struct eu_httpsig_sign_args *a, struct eu_httpsig_signed *out);

/*
 * Signs a request as RFC 9421 with the parameters Mastodon's implementation
 * reads: label sig1 over ("@method" "@target-uri") and, with a body,
 * "content-digest"; parameters created, keyid and alg="rsa-v1_5-sha256". The
 * result holds Host, Date, Content-Digest (with a body), Signature-Input and
 * Signature. Same contract as eu_httpsig_sign_cavage().
 */
int eu_httpsig_sign_rfc9421(const struct eu_httpsig_sign_args *a, struct eu_httpsig_signed *out);

/*
 * Reads an RSA private key (PKCS#8 or PKCS#1 PEM). OpenSSL 3's decoders make
 * this cost more than the signature itself, so a signer that signs again
 * and again keeps the key (eu_httpsig_sign_args.key). CPU work: runs on the
 * CPU pool. Returns a key the caller frees with EVP_PKEY_free(), or NULL.
 */
struct evp_pkey_st *eu_httpsig_private_key_parse(const char *pem);

/* Frees the values in s and empties it. */
void eu_httpsig_signed_release(struct eu_httpsig_signed *s);

/* The value of header name (case-insensitive) in s, or NULL. */
const char *eu_httpsig_signed_get(const struct eu_httpsig_signed *s, const char *name);

/* ------------------------------------------------------------ verifying */

/*
 * A request as received. Everything is borrowed and must outlive the
 * eu_httpsig_parse() call (the parsed signature keeps copies of what it
 * needs).
 */
struct eu_httpsig_request {
    const char *method;    /* as in the request line, "POST" */
    const char *scheme;    /* "https" (what @target-uri and @scheme use) */
    const char *authority; /* the Host header as received: host[:port] */
    const char *target;    /* path?query exactly as in the request line */
    /* Every header line as received, in order; a name may repeat (its
     * values are joined with ", " as both drafts say). Names compare
     * case-insensitively. */
    const struct eu_httpsig_header *headers;
    size_t nheaders;
    const void *body; /* NULL when the request had none */
    size_t body_len;
};

/* Which form a signature came in. */
enum eu_httpsig_form {
    EU_HTTPSIG_CAVAGE,
    EU_HTTPSIG_RFC9421,
};

/* A parsed, checked signature waiting for its key. */
struct eu_httpsig;

/*
 * Reads the request's signature and checks everything but the cryptography:
 * with Signature-Input present, RFC 9421 (the first label that also has a
 * Signature; it must cover "@method" and "@target-uri", or "@path" with
 * "@authority" or "host"; its created must be at most EU_HTTPSIG_MAX_AGE_S
 * old and at most EU_HTTPSIG_MAX_SKEW_S ahead, expires not past); otherwise
 * draft-cavage from Signature (or Authorization: Signature ...), which must
 * cover "(request-target)" and "host" and "date" (or, for hs2019,
 * "(created)"), with a Date within EU_HTTPSIG_MAX_AGE_S of now either way.
 * A request with a body, or a POST/PUT/PATCH, must have its digest header
 * covered, and a covered digest must match the body. Header parameters
 * this code does not know are ignored; a repeated or missing required one
 * is MALFORMED.
 *
 * Returns EU_HTTPSIG_OK and sets *out (free with eu_httpsig_free()), or the
 * reason with *out NULL. now is the time to judge freshness by.
 */
enum eu_httpsig_result eu_httpsig_parse(const struct eu_httpsig_request *req, time_t now,
                                        struct eu_httpsig **out);

/* The key id the signature names (keyId / keyid); borrowed from sig. */
const char *eu_httpsig_key_id(const struct eu_httpsig *sig);
/* Which form sig came in. */
enum eu_httpsig_form eu_httpsig_form(const struct eu_httpsig *sig);
/* The string that was signed (for tests and debugging); borrowed. */
const char *eu_httpsig_base(const struct eu_httpsig *sig);

/*
 * Checks sig with key (an RSA public key): EU_HTTPSIG_OK,
 * EU_HTTPSIG_BAD_SIGNATURE or EU_HTTPSIG_BAD_KEY (not RSA, or under 1024 or
 * over 8192 bits). A draft-cavage signature that fails over the path with
 * its query is tried over the path alone, as Mastodon does for senders that
 * left the query out. key is borrowed. Safe on the loop (see above).
 */
enum eu_httpsig_result eu_httpsig_verify(const struct eu_httpsig *sig, struct evp_pkey_st *key);
/* The same with the key as PEM ("PUBLIC KEY" or "RSA PUBLIC KEY"). */
enum eu_httpsig_result eu_httpsig_verify_pem(const struct eu_httpsig *sig, const char *pem);

void eu_httpsig_free(struct eu_httpsig *sig);

/*
 * Parses a PEM public key (SubjectPublicKeyInfo "PUBLIC KEY" or PKCS#1 "RSA
 * PUBLIC KEY"), for callers that keep keys. Returns a key the caller frees
 * with EVP_PKEY_free(), or NULL.
 */
struct evp_pkey_st *eu_httpsig_public_key_parse(const char *pem);

/*
 * Parses an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT", RFC 7231's only
 * form a sender may produce). Returns 0 and sets *t, or -1.
 */
int eu_httpsig_date_parse(const char *s, time_t *t);
/* Formats t as an IMF-fixdate into buf (at least 30 bytes). */
void eu_httpsig_date_format(time_t t, char buf[30]);

#endif
