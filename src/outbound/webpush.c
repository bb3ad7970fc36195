/*
 * Web Push encryption (RFC 8291 aes128gcm and the older aesgcm draft) and
 * VAPID signing (RFC 8292), as include/eunha/webpush.h describes. Both
 * encodings share the ECDH of a fresh P-256 key with the subscriber's and
 * differ only in the HKDF labels, the padding and where salt and key
 * travel; the functions below follow the RFC's steps in order so that a
 * reader can hold them against it. HKDF-Expand is never asked for more than
 * 32 bytes here, so it is one HMAC.
 */
#include "eunha/webpush.h"

#include <jansson.h>
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* RFC 8188's record size we announce; one record holds every payload. */
#define RECORD_SIZE 4096
/* The most payload one aes128gcm record holds: the record less the tag and
 * the delimiter byte; the header sits outside the record. */
#define MAX_PAYLOAD (RECORD_SIZE - 16 - 1 - 86)
#define POINT_LEN 65
#define JWT_LIFETIME_S (12 * 3600)
/* A JWT is signed anew once it is this old (it stays valid 11 hours more). */
#define JWT_REUSE_S 3600
#define JWT_CACHE 16

/* ------------------------------------------------------------ algorithms */

/* Fetched once for the process, shared by every thread (OpenSSL's fetched
 * algorithms and a key used only as a template are safe to share); never
 * freed, so they stay reachable to the end. */
static EVP_MD *sha256;
static EVP_CIPHER *aes128gcm;
static EVP_PKEY *p256; /* a P-256 key whose group new keys copy */
static pthread_once_t algs_once = PTHREAD_ONCE_INIT;

static void
algs_init(void)
{
    sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
    aes128gcm = EVP_CIPHER_fetch(NULL, "AES-128-GCM", NULL);
    p256 = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
}

static bool
algs(void)
{
    pthread_once(&algs_once, algs_init);
    return sha256 && aes128gcm && p256;
}

/* A fresh P-256 key pair, made from the template; NULL on failure. */
static EVP_PKEY *
p256_generate(void)
{
    if (!algs())
        return NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, p256, NULL);
    EVP_PKEY *key = NULL;
    if (!ctx || EVP_PKEY_keygen_init(ctx) <= 0 || EVP_PKEY_generate(ctx, &key) <= 0)
        key = NULL;
    EVP_PKEY_CTX_free(ctx);
    return key;
}

/* ------------------------------------------------------------ base64url */

char *
eu_webpush_b64url(const unsigned char *in, size_t n)
{
    char *out = malloc(4 * ((n + 2) / 3) + 1);
    if (!out)
        return NULL;
    int len = EVP_EncodeBlock((unsigned char *)out, in, (int)n);
    while (len > 0 && out[len - 1] == '=')
        len--;
    out[len] = '\0';
    for (int i = 0; i < len; i++)
        out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
    return out;
}

long
eu_webpush_b64url_decode(const char *in, unsigned char *out, size_t outmax)
{
    size_t n = strlen(in);
    while (n > 0 && in[n - 1] == '=')
        n--;
    if (n == 0 || n % 4 == 1 || n > 4096)
        return -1;
    char buf[4100];
    for (size_t i = 0; i < n; i++) {
        char c = in[i];
        if (c == '-')
            c = '+';
        else if (c == '_')
            c = '/';
        else if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                   c == '+' || c == '/'))
            return -1;
        buf[i] = c;
    }
    size_t pad = (4 - n % 4) % 4;
    memset(buf + n, '=', pad);
    unsigned char tmp[3072 + 3];
    int len = EVP_DecodeBlock(tmp, (const unsigned char *)buf, (int)(n + pad));
    if (len < 0)
        return -1;
    len -= (int)pad;
    if ((size_t)len > outmax)
        return -1;
    memcpy(out, tmp, (size_t)len);
    return len;
}

/* ------------------------------------------------------------ keys */

/* A peer's P-256 public key from its point; NULL unless it is on the
 * curve (a point off it would leak bits of our ephemeral key through
 * ECDH). P-256's cofactor is 1, so on the curve is enough. */
