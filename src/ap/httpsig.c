/*
 * HTTP signatures (include/eunha/httpsig.h): signing and checking
 * draft-cavage-http-signatures-12 and RFC 9421 requests with RSA keys.
 *
 * Policy follows Mastodon, the peer most of the fediverse is: a cavage
 * signature must cover (request-target), host and date (or hs2019's
 * (created)), and the digest whenever there is a body; an RFC 9421 one must
 * bind the method and the target (all of @target-uri, or @path with the
 * authority) and the Content-Digest of a body. What the signature leaves out
 * could be changed in transit, so a signature that covers less is refused
 * before any key is looked up.
 *
 * The string that was signed is built from the request exactly as received
 * (the path and query as in the request line, header values joined with ", "
 * when a header repeats), never from a normalised form, since the signer
 * signed what it sent.
 */
#include "eunha/httpsig.h"

#include <ctype.h>
#include <openssl/bio.h>
#include <openssl/decoder.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eunha/mem.h"
#include "httpsig_internal.h"
#include "sfv_internal.h"

/* Headers a cavage signature may name, and components an RFC 9421 one may
 * cover: real ones name fewer than ten. */
#define MAX_COVERED 32
/* Longest key id kept: actor URLs are far shorter. */
#define MAX_KEY_ID 2048
/* RSA sizes accepted for checking: 1024 for old peers (and the draft's own
 * test key); above 8192 a verify costs enough to be a lever. */
#define MIN_RSA_BITS 1024
#define MAX_RSA_BITS 8192
/* How far a cavage Date may lie ahead: senders' clocks vary, and Mastodon
 * allows an hour. */
#define CAVAGE_FUTURE_S (60 * 60)

struct eu_httpsig {
    enum eu_httpsig_form form;
    enum eu_httpsig_alg alg;
    char *key_id;
    char *base;
    char *base_no_query; /* cavage: the same without the query, or NULL */
    unsigned char *sig;
    size_t siglen;
};

const char *
eu_httpsig_result_str(enum eu_httpsig_result r)
{
    switch (r) {
    case EU_HTTPSIG_OK:
        return "signature valid";
    case EU_HTTPSIG_NONE:
        return "request not signed";
    case EU_HTTPSIG_MALFORMED:
        return "signature header malformed";
    case EU_HTTPSIG_UNSUPPORTED:
        return "signature algorithm or component not supported";
    case EU_HTTPSIG_NOT_COVERED:
        return "signature does not cover the required headers";
    case EU_HTTPSIG_MISSING_HEADER:
        return "a signed header is missing";
    case EU_HTTPSIG_EXPIRED:
        return "signature expired or dated in the future";
    case EU_HTTPSIG_DIGEST_MISMATCH:
        return "body does not match its digest";
    case EU_HTTPSIG_BAD_KEY:
        return "key unusable";
    case EU_HTTPSIG_BAD_SIGNATURE:
        return "signature does not verify";
    }
    return "unknown";
}

/* ------------------------------------------------------------ strings */

struct buf {
    char *s;
    size_t len, cap;
};

static void
buf_put(struct buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->s = eu_xrealloc(b->s, b->cap);
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void
buf_puts(struct buf *b, const char *s)
{
    buf_put(b, s, strlen(s));
}

static void __attribute__((format(printf, 2, 3))) buf_printf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        abort();
    buf_put(b, s, (size_t)n);
    free(s);
}

/* Base64 (standard alphabet, padded) of n bytes; caller frees. */
static char *
b64_encode(const unsigned char *p, size_t n)
{
    size_t cap = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL);
    char *out = eu_xmalloc(cap);
    sodium_bin2base64(out, cap, p, n, sodium_base64_VARIANT_ORIGINAL);
    return out;
}

/* Decodes padded standard base64 into a malloc'd buffer; -1 when it is not. */
static int
b64_decode(const char *s, size_t n, unsigned char **out, size_t *outlen)
{
    unsigned char *bin = eu_xmalloc(n / 4 * 3 + 3);
    const char *end = NULL;
    if (sodium_base642bin(bin, n / 4 * 3 + 3, s, n, NULL, outlen, &end,
                          sodium_base64_VARIANT_ORIGINAL) != 0 ||
        end != s + n || *outlen == 0) {
        free(bin);
        return -1;
    }
    *out = bin;
    return 0;
}

static bool
has_ctl(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return true;
    return false;
}

/* ------------------------------------------------------------ dates */

