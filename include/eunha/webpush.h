/*
 * Web Push message encryption and VAPID signing (src/outbound/webpush.c),
 * with OpenSSL alone: what a push to a browser's or phone's push service
 * needs, knowing nothing of notifications or the database.
 *
 *   - RFC 8291 "aes128gcm" (a subscription with standard true): ECDH of a
 *     fresh P-256 key with the subscriber's p256dh, HKDF with its auth
 *     secret, one RFC 8188 record whose header carries salt and key.
 *   - The older draft "aesgcm" (standard false, what Mastodon sends by
 *     default): the same ECDH, the draft's HKDF labels and two-byte
 *     padding prefix, salt and key in the Encryption and Crypto-Key
 *     headers.
 *   - VAPID (RFC 8292): an ES256 JWT for the push service's origin, sent as
 *     "Authorization: vapid t=JWT, k=KEY" with aes128gcm and, as Mastodon
 *     does with aesgcm, "Authorization: WebPush JWT" plus
 *     "p256ecdsa=KEY" in Crypto-Key.
 *
 * Every function is pure CPU work, safe on any thread, and keeps no state.
 */
#ifndef EUNHA_WEBPUSH_H
#define EUNHA_WEBPUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Base64url without padding of n bytes; malloc'd for the caller to free(),
 * or NULL when out of memory. */
char *eu_webpush_b64url(const unsigned char *in, size_t n);
/* Decodes base64url (or standard base64; padding optional) into out, at
 * most outmax bytes. Returns the byte count, or -1 when in is not base64
 * or does not fit. */
long eu_webpush_b64url_decode(const char *in, unsigned char *out, size_t outmax);

/*
 * Whether p256dh (base64url of an uncompressed P-256 point, 65 bytes) is a
 * point on the curve and auth (base64url) is 16 bytes: what a subscription
 * must carry for its messages to be decryptable.
 */
bool eu_webpush_keys_valid(const char *p256dh, const char *auth);

/*
 * Generates a VAPID key pair: *priv_pem a PKCS#8 PEM private key and
 * *pub_b64 the public key as base64url of its uncompressed point (what
 * clients get as vapid_key / server_key). Both malloc'd for the caller to
 * free(). Returns 0, or -1 with both NULL.
 */
int eu_webpush_vapid_generate(char **priv_pem, char **pub_b64);

enum eu_webpush_encoding {
    EU_WEBPUSH_AES128GCM, /* RFC 8291 */
    EU_WEBPUSH_AESGCM,    /* draft-ietf-webpush-encryption-04 */
};

/* Everything of one push request but the URL: its body and headers. */
struct eu_webpush_msg {
    unsigned char *body;
    size_t body_len;
    /* "Name: value" lines, NULL-terminated: Content-Type, Content-Encoding,
     * TTL, Urgency, Authorization and, for aesgcm, Encryption and
     * Crypto-Key. */
    char *headers[9];
};

/* What a message is for. */
struct eu_webpush_target {
    const char *endpoint; /* the push service URL; the JWT's audience is its origin */
    const char *p256dh;   /* the subscription's keys, base64url */
    const char *auth;
    enum eu_webpush_encoding encoding;
    const char *vapid_private_pem; /* the tenant's VAPID key */
    const char *vapid_public;      /* its public half, base64url */
    const char *subject;           /* the JWT's sub: "mailto:..." or an https URL */
    int64_t now;                   /* seconds since the epoch; the JWT expires 12 hours on */
    int ttl;                       /* seconds, for the TTL header */
    const char *urgency;           /* "normal", ... */
};

/*
 * Encrypts payload (len bytes, at most 3,993 so that it fits one 4,096-byte
 * record) for t and signs the request. Fills *out, which the caller clears
 * with eu_webpush_msg_clear(). Returns 0, or -1 (out left cleared) for bad
 * keys, an endpoint without an origin, or a payload too long.
 */
int eu_webpush_build(const struct eu_webpush_target *t, const unsigned char *payload, size_t len,
                     struct eu_webpush_msg *out);
void eu_webpush_msg_clear(struct eu_webpush_msg *m);

/*
 * The encryption alone with the sender's key pair and salt given, for
 * tests against published vectors (RFC 8291 Appendix A). as_priv is the
 * 32-byte private scalar and as_pub its 65-byte point. Writes a malloc'd
 * body (for aes128gcm, header included; for aesgcm the bare record) to
 * *body, *body_len. Returns 0 or -1.
 */
int eu_webpush_encrypt_with(enum eu_webpush_encoding enc, const char *p256dh, const char *auth,
                            const unsigned char *payload, size_t len, const unsigned char salt[16],
                            const unsigned char as_priv[32], const unsigned char as_pub[65],
                            unsigned char **body, size_t *body_len);

/*
 * A VAPID JWT (header.claims.signature) for audience (a URL origin,
 * "https://push.example") expiring at exp, signed with the PEM key.
 * malloc'd; NULL on failure.
 */
char *eu_webpush_vapid_jwt(const char *vapid_private_pem, const char *audience, int64_t exp,
                           const char *subject);

#endif