static EVP_PKEY *
peer_from(const unsigned char pub[POINT_LEN])
{
    if (!algs())
        return NULL;
    EVP_PKEY *key = EVP_PKEY_new();
    if (!key || EVP_PKEY_copy_parameters(key, p256) != 1 ||
        EVP_PKEY_set1_encoded_public_key(key, pub, POINT_LEN) != 1) {
        EVP_PKEY_free(key);
        return NULL;
    }
    EVP_PKEY_CTX *chk = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
    if (!chk || EVP_PKEY_public_check_quick(chk) != 1) {
        EVP_PKEY_free(key);
        key = NULL;
    }
    EVP_PKEY_CTX_free(chk);
    return key;
}

/* A P-256 key from its raw parts, the point and its private scalar (the
 * tests' fixed keys). NULL when they are not a valid key. */
static EVP_PKEY *
pkey_from(const unsigned char pub[POINT_LEN], const unsigned char *priv32)
{
    OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
    BIGNUM *d = priv32 ? BN_bin2bn(priv32, 32, NULL) : NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    OSSL_PARAM *params = NULL;
    EVP_PKEY *key = NULL;
    if (!bld || !ctx || (priv32 && !d) ||
        !OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) ||
        !OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pub, POINT_LEN) ||
        (d && !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PRIV_KEY, d)))
        goto out;
    params = OSSL_PARAM_BLD_to_param(bld);
    if (!params || EVP_PKEY_fromdata_init(ctx) <= 0 ||
        EVP_PKEY_fromdata(ctx, &key, d ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY, params) <= 0) {
        key = NULL;
        goto out;
    }
    /* fromdata takes any octets; a point off the curve would leak bits of
     * our ephemeral key through ECDH, so check it. */
    EVP_PKEY_CTX *chk = EVP_PKEY_CTX_new_from_pkey(NULL, key, NULL);
    if (!chk || EVP_PKEY_public_check_quick(chk) != 1) {
        EVP_PKEY_free(key);
        key = NULL;
    }
    EVP_PKEY_CTX_free(chk);
out:
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    EVP_PKEY_CTX_free(ctx);
    BN_clear_free(d);
    return key;
}

/* key's uncompressed point into out. 0 or -1. */
static int
point_of(EVP_PKEY *key, unsigned char out[POINT_LEN])
{
    size_t len = 0;
    if (EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, out, POINT_LEN,
                                        &len) != 1 ||
        len != POINT_LEN || out[0] != 0x04)
        return -1;
    return 0;
}

/* The subscription's keys decoded; 0 or -1. */
static int
decode_keys(const char *p256dh, const char *auth, unsigned char ua_pub[POINT_LEN],
            unsigned char secret[16])
{
    if (!p256dh || !auth || eu_webpush_b64url_decode(p256dh, ua_pub, POINT_LEN) != POINT_LEN ||
        ua_pub[0] != 0x04 || eu_webpush_b64url_decode(auth, secret, 16) != 16)
        return -1;
    return 0;
}

bool
eu_webpush_keys_valid(const char *p256dh, const char *auth)
{
    unsigned char pub[POINT_LEN], secret[16];
    if (decode_keys(p256dh, auth, pub, secret) < 0)
        return false;
    EVP_PKEY *k = peer_from(pub);
    EVP_PKEY_free(k);
    return k != NULL;
}

int
eu_webpush_vapid_generate(char **priv_pem, char **pub_b64)
{
    *priv_pem = *pub_b64 = NULL;
    EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    unsigned char pub[POINT_LEN];
    BIO *bio = BIO_new(BIO_s_mem());
    int rc = -1;
    if (!key || !bio || point_of(key, pub) < 0 ||
        !PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL))
        goto out;
    char *data = NULL;
    long len = BIO_get_mem_data(bio, &data);
    if (len <= 0 || !(*priv_pem = malloc((size_t)len + 1)))
        goto out;
    memcpy(*priv_pem, data, (size_t)len);
    (*priv_pem)[len] = '\0';
    if (!(*pub_b64 = eu_webpush_b64url(pub, POINT_LEN))) {
        free(*priv_pem);
        *priv_pem = NULL;
        goto out;
    }
    rc = 0;
out:
    BIO_free(bio);
    EVP_PKEY_free(key);
    return rc;
}

/* ------------------------------------------------------------ HKDF */

/* HMAC-SHA-256 (RFC 2104) over the fetched digest; keys here are at most
 * 32 bytes, within SHA-256's 64-byte block. The caller has called algs(). */