static const char *const day_names[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
static const char *const month_names[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

static int
digits(const char *s, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

int
eu_httpsig_date_parse(const char *s, time_t *t)
{
    /* "Sun, 06 Nov 1994 08:49:37 GMT" */
    if (!s || strlen(s) != 29 || s[3] != ',' || s[4] != ' ' || s[7] != ' ' || s[11] != ' ' ||
        s[16] != ' ' || s[19] != ':' || s[22] != ':' || strcmp(s + 25, " GMT") != 0)
        return -1;
    int wday = -1, mon = -1;
    for (int i = 0; i < 7; i++)
        if (strncmp(s, day_names[i], 3) == 0)
            wday = i;
    for (int i = 0; i < 12; i++)
        if (strncmp(s + 8, month_names[i], 3) == 0)
            mon = i;
    int mday = digits(s + 5, 2), year = digits(s + 12, 4), hour = digits(s + 17, 2),
        min = digits(s + 20, 2), sec = digits(s + 23, 2);
    if (wday < 0 || mon < 0 || mday < 1 || mday > 31 || year < 1970 || hour < 0 || hour > 23 ||
        min < 0 || min > 59 || sec < 0 || sec > 60)
        return -1;
    struct tm tm = {.tm_year = year - 1900,
                    .tm_mon = mon,
                    .tm_mday = mday,
                    .tm_hour = hour,
                    .tm_min = min,
                    .tm_sec = sec};
    time_t v = timegm(&tm);
    if (v == (time_t)-1 || tm.tm_mday != mday) /* 31 Feb rolled over */
        return -1;
    *t = v;
    return 0;
}

void
eu_httpsig_date_format(time_t t, char buf[30])
{
    struct tm tm;
    gmtime_r(&t, &tm);
    snprintf(buf, 30, "%s, %02d %s %04d %02d:%02d:%02d GMT", day_names[tm.tm_wday % 7],
             tm.tm_mday % 100, month_names[tm.tm_mon % 12], (tm.tm_year + 1900) % 10000,
             tm.tm_hour % 100, tm.tm_min % 100, tm.tm_sec % 100);
}

/* ------------------------------------------------------------ digests */

static char *
digest_of(const void *body, size_t len, const EVP_MD *md, const char *fmt)
{
    unsigned char h[EVP_MAX_MD_SIZE];
    unsigned int hlen = 0;
    if (EVP_Digest(body ? body : "", body ? len : 0, h, &hlen, md, NULL) != 1)
        abort();
    char *b64 = b64_encode(h, hlen);
    char *out = eu_xasprintf(fmt, b64);
    free(b64);
    return out;
}

char *
eu_httpsig_digest(const void *body, size_t len)
{
    return digest_of(body, len, EVP_sha256(), "SHA-256=%s");
}

char *
eu_httpsig_content_digest(const void *body, size_t len)
{
    return digest_of(body, len, EVP_sha256(), "sha-256=:%s:");
}

/* Compares a received base64 digest with the body's under md. */
static enum eu_httpsig_result
digest_matches(const char *b64, size_t n, const EVP_MD *md, const void *body, size_t len)
{
    unsigned char *given = NULL;
    size_t glen = 0;
    if (b64_decode(b64, n, &given, &glen) < 0)
        return EU_HTTPSIG_MALFORMED;
    unsigned char h[EVP_MAX_MD_SIZE];
    unsigned int hlen = 0;
    /* No body is the empty one, whatever length came with it. */
    if (EVP_Digest(body ? body : "", body ? len : 0, h, &hlen, md, NULL) != 1)
        abort();
    bool same = glen == hlen && memcmp(given, h, hlen) == 0;
    free(given);
    return same ? EU_HTTPSIG_OK : EU_HTTPSIG_DIGEST_MISMATCH;
}

static const EVP_MD *
digest_md(const char *name, size_t n)
{
    if (n == 7 && strncasecmp(name, "sha-256", 7) == 0)
        return EVP_sha256();
    if (n == 7 && strncasecmp(name, "sha-512", 7) == 0)
        return EVP_sha512();
    return NULL;
}

enum eu_httpsig_result
eu_httpsig_digest_check(const char *value, const void *body, size_t len)
{
    if (!value || strlen(value) > EU_HTTPSIG_MAX_HEADER)
        return EU_HTTPSIG_MALFORMED;
    int known = 0;
    const char *p = value;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (!*p)
            break;
        const char *eq = strchr(p, '=');
        if (!eq)
            return EU_HTTPSIG_MALFORMED;
        const char *end = eq + 1;
        while (*end && *end != ',' && *end != ' ' && *end != '\t')
            end++;
        const EVP_MD *md = digest_md(p, (size_t)(eq - p));
        if (md) {
            enum eu_httpsig_result r =
                digest_matches(eq + 1, (size_t)(end - eq - 1), md, body, len);
            if (r != EU_HTTPSIG_OK)
                return r;
            known++;
        }
        p = end;
    }
    return known ? EU_HTTPSIG_OK : EU_HTTPSIG_UNSUPPORTED;
}

enum eu_httpsig_result
eu_httpsig_content_digest_check(const char *value, const void *body, size_t len)
{
    struct eu_sfv_dict d;
    if (!value || eu_sfv_dict_parse(&d, value) < 0)
        return EU_HTTPSIG_MALFORMED;
    enum eu_httpsig_result r = EU_HTTPSIG_UNSUPPORTED;
    for (int i = 0; i < d.nmembers; i++) {
        const struct eu_sfv_member *m = &d.members[i];
        const EVP_MD *md = digest_md(m->key, strlen(m->key));
        if (!md)
            continue;
        const struct eu_sfv_item *it = &d.items[m->first_item];
        if (m->inner || it->bare.type != EU_SFV_BYTES) {
            r = EU_HTTPSIG_MALFORMED;
            break;
        }
        r = digest_matches(it->bare.str, it->bare.len, md, body, len);
        if (r != EU_HTTPSIG_OK)
            break;
    }
    eu_sfv_dict_release(&d);
    return r;
}

/* ------------------------------------------------------------ keys */

struct evp_pkey_st *
eu_httpsig_public_key_parse(const char *pem)
{
    if (!pem)
        return NULL;
    EVP_PKEY *key = NULL;
    /* No structure named: the decoder takes SubjectPublicKeyInfo ("PUBLIC
     * KEY") and PKCS#1 ("RSA PUBLIC KEY"), which some servers publish. */
    OSSL_DECODER_CTX *dctx =
        OSSL_DECODER_CTX_new_for_pkey(&key, "PEM", NULL, "RSA", EVP_PKEY_PUBLIC_KEY, NULL, NULL);
    if (!dctx)
        return NULL;
    const unsigned char *data = (const unsigned char *)pem;
    size_t len = strlen(pem);
    if (OSSL_DECODER_from_data(dctx, &data, &len) != 1) {
        EVP_PKEY_free(key);
        key = NULL;
    }
    OSSL_DECODER_CTX_free(dctx);
    return key;
}

EVP_PKEY *
eu_httpsig_private_key_parse(const char *pem)
{
    if (!pem)
        return NULL;
    BIO *b = BIO_new_mem_buf(pem, -1);
    if (!b)
        return NULL;
    EVP_PKEY *key = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
    BIO_free(b);
    if (key && !EVP_PKEY_is_a(key, "RSA")) {
        EVP_PKEY_free(key);
        key = NULL;
    }
    return key;
}

static bool
key_is_usable(EVP_PKEY *key)
{
    if (!key || (!EVP_PKEY_is_a(key, "RSA") && !EVP_PKEY_is_a(key, "RSA-PSS")))
        return false;
    int bits = EVP_PKEY_get_bits(key);
    return bits >= MIN_RSA_BITS && bits <= MAX_RSA_BITS;
}

/* Sets up ctx for alg (PKCS#1 v1.5 with SHA-256, or PSS with SHA-512 and a
 * 64-byte salt as RFC 9421 section 3.3.1 says) to sign or verify. */
static bool
rsa_init(EVP_MD_CTX *ctx, enum eu_httpsig_alg alg, EVP_PKEY *key, bool sign)
{
    EVP_PKEY_CTX *pctx = NULL;
    const EVP_MD *md = alg == EU_HTTPSIG_ALG_RSA_PSS_SHA512 ? EVP_sha512() : EVP_sha256();
    int ok = sign ? EVP_DigestSignInit(ctx, &pctx, md, NULL, key)
                  : EVP_DigestVerifyInit(ctx, &pctx, md, NULL, key);
    if (ok != 1)
        return false;
    if (alg == EU_HTTPSIG_ALG_RSA_PSS_SHA512)
        return EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) == 1 &&
               EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, 64) == 1 &&
               EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, EVP_sha512()) == 1;
    return EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) == 1;
}