static void
hmac256(const unsigned char *key, size_t keylen, const unsigned char *data, size_t n,
        unsigned char out[32])
{
    unsigned char pad[64], inner[32];
    EVP_MD_CTX *c = EVP_MD_CTX_new();
    memset(pad, 0x36, sizeof pad);
    for (size_t i = 0; i < keylen; i++)
        pad[i] ^= key[i];
    int ok = c && EVP_DigestInit_ex2(c, sha256, NULL) == 1 &&
             EVP_DigestUpdate(c, pad, sizeof pad) == 1 && EVP_DigestUpdate(c, data, n) == 1 &&
             EVP_DigestFinal_ex(c, inner, NULL) == 1;
    memset(pad, 0x5c, sizeof pad);
    for (size_t i = 0; i < keylen; i++)
        pad[i] ^= key[i];
    ok = ok && EVP_DigestInit_ex2(c, sha256, NULL) == 1 &&
         EVP_DigestUpdate(c, pad, sizeof pad) == 1 && EVP_DigestUpdate(c, inner, 32) == 1 &&
         EVP_DigestFinal_ex(c, out, NULL) == 1;
    if (!ok)
        memset(out, 0, 32); /* a wrong key: the push fails to decrypt, visibly */
    EVP_MD_CTX_free(c);
    OPENSSL_cleanse(pad, sizeof pad);
    OPENSSL_cleanse(inner, sizeof inner);
}

/* HKDF-Expand(prk, info, l) for l <= 32: T(1) = HMAC(prk, info || 0x01). */
static void
hkdf_expand(const unsigned char prk[32], const unsigned char *info, size_t infolen,
            unsigned char *out, size_t l)
{
    unsigned char buf[256], t[32];
    memcpy(buf, info, infolen);
    buf[infolen] = 0x01;
    hmac256(prk, 32, buf, infolen + 1, t);
    memcpy(out, t, l);
    OPENSSL_cleanse(t, sizeof t);
}

static int
ecdh(EVP_PKEY *mine, EVP_PKEY *peer, unsigned char out[32])
{
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(mine, NULL);
    size_t len = 32;
    int ok = ctx && EVP_PKEY_derive_init(ctx) > 0 && EVP_PKEY_derive_set_peer(ctx, peer) > 0 &&
             EVP_PKEY_derive(ctx, out, &len) > 0 && len == 32;
    EVP_PKEY_CTX_free(ctx);
    return ok ? 0 : -1;
}

/* AES-128-GCM of in (n bytes) into out, tag appended (n + 16 bytes). */
static int
seal(const unsigned char key[16], const unsigned char nonce[12], const unsigned char *in, size_t n,
     unsigned char *out)
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    int len = 0, fin = 0;
    int ok = c && EVP_EncryptInit_ex2(c, aes128gcm, key, nonce, NULL) == 1 &&
             EVP_EncryptUpdate(c, out, &len, in, (int)n) == 1 &&
             EVP_EncryptFinal_ex(c, out + len, &fin) == 1 &&
             EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, out + len + fin) == 1;
    EVP_CIPHER_CTX_free(c);
    return ok ? 0 : -1;
}

/* ------------------------------------------------------------ encryption */

/* The steps of RFC 8291 section 3.4 (aes128gcm) or of the aesgcm draft,
 * with the sender's key as given. */
static int
encrypt(enum eu_webpush_encoding enc, const unsigned char ua_pub[POINT_LEN],
        const unsigned char secret[16], const unsigned char *payload, size_t len,
        const unsigned char salt[16], EVP_PKEY *as_key, const unsigned char as_pub[POINT_LEN],
        unsigned char **body, size_t *body_len)
{
    *body = NULL;
    if (len > MAX_PAYLOAD)
        return -1;
    EVP_PKEY *peer = peer_from(ua_pub);
    unsigned char shared[32], prk_key[32], ikm[32], prk[32], cek[16], nonce[12];
    unsigned char info[256];
    size_t n = 0;
    int rc = -1;
    if (!peer || ecdh(as_key, peer, shared) < 0)
        goto out;
    hmac256(secret, 16, shared, 32, prk_key);
    if (enc == EU_WEBPUSH_AES128GCM) {
        /* key_info = "WebPush: info" || 0x00 || ua_public || as_public */
        memcpy(info, "WebPush: info", 14);
        memcpy(info + 14, ua_pub, POINT_LEN);
        memcpy(info + 14 + POINT_LEN, as_pub, POINT_LEN);
        hkdf_expand(prk_key, info, 14 + 2 * POINT_LEN, ikm, 32);
        hmac256(salt, 16, ikm, 32, prk);
        hkdf_expand(prk, (const unsigned char *)"Content-Encoding: aes128gcm", 28, cek, 16);
        hkdf_expand(prk, (const unsigned char *)"Content-Encoding: nonce", 24, nonce, 12);
        /* header (salt, rs, idlen, keyid), then the one record: the
         * payload and the last-record delimiter 0x02, sealed. */
        size_t hdr = 16 + 4 + 1 + POINT_LEN;
        unsigned char *plain = malloc(len + 1);
        *body = malloc(hdr + len + 1 + 16);
        if (!plain || !*body) {
            free(plain);
            goto out;
        }
        memcpy(*body, salt, 16);
        (*body)[16] = 0;
        (*body)[17] = 0;
        (*body)[18] = RECORD_SIZE >> 8;
        (*body)[19] = RECORD_SIZE & 0xff;
        (*body)[20] = POINT_LEN;
        memcpy(*body + 21, as_pub, POINT_LEN);
        if (len)
            memcpy(plain, payload, len);
        plain[len] = 0x02;
        int s = seal(cek, nonce, plain, len + 1, *body + hdr);
        free(plain);
        if (s < 0)
            goto out;
        *body_len = hdr + len + 1 + 16;
    } else {
        /* IKM = HKDF(auth, ecdh, "Content-Encoding: auth" || 0x00, 32);
         * context = "P-256" || 0x00 || 0x0041 || ua || 0x0041 || as */
        hkdf_expand(prk_key, (const unsigned char *)"Content-Encoding: auth", 23, ikm, 32);
        hmac256(salt, 16, ikm, 32, prk);
        unsigned char ctx[6 + 2 + POINT_LEN + 2 + POINT_LEN];
        memcpy(ctx, "P-256", 6);
        ctx[6] = 0;
        ctx[7] = POINT_LEN;
        memcpy(ctx + 8, ua_pub, POINT_LEN);
        ctx[8 + POINT_LEN] = 0;
        ctx[9 + POINT_LEN] = POINT_LEN;
        memcpy(ctx + 10 + POINT_LEN, as_pub, POINT_LEN);
        n = 25;
        memcpy(info, "Content-Encoding: aesgcm", n);
        memcpy(info + n, ctx, sizeof ctx);
        hkdf_expand(prk, info, n + sizeof ctx, cek, 16);
        n = 24;
        memcpy(info, "Content-Encoding: nonce", n);
        memcpy(info + n, ctx, sizeof ctx);
        hkdf_expand(prk, info, n + sizeof ctx, nonce, 12);
        /* Two bytes of padding length (none), then the payload. */
        unsigned char *plain = malloc(len + 2);
        *body = malloc(len + 2 + 16);
        if (!plain || !*body) {
            free(plain);
            goto out;
        }
        plain[0] = plain[1] = 0;
        if (len)
            memcpy(plain + 2, payload, len);
        int s = seal(cek, nonce, plain, len + 2, *body);
        free(plain);
        if (s < 0)
            goto out;
        *body_len = len + 2 + 16;
    }
    rc = 0;
out:
    if (rc < 0) {
        free(*body);
        *body = NULL;
    }
    OPENSSL_cleanse(shared, sizeof shared);
    OPENSSL_cleanse(prk_key, sizeof prk_key);
    OPENSSL_cleanse(ikm, sizeof ikm);
    OPENSSL_cleanse(prk, sizeof prk);
    OPENSSL_cleanse(cek, sizeof cek);
    EVP_PKEY_free(peer);
    return rc;
}

int
eu_webpush_encrypt_with(enum eu_webpush_encoding enc, const char *p256dh, const char *auth,
                        const unsigned char *payload, size_t len, const unsigned char salt[16],
                        const unsigned char as_priv[32], const unsigned char as_pub[65],
                        unsigned char **body, size_t *body_len)
{
    unsigned char ua_pub[POINT_LEN], secret[16];
    *body = NULL;
    if (decode_keys(p256dh, auth, ua_pub, secret) < 0)
        return -1;
    EVP_PKEY *as_key = pkey_from(as_pub, as_priv);
    if (!as_key)
        return -1;
    int rc = encrypt(enc, ua_pub, secret, payload, len, salt, as_key, as_pub, body, body_len);
    EVP_PKEY_free(as_key);
    return rc;
}