static bool
verify_one(enum eu_httpsig_alg alg, EVP_PKEY *key, const char *base, const unsigned char *sig,
           size_t siglen)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    bool ok = ctx && rsa_init(ctx, alg, key, false) &&
              EVP_DigestVerify(ctx, sig, siglen, (const unsigned char *)base, strlen(base)) == 1;
    EVP_MD_CTX_free(ctx);
    return ok;
}

enum eu_httpsig_result
eu_httpsig_verify_raw(enum eu_httpsig_alg alg, struct evp_pkey_st *key, const char *base,
                      const unsigned char *sig, size_t siglen)
{
    if (!key_is_usable(key))
        return EU_HTTPSIG_BAD_KEY;
    bool ok;
    if (alg == EU_HTTPSIG_ALG_RSA_ANY)
        ok = verify_one(EU_HTTPSIG_ALG_RSA_V15_SHA256, key, base, sig, siglen) ||
             verify_one(EU_HTTPSIG_ALG_RSA_PSS_SHA512, key, base, sig, siglen);
    else
        ok = verify_one(alg, key, base, sig, siglen);
    return ok ? EU_HTTPSIG_OK : EU_HTTPSIG_BAD_SIGNATURE;
}

/* Signs base with key as PKCS#1 v1.5 SHA-256; returns base64 (caller frees)
 * or NULL. */
static char *
rsa_sign_b64(EVP_PKEY *key, const char *base)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char *sig = NULL;
    size_t siglen = 0;
    char *out = NULL;
    if (ctx && rsa_init(ctx, EU_HTTPSIG_ALG_RSA_V15_SHA256, key, true) &&
        EVP_DigestSign(ctx, NULL, &siglen, (const unsigned char *)base, strlen(base)) == 1) {
        sig = eu_xmalloc(siglen);
        if (EVP_DigestSign(ctx, sig, &siglen, (const unsigned char *)base, strlen(base)) == 1)
            out = b64_encode(sig, siglen);
    }
    free(sig);
    EVP_MD_CTX_free(ctx);
    return out;
}

/* ------------------------------------------------------------ signing */

/* A URL split for signing: "https://Host:443/p?q#f" gives host "host" and
 * target "/p?q" (the default port left out, as clients send Host and as
 * servers rebuild @target-uri). Strings are malloc'd. */
struct url_parts {
    char *scheme, *host, *target;
};

static void
url_parts_release(struct url_parts *u)
{
    free(u->scheme);
    free(u->host);
    free(u->target);
}

static int
url_split(const char *url, struct url_parts *u)
{
    memset(u, 0, sizeof(*u));
    if (!url || has_ctl(url) || strchr(url, ' '))
        return -1;
    const char *sep = strstr(url, "://");
    if (!sep)
        return -1;
    size_t slen = (size_t)(sep - url);
    bool https = slen == 5 && strncasecmp(url, "https", 5) == 0;
    if (!https && !(slen == 4 && strncasecmp(url, "http", 4) == 0))
        return -1;
    const char *auth = sep + 3;
    size_t alen = strcspn(auth, "/?#");
    if (alen == 0 || memchr(auth, '@', alen))
        return -1;
    u->scheme = eu_xstrdup(https ? "https" : "http");
    u->host = eu_xstrndup(auth, alen);
    for (char *c = u->host; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    size_t hl = strlen(u->host);
    const char *dflt = https ? ":443" : ":80";
    size_t dl = strlen(dflt);
    if (hl > dl && strcmp(u->host + hl - dl, dflt) == 0 && u->host[0] != '[')
        u->host[hl - dl] = '\0';
    const char *rest = auth + alen;
    size_t rlen = strcspn(rest, "#");
    u->target = rest[0] == '/' ? eu_xstrndup(rest, rlen) : eu_xasprintf("/%.*s", (int)rlen, rest);
    return 0;
}

void
eu_httpsig_signed_release(struct eu_httpsig_signed *s)
{
    for (int i = 0; i < s->n; i++)
        free((char *)s->headers[i].value);
    memset(s, 0, sizeof(*s));
}

const char *
eu_httpsig_signed_get(const struct eu_httpsig_signed *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcasecmp(s->headers[i].name, name) == 0)
            return s->headers[i].value;
    return NULL;
}