/* ------------------------------------------------------------ VAPID */

static char *
b64url_str(const char *s)
{
    return eu_webpush_b64url((const unsigned char *)s, strlen(s));
}

char *
eu_webpush_vapid_jwt(const char *vapid_private_pem, const char *audience, int64_t exp,
                     const char *subject)
{
    BIO *bio = BIO_new_mem_buf(vapid_private_pem, -1);
    EVP_PKEY *key = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    if (!key)
        return NULL;
    json_t *claims = json_pack("{s:s, s:I, s:s}", "aud", audience, "exp", (json_int_t)exp, "sub",
                               subject ? subject : "");
    char *cj = claims ? json_dumps(claims, JSON_COMPACT) : NULL;
    json_decref(claims);
    char *h = b64url_str("{\"typ\":\"JWT\",\"alg\":\"ES256\"}");
    char *c = cj ? b64url_str(cj) : NULL;
    free(cj);
    char *out = NULL, *input = NULL, *sig64 = NULL;
    unsigned char der[128], raw[64];
    size_t derlen = sizeof der;
    ECDSA_SIG *sig = NULL;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    if (!h || !c || !md)
        goto out;
    size_t n = strlen(h) + 1 + strlen(c);
    if (!(input = malloc(n + 1)))
        goto out;
    snprintf(input, n + 1, "%s.%s", h, c);
    if (EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, key) != 1 ||
        EVP_DigestSign(md, der, &derlen, (const unsigned char *)input, n) != 1)
        goto out;
    /* JWS wants r || s, 32 bytes each, not the DER that OpenSSL writes. */
    const unsigned char *p = der;
    if (!(sig = d2i_ECDSA_SIG(NULL, &p, (long)derlen)) ||
        BN_bn2binpad(ECDSA_SIG_get0_r(sig), raw, 32) != 32 ||
        BN_bn2binpad(ECDSA_SIG_get0_s(sig), raw + 32, 32) != 32 ||
        !(sig64 = eu_webpush_b64url(raw, 64)))
        goto out;
    size_t total = n + 1 + strlen(sig64) + 1;
    if ((out = malloc(total)))
        snprintf(out, total, "%s.%s", input, sig64);
out:
    ECDSA_SIG_free(sig);
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(key);
    free(h);
    free(c);
    free(input);
    free(sig64);
    return out;
}

/* Signed JWTs kept for reuse, across the CPU pool's threads. */
struct jwt_entry {
    char *pem, *aud, *sub, *jwt; /* NULL: a free slot */
    int64_t signed_at;
};
static struct jwt_entry jwts[JWT_CACHE];
static pthread_mutex_t jwts_mu = PTHREAD_MUTEX_INITIALIZER;

/* A JWT for (pem, aud, sub) at now, signed within the hour or signed now;
 * malloc'd, NULL on failure. */
static char *
jwt_for(const char *pem, const char *aud, const char *sub, int64_t now)
{
    sub = sub ? sub : "";
    char *out = NULL;
    pthread_mutex_lock(&jwts_mu);
    for (int i = 0; i < JWT_CACHE && !out; i++) {
        struct jwt_entry *e = &jwts[i];
        if (e->jwt && now >= e->signed_at && now - e->signed_at < JWT_REUSE_S &&
            strcmp(e->aud, aud) == 0 && strcmp(e->sub, sub) == 0 && strcmp(e->pem, pem) == 0)
            out = strdup(e->jwt);
    }
    pthread_mutex_unlock(&jwts_mu);
    if (out)
        return out;
    char *jwt = eu_webpush_vapid_jwt(pem, aud, now + JWT_LIFETIME_S, sub);
    if (!jwt)
        return NULL;
    char *pc = strdup(pem), *ac = strdup(aud), *sc = strdup(sub), *jc = strdup(jwt);
    if (!pc || !ac || !sc || !jc) {
        free(pc);
        free(ac);
        free(sc);
        free(jc);
        return jwt;
    }
    pthread_mutex_lock(&jwts_mu);
    /* A free slot, else the oldest, takes it. */
    struct jwt_entry *v = &jwts[0];
    for (int i = 0; i < JWT_CACHE; i++) {
        if (!jwts[i].jwt) {
            v = &jwts[i];
            break;
        }
        if (jwts[i].signed_at < v->signed_at)
            v = &jwts[i];
    }
    free(v->pem);
    free(v->aud);
    free(v->sub);
    free(v->jwt);
    *v = (struct jwt_entry){pc, ac, sc, jc, now};
    pthread_mutex_unlock(&jwts_mu);
    return jwt;
}

/* The origin of url ("https://push.example[:port]") into out; 0 or -1. */
static int
origin_of(const char *url, char *out, size_t outlen)
{
    const char *p = strstr(url, "://");
    if (!p || p == url)
        return -1;
    p += 3;
    size_t host = strcspn(p, "/?#");
    size_t n = (size_t)(p - url) + host;
    if (host == 0 || n >= outlen)
        return -1;
    memcpy(out, url, n);
    out[n] = '\0';
    return 0;
}

/* A malloc'd "Name: value" line; NULL when out of memory. */
static char *
header(const char *fmt, const char *a, const char *b)
{
    int n = snprintf(NULL, 0, fmt, a, b ? b : "");
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s)
        snprintf(s, (size_t)n + 1, fmt, a, b ? b : "");
    return s;
}

void
eu_webpush_msg_clear(struct eu_webpush_msg *m)
{
    free(m->body);
    for (size_t i = 0; i < sizeof m->headers / sizeof m->headers[0]; i++)
        free(m->headers[i]);
    memset(m, 0, sizeof(*m));
}

int
eu_webpush_build(const struct eu_webpush_target *t, const unsigned char *payload, size_t len,
                 struct eu_webpush_msg *out)
{
    memset(out, 0, sizeof(*out));
    unsigned char ua_pub[POINT_LEN], secret[16], salt[16], as_pub[POINT_LEN];
    char aud[512], ttl[16];
    if (decode_keys(t->p256dh, t->auth, ua_pub, secret) < 0 ||
        origin_of(t->endpoint, aud, sizeof aud) < 0 || RAND_bytes(salt, sizeof salt) != 1)
        return -1;
    EVP_PKEY *as_key = p256_generate();
    int rc = -1;
    char *jwt = NULL, *salt64 = NULL, *dh64 = NULL;
    if (!as_key || point_of(as_key, as_pub) < 0 ||
        encrypt(t->encoding, ua_pub, secret, payload, len, salt, as_key, as_pub, &out->body,
                &out->body_len) < 0)
        goto out;
    if (!(jwt = jwt_for(t->vapid_private_pem, aud, t->subject, t->now)))
        goto out;
    snprintf(ttl, sizeof ttl, "%d", t->ttl);
    int i = 0;
    out->headers[i++] = header("Content-Type: application/octet-stream%s%s", "", NULL);
    out->headers[i++] = header("TTL: %s%s", ttl, NULL);
    out->headers[i++] = header("Urgency: %s%s", t->urgency ? t->urgency : "normal", NULL);
    if (t->encoding == EU_WEBPUSH_AES128GCM) {
        out->headers[i++] = header("Content-Encoding: aes128gcm%s%s", "", NULL);
        out->headers[i++] = header("Authorization: vapid t=%s, k=%s", jwt, t->vapid_public);
    } else {
        if (!(salt64 = eu_webpush_b64url(salt, 16)) || !(dh64 = eu_webpush_b64url(as_pub, 65)))
            goto out;
        out->headers[i++] = header("Content-Encoding: aesgcm%s%s", "", NULL);
        out->headers[i++] = header("Encryption: salt=%s%s", salt64, NULL);
        out->headers[i++] = header("Crypto-Key: dh=%s;p256ecdsa=%s", dh64, t->vapid_public);
        out->headers[i++] = header("Authorization: WebPush %s%s", jwt, NULL);
    }
    rc = 0;
    for (int j = 0; j < i; j++)
        if (!out->headers[j])
            rc = -1;
out:
    if (rc < 0)
        eu_webpush_msg_clear(out);
    free(jwt);
    free(salt64);
    free(dh64);
    EVP_PKEY_free(as_key);
    return rc;
}