static void
signed_add(struct eu_httpsig_signed *s, const char *name, char *value_take)
{
    s->headers[s->n].name = name;
    s->headers[s->n].value = value_take;
    s->n++;
}

/* What both forms start with: the URL split, the key, Host and Date. */
static int
sign_begin(const struct eu_httpsig_sign_args *a, struct url_parts *u, EVP_PKEY **key,
           struct eu_httpsig_signed *out, char date[30])
{
    memset(out, 0, sizeof(*out));
    *key = NULL;
    /* The key id goes into a quoted string in either form, unescaped in
     * cavage's: printable ASCII without quotes or backslashes. */
    if (!a->method || !*a->method || !a->key_id || !*a->key_id || strlen(a->key_id) > MAX_KEY_ID ||
        strpbrk(a->key_id, "\"\\") || has_ctl(a->key_id))
        return -1;
    for (const char *c = a->key_id; *c; c++)
        if ((unsigned char)*c > 0x7e)
            return -1;
    if (url_split(a->url, u) < 0)
        return -1;
    if (a->key) {
        if (!EVP_PKEY_is_a(a->key, "RSA") || EVP_PKEY_up_ref(a->key) != 1)
            goto fail;
        *key = a->key;
    } else if (!a->key_pem || !(*key = eu_httpsig_private_key_parse(a->key_pem))) {
        goto fail;
    }
    eu_httpsig_date_format(a->now, date);
    signed_add(out, "Host", eu_xstrdup(u->host));
    signed_add(out, "Date", eu_xstrdup(date));
    return 0;
fail:
    url_parts_release(u);
    return -1;
}

int
eu_httpsig_sign_cavage(const struct eu_httpsig_sign_args *a, struct eu_httpsig_signed *out)
{
    struct url_parts u;
    EVP_PKEY *key;
    char date[30];
    if (sign_begin(a, &u, &key, out, date) < 0)
        return -1;
    struct buf base = {0};
    buf_puts(&base, "(request-target): ");
    for (const char *m = a->method; *m; m++) {
        char c = (char)tolower((unsigned char)*m);
        buf_put(&base, &c, 1);
    }
    buf_printf(&base, " %s\nhost: %s\ndate: %s", u.target, u.host, date);
    const char *covered = "(request-target) host date";
    if (a->body) {
        char *digest = a->digest ? eu_xstrdup(a->digest) : eu_httpsig_digest(a->body, a->body_len);
        buf_printf(&base, "\ndigest: %s", digest);
        signed_add(out, "Digest", digest);
        covered = "(request-target) host date digest";
    }
    char *sig = rsa_sign_b64(key, base.s);
    int rc = -1;
    if (sig) {
        signed_add(out, "Signature",
                   eu_xasprintf("keyId=\"%s\",algorithm=\"rsa-sha256\",headers=\"%s\","
                                "signature=\"%s\"",
                                a->key_id, covered, sig));
        rc = 0;
    } else {
        eu_httpsig_signed_release(out);
    }
    free(sig);
    free(base.s);
    EVP_PKEY_free(key);
    url_parts_release(&u);
    return rc;
}

int
eu_httpsig_sign_rfc9421(const struct eu_httpsig_sign_args *a, struct eu_httpsig_signed *out)
{
    struct url_parts u;
    EVP_PKEY *key;
    char date[30];
    if (sign_begin(a, &u, &key, out, date) < 0)
        return -1;
    struct buf base = {0}, params = {0};
    buf_printf(&base, "\"@method\": %s\n\"@target-uri\": %s://%s%s\n", a->method, u.scheme, u.host,
               u.target);
    buf_puts(&params, "(\"@method\" \"@target-uri\"");
    if (a->body) {
        char *digest =
            a->digest ? eu_xstrdup(a->digest) : eu_httpsig_content_digest(a->body, a->body_len);
        buf_printf(&base, "\"content-digest\": %s\n", digest);
        buf_puts(&params, " \"content-digest\"");
        signed_add(out, "Content-Digest", digest);
    }
    buf_printf(&params, ");created=%lld;keyid=\"%s\";alg=\"rsa-v1_5-sha256\"", (long long)a->now,
               a->key_id);
    buf_printf(&base, "\"@signature-params\": %s", params.s);
    char *sig = rsa_sign_b64(key, base.s);
    int rc = -1;
    if (sig) {
        signed_add(out, "Signature-Input", eu_xasprintf("sig1=%s", params.s));
        signed_add(out, "Signature", eu_xasprintf("sig1=:%s:", sig));
        rc = 0;
    } else {
        eu_httpsig_signed_release(out);
    }
    free(sig);
    free(base.s);
    free(params.s);
    EVP_PKEY_free(key);
    url_parts_release(&u);
    return rc;
}

/* ------------------------------------------------------------ the request */

/* The values of header name joined with ", ", each trimmed of spaces and
 * tabs (both drafts' rule); NULL when absent. *bad is set when a value holds
 * a line break (it would forge a line of the signed string). Caller frees. */
static char *
header_get(const struct eu_httpsig_request *req, const char *name, bool *bad)
{
    struct buf b = {0};
    bool found = false;
    for (size_t i = 0; i < req->nheaders; i++) {
        const struct eu_httpsig_header *h = &req->headers[i];
        if (!h->name || !h->value || strcasecmp(h->name, name) != 0)
            continue;
        const char *v = h->value;
        size_t n = strlen(v);
        while (n && (*v == ' ' || *v == '\t')) {
            v++;
            n--;
        }
        while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
            n--;
        if (memchr(v, '\r', n) || memchr(v, '\n', n))
            *bad = true;
        if (found)
            buf_puts(&b, ", ");
        buf_put(&b, v, n);
        found = true;
    }
    if (found && !b.s)
        buf_put(&b, "", 0);
    return b.s;
}

static bool
method_has_body(const struct eu_httpsig_request *req)
{
    return req->body || strcasecmp(req->method, "POST") == 0 ||
           strcasecmp(req->method, "PUT") == 0 || strcasecmp(req->method, "PATCH") == 0;
}

static enum eu_httpsig_result
check_created(long long created, time_t now)
{
    if (created > (long long)now + EU_HTTPSIG_MAX_SKEW_S ||
        (long long)now - created > EU_HTTPSIG_MAX_AGE_S)
        return EU_HTTPSIG_EXPIRED;
    return EU_HTTPSIG_OK;
}

static struct eu_httpsig *
sig_new(enum eu_httpsig_form form)
{
    struct eu_httpsig *s = eu_xcalloc(1, sizeof(*s));
    s->form = form;
    return s;
}

void
eu_httpsig_free(struct eu_httpsig *sig)
{
    if (!sig)
        return;
    free(sig->key_id);
    free(sig->base);
    free(sig->base_no_query);
    free(sig->sig);
    free(sig);
}

/* ------------------------------------------------------------ cavage */

/* The parameters of a cavage Signature value that this code reads. */
enum { CP_KEYID, CP_ALGORITHM, CP_HEADERS, CP_SIGNATURE, CP_CREATED, CP_EXPIRES, CP_MAX };
static const char *const cavage_param_names[CP_MAX] = {"keyid",     "algorithm", "headers",
                                                       "signature", "created",   "expires"};

/* Splits `name="value",name=value` into params[] (malloc'd values);
 * unknown names are skipped, a repeated known one is an error. */
static enum eu_httpsig_result
cavage_params(const char *s, char *params[CP_MAX])
{
    const char *p = s;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            return EU_HTTPSIG_OK;
        const char *name = p;
        while (isalnum((unsigned char)*p) || *p == '-' || *p == '_')
            p++;
        size_t nlen = (size_t)(p - name);
        while (*p == ' ' || *p == '\t')
            p++;
        if (nlen == 0 || *p != '=')
            return EU_HTTPSIG_MALFORMED;
        p++;
        while (*p == ' ' || *p == '\t')
            p++;
        struct buf v = {0};
        buf_put(&v, "", 0);
        if (*p == '"') {
            for (p++; *p && *p != '"'; p++) {
                if (*p == '\\' && p[1])
                    p++;
                buf_put(&v, p, 1);
            }
            if (*p != '"') {
                free(v.s);
                return EU_HTTPSIG_MALFORMED;
            }
            p++;
        } else {
            const char *start = p;
            while (*p && *p != ',' && *p != ' ' && *p != '\t')
                p++;
            buf_put(&v, start, (size_t)(p - start));
        }
        int which = -1;
        for (int i = 0; i < CP_MAX; i++)
            if (strlen(cavage_param_names[i]) == nlen &&
                strncasecmp(name, cavage_param_names[i], nlen) == 0)
                which = i;
        if (which >= 0 && params[which]) {
            free(v.s);
            return EU_HTTPSIG_MALFORMED;
        }
        if (which >= 0)
            params[which] = v.s;
        else
            free(v.s);
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == ',')
            p++;
        else if (*p)
            return EU_HTTPSIG_MALFORMED;
    }
}

static bool
parse_int(const char *s, long long *v)
{
    if (!s || !*s || strlen(s) > 15)
        return false;
    long long x = 0;
    for (const char *c = s; *c; c++) {
        if (!isdigit((unsigned char)*c))
            return false;
        x = x * 10 + (*c - '0');
    }
    *v = x;
    return true;
}

/* Splits the headers parameter into lower-case names; duplicates refused. */
static enum eu_httpsig_result
cavage_headers(char *list, char *names[MAX_COVERED], int *n)
{
    *n = 0;
    for (char *c = list; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    char *save = NULL;
    for (char *tok = strtok_r(list, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        if (*n >= MAX_COVERED)
            return EU_HTTPSIG_MALFORMED;
        for (int i = 0; i < *n; i++)
            if (strcmp(names[i], tok) == 0)
                return EU_HTTPSIG_MALFORMED;
        names[(*n)++] = tok;
    }
    return *n ? EU_HTTPSIG_OK : EU_HTTPSIG_MALFORMED;
}

static bool
listed(char *const names[], int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

/* Builds the cavage signing string; with_query false drops the query from
 * (request-target). */
static enum eu_httpsig_result
cavage_base(const struct eu_httpsig_request *req, char *const names[], int n,
            char *const params[CP_MAX], bool with_query, char **out)
{
    struct buf b = {0};
    enum eu_httpsig_result r = EU_HTTPSIG_OK;
    for (int i = 0; i < n && r == EU_HTTPSIG_OK; i++) {
        if (i)
            buf_put(&b, "\n", 1);
        const char *h = names[i];
        if (strcmp(h, "(request-target)") == 0) {
            buf_puts(&b, "(request-target): ");
            for (const char *m = req->method; *m; m++) {
                char c = (char)tolower((unsigned char)*m);
                buf_put(&b, &c, 1);
            }
            buf_put(&b, " ", 1);
            buf_put(&b, req->target, with_query ? strlen(req->target) : strcspn(req->target, "?"));
        } else if (strcmp(h, "(created)") == 0 || strcmp(h, "(expires)") == 0) {
            const char *v = params[h[1] == 'c' ? CP_CREATED : CP_EXPIRES];
            if (!v)
                r = EU_HTTPSIG_MALFORMED;
            else
                buf_printf(&b, "%s: %s", h, v);
        } else if (h[0] == '(') {
            r = EU_HTTPSIG_UNSUPPORTED;
        } else {
            bool bad = false;
            char *v = header_get(req, h, &bad);
            if (!v)
                r = EU_HTTPSIG_MISSING_HEADER;
            else if (bad)
                r = EU_HTTPSIG_MALFORMED;
            else
                buf_printf(&b, "%s: %s", h, v);
            free(v);
        }
    }
    if (r != EU_HTTPSIG_OK) {
        free(b.s);
        return r;
    }
    *out = b.s;
    return EU_HTTPSIG_OK;
}

/* The checks on a cavage signature that need no key. */
static enum eu_httpsig_result
cavage_check(const struct eu_httpsig_request *req, time_t now, char *const names[], int n,
             char *const params[CP_MAX], bool hs2019)
{
    bool timed = listed(names, n, "date") || (hs2019 && listed(names, n, "(created)"));
    if (!listed(names, n, "(request-target)") || !listed(names, n, "host") || !timed ||
        (method_has_body(req) && !listed(names, n, "digest")))
        return EU_HTTPSIG_NOT_COVERED;
    if (!hs2019 && (listed(names, n, "(created)") || listed(names, n, "(expires)")))
        return EU_HTTPSIG_MALFORMED; /* only hs2019 defines them */
    long long t;
    if (params[CP_CREATED]) {
        if (!parse_int(params[CP_CREATED], &t))
            return EU_HTTPSIG_MALFORMED;
        if (check_created(t, now) != EU_HTTPSIG_OK)
            return EU_HTTPSIG_EXPIRED;
    }
    if (params[CP_EXPIRES]) {
        if (!parse_int(params[CP_EXPIRES], &t))
            return EU_HTTPSIG_MALFORMED;
        if (t < (long long)now)
            return EU_HTTPSIG_EXPIRED;
    }
    if (listed(names, n, "date")) {
        bool bad = false;
        char *v = header_get(req, "date", &bad);
        if (!v)
            return EU_HTTPSIG_MISSING_HEADER;
        time_t d;
        int rc = eu_httpsig_date_parse(v, &d);
        free(v);
        if (rc < 0)
            return EU_HTTPSIG_MALFORMED;
        if (d > now + CAVAGE_FUTURE_S || now - d > EU_HTTPSIG_MAX_AGE_S)
            return EU_HTTPSIG_EXPIRED;
    }
    if (listed(names, n, "digest")) {
        bool bad = false;
        char *v = header_get(req, "digest", &bad);
        if (!v)
            return EU_HTTPSIG_MISSING_HEADER;
        enum eu_httpsig_result r = eu_httpsig_digest_check(v, req->body, req->body_len);
        free(v);
        if (r == EU_HTTPSIG_UNSUPPORTED)
            return EU_HTTPSIG_DIGEST_MISMATCH; /* no digest we can check the body with */
        if (r != EU_HTTPSIG_OK)
            return r;
    }
    return EU_HTTPSIG_OK;
}

static enum eu_httpsig_result
parse_cavage(const struct eu_httpsig_request *req, const char *value, time_t now,
             struct eu_httpsig **out)
{
    char *params[CP_MAX] = {0};
    char *names[MAX_COVERED];
    int n = 0;
    struct eu_httpsig *s = NULL;
    enum eu_httpsig_result r = cavage_params(value, params);
    if (r != EU_HTTPSIG_OK)
        goto done;
    r = EU_HTTPSIG_MALFORMED;
    if (!params[CP_KEYID] || !params[CP_SIGNATURE] || !*params[CP_KEYID] ||
        strlen(params[CP_KEYID]) > MAX_KEY_ID || has_ctl(params[CP_KEYID]))
        goto done;
    /* No algorithm means hs2019: the key decides, and for RSA keys that is
     * RSASSA-PKCS1-v1_5 with SHA-256, as Mastodon reads it. */
    const char *alg = params[CP_ALGORITHM] ? params[CP_ALGORITHM] : "hs2019";
    bool hs2019 = strcasecmp(alg, "hs2019") == 0;
    if (!hs2019 && strcasecmp(alg, "rsa-sha256") != 0) {
        r = EU_HTTPSIG_UNSUPPORTED;
        goto done;
    }
    if (!params[CP_HEADERS])
        params[CP_HEADERS] = eu_xstrdup(hs2019 ? "(created)" : "date");
    r = cavage_headers(params[CP_HEADERS], names, &n);
    if (r != EU_HTTPSIG_OK)
        goto done;
    r = cavage_check(req, now, names, n, params, hs2019);
    if (r != EU_HTTPSIG_OK)
        goto done;
    s = sig_new(EU_HTTPSIG_CAVAGE);
    s->alg = EU_HTTPSIG_ALG_RSA_V15_SHA256;
    const char *sigtext = params[CP_SIGNATURE];
    if (b64_decode(sigtext, strlen(sigtext), &s->sig, &s->siglen) < 0) {
        r = EU_HTTPSIG_MALFORMED;
        goto done;
    }
    r = cavage_base(req, names, n, params, true, &s->base);
    if (r == EU_HTTPSIG_OK && strchr(req->target, '?') && listed(names, n, "(request-target)"))
        r = cavage_base(req, names, n, params, false, &s->base_no_query);
    if (r != EU_HTTPSIG_OK)
        goto done;
    s->key_id = params[CP_KEYID];
    params[CP_KEYID] = NULL;
    *out = s;
    s = NULL;
done:
    eu_httpsig_free(s);
    for (int i = 0; i < CP_MAX; i++)
        free(params[i]);
    return r;
}

/* ------------------------------------------------------------ RFC 9421 */

/* The value of derived component name (RFC 9421 section 2.2) for req, or
 * NULL when this code does not derive it. Caller frees. */
static char *
derived(const struct eu_httpsig_request *req, const char *name)
{
    const char *t = req->target;
    size_t plen = strcspn(t, "?");
    if (strcmp(name, "@method") == 0)
        return eu_xstrdup(req->method);
    if (strcmp(name, "@target-uri") == 0)
        return eu_xasprintf("%s://%s%s", req->scheme, req->authority, t);
    if (strcmp(name, "@authority") == 0 || strcmp(name, "@scheme") == 0) {
        char *v = eu_xstrdup(name[1] == 'a' ? req->authority : req->scheme);
        for (char *c = v; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        return v;
    }
    if (strcmp(name, "@request-target") == 0)
        return eu_xstrdup(t);
    if (strcmp(name, "@path") == 0)
        return plen ? eu_xstrndup(t, plen) : eu_xstrdup("/");
    if (strcmp(name, "@query") == 0)
        return t[plen] ? eu_xstrdup(t + plen) : eu_xstrdup("?");
    return NULL;
}

/* Finds the label to check: the first Signature-Input member that is an
 * Inner List and has a byte sequence under the same label in Signature. */
static const struct eu_sfv_member *
pick_label(const struct eu_sfv_dict *in, const struct eu_sfv_dict *sigs,
           const struct eu_sfv_item **sig)
{
    for (int i = 0; i < in->nmembers; i++) {
        const struct eu_sfv_member *m = &in->members[i];
        const struct eu_sfv_member *sm = eu_sfv_dict_get(sigs, m->key);
        if (!m->inner || !sm || sm->inner || sigs->items[sm->first_item].bare.type != EU_SFV_BYTES)
            continue;
        *sig = &sigs->items[sm->first_item];
        return m;
    }
    return NULL;
}

/* Reads created/expires/keyid/alg of the chosen member into s and checks
 * the times. */
static enum eu_httpsig_result
rfc9421_params(const struct eu_sfv_dict *in, const struct eu_sfv_member *m, time_t now,
               struct eu_httpsig *s)
{
    const struct eu_sfv_bare *created = eu_sfv_param_get(in, m->first_param, m->nparams, "created");
    const struct eu_sfv_bare *expires = eu_sfv_param_get(in, m->first_param, m->nparams, "expires");
    const struct eu_sfv_bare *keyid = eu_sfv_param_get(in, m->first_param, m->nparams, "keyid");
    const struct eu_sfv_bare *alg = eu_sfv_param_get(in, m->first_param, m->nparams, "alg");
    if (!created || created->type != EU_SFV_INTEGER || !keyid || keyid->type != EU_SFV_STRING ||
        keyid->len == 0 || keyid->len > MAX_KEY_ID ||
        (expires && expires->type != EU_SFV_INTEGER) || (alg && alg->type != EU_SFV_STRING))
        return EU_HTTPSIG_MALFORMED;
    if (!alg)
        s->alg = EU_HTTPSIG_ALG_RSA_ANY;
    else if (strcmp(alg->str, "rsa-v1_5-sha256") == 0)
        s->alg = EU_HTTPSIG_ALG_RSA_V15_SHA256;
    else if (strcmp(alg->str, "rsa-pss-sha512") == 0)
        s->alg = EU_HTTPSIG_ALG_RSA_PSS_SHA512;
    else
        return EU_HTTPSIG_UNSUPPORTED;
    if (check_created(created->integer, now) != EU_HTTPSIG_OK ||
        (expires && expires->integer < (long long)now))
        return EU_HTTPSIG_EXPIRED;
    s->key_id = eu_xstrdup(keyid->str);
    return EU_HTTPSIG_OK;
}

/* The component names of m, checked: strings without parameters, lower
 * case, no repeats. */
static enum eu_httpsig_result
rfc9421_components(const struct eu_sfv_dict *in, const struct eu_sfv_member *m,
                   const char *names[MAX_COVERED])
{
    if (m->nitems > MAX_COVERED)
        return EU_HTTPSIG_MALFORMED;
    for (int i = 0; i < m->nitems; i++) {
        const struct eu_sfv_item *it = &in->items[m->first_item + i];
        if (it->bare.type != EU_SFV_STRING || it->bare.len == 0)
            return EU_HTTPSIG_MALFORMED;
        if (it->nparams)
            return EU_HTTPSIG_UNSUPPORTED; /* ;sf ;bs ;req ;key ;name */
        for (const char *c = it->bare.str; *c; c++)
            if (isupper((unsigned char)*c))
                return EU_HTTPSIG_MALFORMED;
        for (int j = 0; j < i; j++)
            if (strcmp(names[j], it->bare.str) == 0)
                return EU_HTTPSIG_MALFORMED;
        names[i] = it->bare.str;
    }
    return EU_HTTPSIG_OK;
}

static bool
covers(const char *const names[], int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

static enum eu_httpsig_result
rfc9421_base(const struct eu_httpsig_request *req, const struct eu_sfv_dict *in,
             const struct eu_sfv_member *m, const char *const names[], char **out)
{
    struct buf b = {0};
    enum eu_httpsig_result r = EU_HTTPSIG_OK;
    for (int i = 0; i < m->nitems && r == EU_HTTPSIG_OK; i++) {
        const char *name = names[i];
        bool bad = false;
        char *v;
        if (name[0] == '@') {
            v = derived(req, name);
            if (!v)
                r = EU_HTTPSIG_UNSUPPORTED;
        } else {
            v = header_get(req, name, &bad);
            if (!v)
                r = EU_HTTPSIG_MISSING_HEADER;
        }
        if (v && (bad || strchr(v, '\n') || strchr(v, '\r')))
            r = EU_HTTPSIG_MALFORMED;
        if (r == EU_HTTPSIG_OK)
            buf_printf(&b, "\"%s\": %s\n", name, v);
        free(v);
    }
    char *params = r == EU_HTTPSIG_OK ? eu_sfv_member_serialize(in, m) : NULL;
    if (r == EU_HTTPSIG_OK && !params)
        r = EU_HTTPSIG_MALFORMED;
    if (r != EU_HTTPSIG_OK) {
        free(b.s);
        return r;
    }
    buf_printf(&b, "\"@signature-params\": %s", params);
    free(params);
    *out = b.s;
    return EU_HTTPSIG_OK;
}

static enum eu_httpsig_result
parse_rfc9421(const struct eu_httpsig_request *req, const char *input, const char *sigval,
              time_t now, struct eu_httpsig **out)
{
    struct eu_sfv_dict *in = eu_xcalloc(1, sizeof(*in));
    struct eu_sfv_dict *sigs = eu_xcalloc(1, sizeof(*sigs));
    struct eu_httpsig *s = NULL;
    enum eu_httpsig_result r = EU_HTTPSIG_MALFORMED;
    if (!sigval || eu_sfv_dict_parse(in, input) < 0)
        goto done;
    if (eu_sfv_dict_parse(sigs, sigval) < 0)
        goto done;
    const struct eu_sfv_item *sig = NULL;
    const struct eu_sfv_member *m = pick_label(in, sigs, &sig);
    if (!m)
        goto done;
    const char *names[MAX_COVERED];
    r = rfc9421_components(in, m, names);
    if (r != EU_HTTPSIG_OK)
        goto done;
    int n = m->nitems;
    bool target =
        covers(names, n, "@target-uri") ||
        (covers(names, n, "@path") && (covers(names, n, "@authority") || covers(names, n, "host")));
    if (!covers(names, n, "@method") || !target ||
        (method_has_body(req) && !covers(names, n, "content-digest"))) {
        r = EU_HTTPSIG_NOT_COVERED;
        goto done;
    }
    s = sig_new(EU_HTTPSIG_RFC9421);
    r = rfc9421_params(in, m, now, s);
    if (r != EU_HTTPSIG_OK)
        goto done;
    if (covers(names, n, "content-digest")) {
        bool bad = false;
        char *v = header_get(req, "content-digest", &bad);
        r = v ? eu_httpsig_content_digest_check(v, req->body, req->body_len)
              : EU_HTTPSIG_MISSING_HEADER;
        free(v);
        if (r == EU_HTTPSIG_UNSUPPORTED)
            r = EU_HTTPSIG_DIGEST_MISMATCH;
        if (r != EU_HTTPSIG_OK)
            goto done;
    }
    if (b64_decode(sig->bare.str, sig->bare.len, &s->sig, &s->siglen) < 0) {
        r = EU_HTTPSIG_MALFORMED;
        goto done;
    }
    r = rfc9421_base(req, in, m, names, &s->base);
    if (r != EU_HTTPSIG_OK)
        goto done;
    *out = s;
    s = NULL;
done:
    eu_httpsig_free(s);
    eu_sfv_dict_release(in);
    eu_sfv_dict_release(sigs);
    free(in);
    free(sigs);
    return r;
}

/* ------------------------------------------------------------ entry points */

enum eu_httpsig_result
eu_httpsig_parse(const struct eu_httpsig_request *req, time_t now, struct eu_httpsig **out)
{
    *out = NULL;
    if (!req->method || !req->scheme || !req->authority || !req->target)
        return EU_HTTPSIG_MALFORMED;
    bool bad = false;
    char *input = header_get(req, "signature-input", &bad);
    char *sig = header_get(req, "signature", &bad);
    char *auth = NULL;
    enum eu_httpsig_result r;
    if ((input && strlen(input) > EU_HTTPSIG_MAX_HEADER) ||
        (sig && strlen(sig) > EU_HTTPSIG_MAX_HEADER) || bad) {
        r = EU_HTTPSIG_MALFORMED;
    } else if (input) {
        r = parse_rfc9421(req, input, sig, now, out);
    } else if (sig) {
        r = parse_cavage(req, sig, now, out);
    } else {
        auth = header_get(req, "authorization", &bad);
        if (auth && strncasecmp(auth, "Signature ", 10) == 0 &&
            strlen(auth) <= EU_HTTPSIG_MAX_HEADER && !bad)
            r = parse_cavage(req, auth + 10, now, out);
        else
            r = EU_HTTPSIG_NONE;
    }
    free(input);
    free(sig);
    free(auth);
    return r;
}

const char *
eu_httpsig_key_id(const struct eu_httpsig *sig)
{
    return sig->key_id;
}

enum eu_httpsig_form
eu_httpsig_form(const struct eu_httpsig *sig)
{
    return sig->form;
}

const char *
eu_httpsig_base(const struct eu_httpsig *sig)
{
    return sig->base;
}

enum eu_httpsig_result
eu_httpsig_verify(const struct eu_httpsig *sig, struct evp_pkey_st *key)
{
    enum eu_httpsig_result r =
        eu_httpsig_verify_raw(sig->alg, key, sig->base, sig->sig, sig->siglen);
    /* Some senders sign (request-target) without the query; Mastodon
     * accepts either, and so does this. */
    if (r == EU_HTTPSIG_BAD_SIGNATURE && sig->base_no_query)
        r = eu_httpsig_verify_raw(sig->alg, key, sig->base_no_query, sig->sig, sig->siglen);
    return r;
}

enum eu_httpsig_result
eu_httpsig_verify_pem(const struct eu_httpsig *sig, const char *pem)
{
    EVP_PKEY *key = eu_httpsig_public_key_parse(pem);
    if (!key)
        return EU_HTTPSIG_BAD_KEY;
    enum eu_httpsig_result r = eu_httpsig_verify(sig, key);
    EVP_PKEY_free(key);
    return r;
}
