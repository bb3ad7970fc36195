/*
 * HTTP signatures (src/ap/httpsig.c): both forms sign and verify round trip;
 * each part of a request changed in transit fails with the reason; times,
 * digests and coverage are enforced; malformed headers are refused; and the
 * signatures other implementations published verify: RFC 9421 Appendix B.2.1
 * and B.2.3 (rsa-pss-sha512, the only RSA examples the RFC has) and
 * draft-cavage-http-signatures-12 Appendix C.1 to C.3 (rsa-sha256).
 */
#include <check.h>
#include <openssl/bio.h>
#include <openssl/encoder.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ap/httpsig_internal.h"
#include "ap/sfv_internal.h"
#include "eunha/apkeys.h"
#include "eunha/httpsig.h"

/* Made once in main(); the forked tests share them. */
static char *pub_pem, *priv_pem, *other_pub_pem, *other_priv_pem;

#define NOW ((time_t)1700000000) /* Tue, 14 Nov 2023 22:13:20 GMT */
#define BODY "{\"type\":\"Follow\"}"
#define KEY_ID "https://a.example/users/alice#main-key"

/* ------------------------------------------------------------ helpers */

/* A request as a server would see it, built from a signer's output. */
struct rq {
    struct eu_httpsig_request req;
    struct eu_httpsig_header h[16];
    struct eu_httpsig_signed out;
};

static void
rq_set(struct rq *r, const char *name, const char *value)
{
    for (size_t i = 0; i < r->req.nheaders; i++)
        if (strcasecmp(r->h[i].name, name) == 0) {
            r->h[i].value = value;
            return;
        }
    r->h[r->req.nheaders].name = name;
    r->h[r->req.nheaders].value = value;
    r->req.nheaders++;
}

static void
rq_del(struct rq *r, const char *name)
{
    for (size_t i = 0; i < r->req.nheaders; i++)
        if (strcasecmp(r->h[i].name, name) == 0) {
            r->h[i] = r->h[--r->req.nheaders];
            return;
        }
}

/* Signs method url (with BODY when body) in the given form and turns the
 * result into a received request. */
static void
rq_signed(struct rq *r, bool rfc9421, const char *method, const char *url, const char *target,
          bool body)
{
    memset(r, 0, sizeof(*r));
    struct eu_httpsig_sign_args a = {
        .method = method,
        .url = url,
        .body = body ? BODY : NULL,
        .body_len = body ? strlen(BODY) : 0,
        .key_id = KEY_ID,
        .key_pem = priv_pem,
        .now = NOW,
    };
    int rc = rfc9421 ? eu_httpsig_sign_rfc9421(&a, &r->out) : eu_httpsig_sign_cavage(&a, &r->out);
    ck_assert_int_eq(rc, 0);
    r->req = (struct eu_httpsig_request){
        .method = method,
        .scheme = "https",
        .authority = eu_httpsig_signed_get(&r->out, "Host"),
        .target = target,
        .headers = r->h,
        .body = body ? BODY : NULL,
        .body_len = body ? strlen(BODY) : 0,
    };
    for (int i = 0; i < r->out.n; i++)
        rq_set(r, r->out.headers[i].name, r->out.headers[i].value);
    rq_set(r, "Content-Type", "application/activity+json");
}

/* Parses and verifies r at now with pem; returns the first failure. */
static enum eu_httpsig_result
check_at(const struct rq *r, time_t now, const char *pem)
{
    struct eu_httpsig *sig = NULL;
    enum eu_httpsig_result res = eu_httpsig_parse(&r->req, now, &sig);
    if (res != EU_HTTPSIG_OK) {
        ck_assert_ptr_null(sig);
        return res;
    }
    ck_assert_str_eq(eu_httpsig_key_id(sig), KEY_ID);
    res = eu_httpsig_verify_pem(sig, pem);
    eu_httpsig_free(sig);
    return res;
}

static enum eu_httpsig_result
check(const struct rq *r)
{
    return check_at(r, NOW + 5, pub_pem);
}

/* The signing string eu_httpsig_parse() builds for a bare request with the
 * given signature headers (the signature itself is not checked). */
static char *
base_of(const struct eu_httpsig_request *req, time_t now, enum eu_httpsig_result want)
{
    struct eu_httpsig *sig = NULL;
    ck_assert_int_eq(eu_httpsig_parse(req, now, &sig), want);
    if (!sig)
        return NULL;
    char *b = strdup(eu_httpsig_base(sig));
    eu_httpsig_free(sig);
    return b;
}

/* ------------------------------------------------------------ digests, dates */

START_TEST(digests)
{
    /* draft-cavage C and RFC 9421 B.2 give these for {"hello": "world"}. */
    const char *hello = "{\"hello\": \"world\"}";
    char *d = eu_httpsig_digest(hello, strlen(hello));
    ck_assert_str_eq(d, "SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=");
    free(d);
    d = eu_httpsig_content_digest(hello, strlen(hello));
    ck_assert_str_eq(d, "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:");
    free(d);
    ck_assert_int_eq(eu_httpsig_content_digest_check(
                         "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BN"
                         "NyealdVLvRwEmTHWXvJwew==:",
                         hello, strlen(hello)),
                     EU_HTTPSIG_OK);
    ck_assert_int_eq(eu_httpsig_digest_check("sha-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=",
                                             hello, strlen(hello)),
                     EU_HTTPSIG_OK);
    /* Every understood entry must match; unknown ones are skipped. */
    ck_assert_int_eq(
        eu_httpsig_digest_check(
            "MD5=abc=,SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=", hello, strlen(hello)),
        EU_HTTPSIG_OK);
    ck_assert_int_eq(eu_httpsig_digest_check("SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=",
                                             hello, strlen(hello) - 1),
                     EU_HTTPSIG_DIGEST_MISMATCH);
    ck_assert_int_eq(eu_httpsig_digest_check("MD5=abc=", hello, 3), EU_HTTPSIG_UNSUPPORTED);
    ck_assert_int_eq(eu_httpsig_digest_check("SHA-256=not*base64", hello, 3), EU_HTTPSIG_MALFORMED);
    ck_assert_int_eq(eu_httpsig_digest_check("SHA-256", hello, 3), EU_HTTPSIG_MALFORMED);
    ck_assert_int_eq(eu_httpsig_content_digest_check("sha-256=\"text\"", hello, 3),
                     EU_HTTPSIG_MALFORMED);
    ck_assert_int_eq(eu_httpsig_content_digest_check("sha-256=:AAAA:,", hello, 3),
                     EU_HTTPSIG_MALFORMED);
    ck_assert_int_eq(eu_httpsig_content_digest_check("sha-256=:AAAA:", hello, 3),
                     EU_HTTPSIG_DIGEST_MISMATCH);
    ck_assert_int_eq(eu_httpsig_content_digest_check("md5=:AAAA:", hello, 3),
                     EU_HTTPSIG_UNSUPPORTED);
}
END_TEST

START_TEST(dates)
{
    char buf[30];
    eu_httpsig_date_format(NOW, buf);
    ck_assert_str_eq(buf, "Tue, 14 Nov 2023 22:13:20 GMT");
    time_t t = 0;
    ck_assert_int_eq(eu_httpsig_date_parse(buf, &t), 0);
    ck_assert_int_eq(t, NOW);
    ck_assert_int_eq(eu_httpsig_date_parse("Sun, 05 Jan 2014 21:31:40 GMT", &t), 0);
    ck_assert_int_eq(t, 1388957500);
    const char *bad[] = {"",
                         "Sun, 05 Jan 2014 21:31:40 UTC",
                         "Sunday, 05-Jan-14 21:31:40 GMT",
                         "Sun Jan  5 21:31:40 2014",
                         "Sun, 31 Feb 2014 21:31:40 GMT",
                         "Sun, 05 Jab 2014 21:31:40 GMT",
                         "Sun, 05 Jan 2014 25:31:40 GMT",
                         "Sun, 05 Jan 2014 21:31:40 GMT ",
                         "Xyz, 05 Jan 2014 21:31:40 GMT",
                         "Sun, 0x Jan 2014 21:31:40 GMT"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(eu_httpsig_date_parse(bad[i], &t) < 0, "accepted '%s'", bad[i]);
}
END_TEST

/* ------------------------------------------------------------ round trips */

START_TEST(cavage_round_trip)
{
    struct rq r;
    rq_signed(&r, false, "POST", "https://B.example/users/bob/inbox", "/users/bob/inbox", true);
    ck_assert_str_eq(eu_httpsig_signed_get(&r.out, "Host"), "b.example");
    ck_assert_str_eq(eu_httpsig_signed_get(&r.out, "Date"), "Tue, 14 Nov 2023 22:13:20 GMT");
    ck_assert_ptr_nonnull(eu_httpsig_signed_get(&r.out, "Digest"));
    const char *s = eu_httpsig_signed_get(&r.out, "Signature");
    ck_assert_ptr_nonnull(strstr(s, "keyId=\"" KEY_ID "\",algorithm=\"rsa-sha256\","
                                    "headers=\"(request-target) host date digest\",signature=\""));
    ck_assert_int_eq(check(&r), EU_HTTPSIG_OK);

    struct eu_httpsig *sig = NULL;
    ck_assert_int_eq(eu_httpsig_parse(&r.req, NOW, &sig), EU_HTTPSIG_OK);
    ck_assert_int_eq(eu_httpsig_form(sig), EU_HTTPSIG_CAVAGE);
    char *digest = eu_httpsig_digest(BODY, strlen(BODY));
    char *want = NULL;
    ck_assert_int_ge(asprintf(&want,
                              "(request-target): post /users/bob/inbox\nhost: b.example\n"
                              "date: Tue, 14 Nov 2023 22:13:20 GMT\ndigest: %s",
                              digest),
                     0);
    ck_assert_str_eq(eu_httpsig_base(sig), want);
    /* The same with a parsed key, and with the other key. */
    EVP_PKEY *k = eu_httpsig_public_key_parse(pub_pem);
    ck_assert_int_eq(eu_httpsig_verify(sig, k), EU_HTTPSIG_OK);
    EVP_PKEY_free(k);
    ck_assert_int_eq(eu_httpsig_verify_pem(sig, other_pub_pem), EU_HTTPSIG_BAD_SIGNATURE);
    eu_httpsig_free(sig);
    free(want);
    free(digest);
    eu_httpsig_signed_release(&r.out);

    /* A GET signs no digest; the port and query are kept. */
    rq_signed(&r, false, "GET", "https://b.example:8443/users/bob?page=1#x", "/users/bob?page=1",
              false);
    ck_assert_str_eq(eu_httpsig_signed_get(&r.out, "Host"), "b.example:8443");
    ck_assert_ptr_null(eu_httpsig_signed_get(&r.out, "Digest"));
    ck_assert_ptr_nonnull(strstr(eu_httpsig_signed_get(&r.out, "Signature"),
                                 "headers=\"(request-target) host date\""));
    ck_assert_int_eq(check(&r), EU_HTTPSIG_OK);
    eu_httpsig_signed_release(&r.out);
}
END_TEST

START_TEST(rfc9421_round_trip)
{
    struct rq r;
    rq_signed(&r, true, "POST", "https://b.example:443/users/bob/inbox", "/users/bob/inbox", true);
    ck_assert_str_eq(eu_httpsig_signed_get(&r.out, "Host"), "b.example");
    ck_assert_str_eq(eu_httpsig_signed_get(&r.out, "Signature-Input"),
                     "sig1=(\"@method\" \"@target-uri\" \"content-digest\");created=1700000000;"
                     "keyid=\"" KEY_ID "\";alg=\"rsa-v1_5-sha256\"");
    const char *cd = eu_httpsig_signed_get(&r.out, "Content-Digest");
    ck_assert_ptr_nonnull(cd);
    ck_assert_int_eq(strncmp(eu_httpsig_signed_get(&r.out, "Signature"), "sig1=:", 6), 0);
    ck_assert_int_eq(check(&r), EU_HTTPSIG_OK);

    struct eu_httpsig *sig = NULL;
    ck_assert_int_eq(eu_httpsig_parse(&r.req, NOW, &sig), EU_HTTPSIG_OK);
    ck_assert_int_eq(eu_httpsig_form(sig), EU_HTTPSIG_RFC9421);
    char *want = NULL;
    ck_assert_int_ge(
        asprintf(&want,
                 "\"@method\": POST\n\"@target-uri\": https://b.example/users/bob/inbox\n"
                 "\"content-digest\": %s\n\"@signature-params\": (\"@method\" "
                 "\"@target-uri\" \"content-digest\");created=1700000000;keyid=\"" KEY_ID
                 "\";alg=\"rsa-v1_5-sha256\"",
                 cd),
        0);
    ck_assert_str_eq(eu_httpsig_base(sig), want);
    free(want);
    eu_httpsig_free(sig);
    eu_httpsig_signed_release(&r.out);

    rq_signed(&r, true, "GET", "https://b.example/users/bob?page=1", "/users/bob?page=1", false);
    ck_assert_ptr_null(eu_httpsig_signed_get(&r.out, "Content-Digest"));
    ck_assert_int_eq(check(&r), EU_HTTPSIG_OK);
    eu_httpsig_signed_release(&r.out);
}
END_TEST

START_TEST(sign_refuses_bad_input)
{
    struct eu_httpsig_signed out;
    struct eu_httpsig_sign_args a = {.method = "GET",
                                     .url = "https://b.example/x",
                                     .key_id = KEY_ID,
                                     .key_pem = priv_pem,
                                     .now = NOW};
    const char *urls[] = {"ftp://b.example/x",     "https:///x",  "https://u@b.example/x",
                          "https://b.example/a b", "b.example/x", "https://b.example/\r\nX: y"};
    for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
        a.url = urls[i];
        ck_assert_msg(eu_httpsig_sign_cavage(&a, &out) < 0, "signed '%s'", urls[i]);
        ck_assert_int_eq(out.n, 0);
        ck_assert_int_lt(eu_httpsig_sign_rfc9421(&a, &out), 0);
    }
    a.url = "https://b.example/x";
    a.key_id = "has \"quote\"";
    ck_assert_int_lt(eu_httpsig_sign_cavage(&a, &out), 0);
    a.key_id = KEY_ID;
    a.key_pem = pub_pem; /* not a private key */
    ck_assert_int_lt(eu_httpsig_sign_cavage(&a, &out), 0);
    a.key_pem = "garbage";
    ck_assert_int_lt(eu_httpsig_sign_rfc9421(&a, &out), 0);
    /* The URL without a path signs "/". */
    a.key_pem = priv_pem;
    a.url = "http://b.example?q=1";
    ck_assert_int_eq(eu_httpsig_sign_cavage(&a, &out), 0);
    struct rq r = {0};
    r.req = (struct eu_httpsig_request){.method = "GET",
                                        .scheme = "http",
                                        .authority = "b.example",
                                        .target = "/?q=1",
                                        .headers = r.h};
    for (int i = 0; i < out.n; i++)
        rq_set(&r, out.headers[i].name, out.headers[i].value);
    ck_assert_int_eq(check(&r), EU_HTTPSIG_OK);
    eu_httpsig_signed_release(&out);
}
END_TEST

/* ------------------------------------------------------------ tampering */

static void
tamper_common(bool rfc9421)
{
    struct rq r;
    /* Method: the signed string names it. */
    rq_signed(&r, rfc9421, "POST", "https://b.example/inbox", "/inbox", true);
    r.req.method = "PUT";
    ck_assert_int_eq(check(&r), EU_HTTPSIG_BAD_SIGNATURE);
    eu_httpsig_signed_release(&r.out);
    /* Path. */
    rq_signed(&r, rfc9421, "POST", "https://b.example/inbox", "/users/bob/inbox", true);
    ck_assert_int_eq(check(&r), EU_HTTPSIG_BAD_SIGNATURE);
    eu_httpsig_signed_release(&r.out);
    /* Query added by someone else. */
    rq_signed(&r, rfc9421, "GET", "https://b.example/outbox?page=1", "/outbox?page=2", false);
    ck_assert_int_eq(check(&r), EU_HTTPSIG_BAD_SIGNATURE);
    eu_httpsig_signed_release(&r.out);
    /* Host: replayed to another tenant of the same server. */
    rq_signed(&r, rfc9421, "POST", "https://b.example/inbox", "/inbox", true);
    rq_set(&r, "Host", "c.example");
    r.req.authority = "c.example";
    ck_assert_int_eq(check(&r), EU_HTTPSIG_BAD_SIGNATURE);
    eu_httpsig_signed_release(&r.out);
    /* Body: its digest no longer matches. */
    rq_signed(&r, rfc9421, "POST", "https://b.example/inbox", "/inbox", true);
    r.req.body = "{\"type\":\"Block\"}";
    ck_assert_int_eq(check(&r), EU_HTTPSIG_DIGEST_MISMATCH);
    /* ... and a digest header rewritten to match the new body. */
    char *d = rfc9421 ? eu_httpsig_content_digest(r.req.body, r.req.body_len)
                      : eu_httpsig_digest(r.req.body, r.req.body_len);
    rq_set(&r, rfc9421 ? "Content-Digest" : "Digest", d);
    ck_assert_int_eq(check(&r), EU_HTTPSIG_BAD_SIGNATURE);
    free(d);
    eu_httpsig_signed_release(&r.out);
    /* A body on a request signed without one. */
    rq_signed(&r, rfc9421, "GET", "https://b.example/inbox", "/inbox", false);
    r.req.body = BODY;
    r.req.body_len = strlen(BODY);
    ck_assert_int_eq(check(&r), EU_HTTPSIG_NOT_COVERED);
    eu_httpsig_signed_release(&r.out);
    /* The signature bytes. */
    rq_signed(&r, rfc9421, "GET", "https://b.example/inbox", "/inbox", false);
    char *s = strdup(eu_httpsig_signed_get(&r.out, "Signature"));
    char *p = strstr(s, rfc9421 ? "sig1=:" : "signature=\"");
    p += rfc9421 ? 6 : 11;
    *p = *p == 'A' ? 'B' : 'A';
    rq_set(&r, "Signature", s);
    ck_assert_int_eq(check(&r), EU_HTTPSIG_BAD_SIGNATURE);
    /* A covered header gone. */
    rq_set(&r, "Signature", eu_httpsig_signed_get(&r.out, "Signature"));
    if (!rfc9421) {
        rq_del(&r, "Host");
        ck_assert_int_eq(check(&r), EU_HTTPSIG_MISSING_HEADER);
    }
    free(s);
    eu_httpsig_signed_release(&r.out);
}

START_TEST(cavage_tampered)
{
    tamper_common(false);
    struct rq r;
    /* Date: covered, so changing it breaks the signature. */
    rq_signed(&r, false, "POST", "https://b.example/inbox", "/inbox", true);
    rq_set(&r, "Date", "Tue, 14 Nov 2023 22:13:21 GMT");
    ck_assert_int_eq(check(&r), EU_HTTPSIG_BAD_SIGNATURE);
    rq_del(&r, "Date");
    ck_assert_int_eq(check(&r), EU_HTTPSIG_MISSING_HEADER);
    rq_set(&r, "Date", "yesterday");
    ck_assert_int_eq(check(&r), EU_HTTPSIG_MALFORMED);
    /* A header that is repeated joins: the signed Digest value changes. */
    rq_set(&r, "Date", eu_httpsig_signed_get(&r.out, "Date"));
    r.h[r.req.nheaders++] = (struct eu_httpsig_header){"Digest", "SHA-512=AAAA"};
    ck_assert_int_eq(check(&r), EU_HTTPSIG_DIGEST_MISMATCH);
    eu_httpsig_signed_release(&r.out);
}
END_TEST

START_TEST(rfc9421_tampered)
{
    tamper_common(true);
    struct rq r;
    /* The parameters are signed too: a later created breaks it. */
    rq_signed(&r, true, "POST", "https://b.example/inbox", "/inbox", true);
    char *in = strdup(eu_httpsig_signed_get(&r.out, "Signature-Input"));
    char *c = strstr(in, "created=1700000000");
    c[17] = '1';
    rq_set(&r, "Signature-Input", in);
    ck_assert_int_eq(check(&r), EU_HTTPSIG_BAD_SIGNATURE);
    free(in);
    /* The scheme is part of @target-uri. */
    rq_set(&r, "Signature-Input", eu_httpsig_signed_get(&r.out, "Signature-Input"));
    r.req.scheme = "http";
    ck_assert_int_eq(check(&r), EU_HTTPSIG_BAD_SIGNATURE);
    /* Date is not covered: it may change. */
    r.req.scheme = "https";
    rq_set(&r, "Date", "Mon, 01 Jan 2001 00:00:00 GMT");
    ck_assert_int_eq(check(&r), EU_HTTPSIG_OK);
    eu_httpsig_signed_release(&r.out);
}
END_TEST

/* ------------------------------------------------------------ times */

START_TEST(times)
{
    struct rq r;
    for (int form = 0; form < 2; form++) {
        rq_signed(&r, form, "POST", "https://b.example/inbox", "/inbox", true);
        ck_assert_int_eq(check_at(&r, NOW + 12 * 3600, pub_pem), EU_HTTPSIG_OK);
        ck_assert_int_eq(check_at(&r, NOW + 12 * 3600 + 1, pub_pem), EU_HTTPSIG_EXPIRED);
        ck_assert_int_eq(check_at(&r, NOW + 30 * 86400, pub_pem), EU_HTTPSIG_EXPIRED);
        ck_assert_int_eq(check_at(&r, NOW - 30, pub_pem), EU_HTTPSIG_OK);
        /* From the future: RFC 9421 allows a minute, cavage's Date an hour. */
        ck_assert_int_eq(check_at(&r, NOW - 61, pub_pem),
                         form ? EU_HTTPSIG_EXPIRED : EU_HTTPSIG_OK);
        ck_assert_int_eq(check_at(&r, NOW - 3601, pub_pem), EU_HTTPSIG_EXPIRED);
        eu_httpsig_signed_release(&r.out);
    }
    /* expires in the past. */
    struct eu_httpsig_header h[] = {
        {"Signature-Input", "sig1=(\"@method\" \"@target-uri\");created=1700000000;"
                            "expires=1700000010;keyid=\"k\""},
        {"Signature", "sig1=:AAAA:"},
    };
    struct eu_httpsig_request req = {.method = "GET",
                                     .scheme = "https",
                                     .authority = "b.example",
                                     .target = "/",
                                     .headers = h,
                                     .nheaders = 2};
    free(base_of(&req, NOW + 5, EU_HTTPSIG_OK));
    free(base_of(&req, NOW + 11, EU_HTTPSIG_EXPIRED));
}
END_TEST

/* ------------------------------------------------------------ coverage, parsing */

/* A bare GET (or POST with a body) with one signature header. */
static struct eu_httpsig_request
bare(struct eu_httpsig_header *h, size_t n, const char *method)
{
    bool post = strcmp(method, "POST") == 0;
    return (struct eu_httpsig_request){.method = method,
                                       .scheme = "https",
                                       .authority = "example.com",
                                       .target = "/foo?param=value&pet=dog",
                                       .headers = h,
                                       .nheaders = n,
                                       .body = post ? "{\"hello\": \"world\"}" : NULL,
                                       .body_len = post ? 18 : 0};
}

static enum eu_httpsig_result
parse_one(struct eu_httpsig_request *req)
{
    struct eu_httpsig *sig = NULL;
    enum eu_httpsig_result r = eu_httpsig_parse(req, 1388957500, &sig);
    eu_httpsig_free(sig);
    return r;
}

START_TEST(cavage_parsing)
{
    struct eu_httpsig_header h[8] = {
        {"Host", "example.com"},
        {"Date", "Sun, 05 Jan 2014 21:31:40 GMT"},
        {"Digest", "SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="},
        {"X-A", " one "},
        {"x-a", "two\t"},
        {"Signature", NULL},
    };
    struct eu_httpsig_request req = bare(h, 6, "GET");
    struct {
        const char *sig;
        enum eu_httpsig_result want;
    } cases[] = {
        {"keyId=\"k\",algorithm=\"rsa-sha256\",headers=\"(request-target) host date\","
         "signature=\"AAAA\"",
         EU_HTTPSIG_OK},
        /* Spaces, unknown parameters, upper-case header names, hs2019. */
        {" keyId = \"k\" , extra=\"x\", headers=\"(Request-Target) HOST Date\", "
         "signature=\"AAAA\",algorithm=hs2019",
         EU_HTTPSIG_OK},
        {"keyId=\"k\",signature=\"AAAA\"", EU_HTTPSIG_NOT_COVERED},
        {"keyId=\"k\",headers=\"host date\",signature=\"AAAA\"", EU_HTTPSIG_NOT_COVERED},
        {"keyId=\"k\",headers=\"(request-target) date\",signature=\"AAAA\"",
         EU_HTTPSIG_NOT_COVERED},
        {"keyId=\"k\",headers=\"(request-target) host\",signature=\"AAAA\"",
         EU_HTTPSIG_NOT_COVERED},
        {"keyId=\"k\",headers=\"(request-target) host date x-missing\",signature=\"AAAA\"",
         EU_HTTPSIG_MISSING_HEADER},
        {"keyId=\"k\",keyId=\"j\",headers=\"(request-target) host date\",signature=\"AAAA\"",
         EU_HTTPSIG_MALFORMED},
        {"headers=\"(request-target) host date\",signature=\"AAAA\"", EU_HTTPSIG_MALFORMED},
        {"keyId=\"k\",headers=\"(request-target) host date\"", EU_HTTPSIG_MALFORMED},
        {"keyId=\"k\",headers=\"(request-target) host date\",signature=\"AAAA",
         EU_HTTPSIG_MALFORMED},
        {"keyId=\"k\",headers=\"(request-target) host date\",signature=\"not base64!\"",
         EU_HTTPSIG_MALFORMED},
        {"keyId=\"k\",headers=\"(request-target) host date host\",signature=\"AAAA\"",
         EU_HTTPSIG_MALFORMED},
        {"keyId=\"k\" headers=\"(request-target) host date\",signature=\"AAAA\"",
         EU_HTTPSIG_MALFORMED},
        {"keyId=\"\",headers=\"(request-target) host date\",signature=\"AAAA\"",
         EU_HTTPSIG_MALFORMED},
        {"keyId=\"k\",headers=\"\",signature=\"AAAA\"", EU_HTTPSIG_MALFORMED},
        {"=\"k\",signature=\"AAAA\"", EU_HTTPSIG_MALFORMED},
        {"keyId=\"k\",algorithm=\"ecdsa-sha256\",headers=\"(request-target) host date\","
         "signature=\"AAAA\"",
         EU_HTTPSIG_UNSUPPORTED},
        {"keyId=\"k\",algorithm=\"hs2019\",headers=\"(request-target) host date (other)\","
         "signature=\"AAAA\"",
         EU_HTTPSIG_UNSUPPORTED},
        /* (created) is hs2019's alone, and needs its parameter. */
        {"keyId=\"k\",algorithm=\"rsa-sha256\",created=1388957500,"
         "headers=\"(request-target) host (created)\",signature=\"AAAA\"",
         EU_HTTPSIG_NOT_COVERED},
        {"keyId=\"k\",algorithm=\"hs2019\",created=1388957500,"
         "headers=\"(request-target) host (created)\",signature=\"AAAA\"",
         EU_HTTPSIG_OK},
        {"keyId=\"k\",algorithm=\"hs2019\",headers=\"(request-target) host (created)\","
         "signature=\"AAAA\"",
         EU_HTTPSIG_MALFORMED},
        {"keyId=\"k\",algorithm=\"hs2019\",created=1388950000,"
         "headers=\"(request-target) host (created)\",signature=\"AAAA\"",
         EU_HTTPSIG_OK},
        {"keyId=\"k\",algorithm=\"hs2019\",created=1388957600,"
         "headers=\"(request-target) host (created)\",signature=\"AAAA\"",
         EU_HTTPSIG_EXPIRED},
        {"keyId=\"k\",algorithm=\"hs2019\",created=1388957500,expires=1388957400,"
         "headers=\"(request-target) host (created)\",signature=\"AAAA\"",
         EU_HTTPSIG_EXPIRED},
        {"keyId=\"k\",algorithm=\"hs2019\",created=13889x7500,"
         "headers=\"(request-target) host (created)\",signature=\"AAAA\"",
         EU_HTTPSIG_MALFORMED},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        h[5].value = cases[i].sig;
        ck_assert_msg(parse_one(&req) == cases[i].want, "case %zu: got %d, want %d", i,
                      parse_one(&req), cases[i].want);
    }
    /* A POST must cover its digest, which must match. */
    req = bare(h, 6, "POST");
    h[5].value = "keyId=\"k\",headers=\"(request-target) host date\",signature=\"AAAA\"";
    ck_assert_int_eq(parse_one(&req), EU_HTTPSIG_NOT_COVERED);
    h[5].value = "keyId=\"k\",headers=\"(request-target) host date digest\",signature=\"AAAA\"";
    ck_assert_int_eq(parse_one(&req), EU_HTTPSIG_OK);
    req.body_len = 17;
    ck_assert_int_eq(parse_one(&req), EU_HTTPSIG_DIGEST_MISMATCH);
    h[2].value = "MD5=Sd/dVLAcvNLSq16eXua5uQ==";
    ck_assert_int_eq(parse_one(&req), EU_HTTPSIG_DIGEST_MISMATCH);

    /* Repeated headers join with ", ", each value trimmed; the query is
     * kept, and a base without it is there for senders that leave it out. */
    req = bare(h, 6, "GET");
    h[5].value = "keyId=\"k\",headers=\"(request-target) host date x-a\",signature=\"AAAA\"";
    char *b = base_of(&req, 1388957500, EU_HTTPSIG_OK);
    ck_assert_str_eq(b, "(request-target): get /foo?param=value&pet=dog\nhost: example.com\n"
                        "date: Sun, 05 Jan 2014 21:31:40 GMT\nx-a: one, two");
    free(b);
    /* A value with a line break would forge a line. */
    h[4].value = "two\nhost: evil";
    ck_assert_int_eq(parse_one(&req), EU_HTTPSIG_MALFORMED);
    h[4].value = "two";

    /* Authorization: Signature ..., when there is no Signature header. */
    h[5] = (struct eu_httpsig_header){"Authorization",
                                      "Signature keyId=\"k\",headers=\"(request-target) host "
                                      "date\",signature=\"AAAA\""};
    ck_assert_int_eq(parse_one(&req), EU_HTTPSIG_OK);
    h[5].value = "Bearer abc";
    ck_assert_int_eq(parse_one(&req), EU_HTTPSIG_NONE);
    req.nheaders = 5;
    ck_assert_int_eq(parse_one(&req), EU_HTTPSIG_NONE);
    /* Too long. */
    char *big = malloc(EU_HTTPSIG_MAX_HEADER + 100);
    memset(big, 'a', EU_HTTPSIG_MAX_HEADER + 99);
    big[EU_HTTPSIG_MAX_HEADER + 99] = '\0';
    memcpy(big, "keyId=\"", 7);
    h[5] = (struct eu_httpsig_header){"Signature", big};
    req.nheaders = 6;
    ck_assert_int_eq(parse_one(&req), EU_HTTPSIG_MALFORMED);
    free(big);
}
END_TEST

START_TEST(rfc9421_parsing)
{
    struct eu_httpsig_header h[8] = {
        {"Host", "example.com"},
        {"Content-Digest", "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:"},
        {"Signature-Input", NULL},
        {"Signature", "sig1=:AAAA:, other=:AAAA:"},
    };
    struct eu_httpsig_request req = bare(h, 4, "GET");
    struct {
        const char *in;
        enum eu_httpsig_result want;
    } cases[] = {
        {"sig1=(\"@method\" \"@target-uri\");created=1388957500;keyid=\"k\"", EU_HTTPSIG_OK},
        {"sig1=(\"@method\" \"@path\" \"@authority\");created=1388957500;keyid=\"k\"",
         EU_HTTPSIG_OK},
        {"sig1=(\"@method\" \"@path\" \"host\");created=1388957500;keyid=\"k\";nonce=\"n\";"
         "tag=\"t\";alg=\"rsa-pss-sha512\"",
         EU_HTTPSIG_OK},
        /* The first label with a signature is the one read. */
        {"nope=(\"@method\");created=1;keyid=\"k\", other=(\"@method\" \"@target-uri\");"
         "created=1388957500;keyid=\"k\"",
         EU_HTTPSIG_OK},
        {"sig1=(\"@method\" \"@path\");created=1388957500;keyid=\"k\"", EU_HTTPSIG_NOT_COVERED},
        {"sig1=(\"@target-uri\");created=1388957500;keyid=\"k\"", EU_HTTPSIG_NOT_COVERED},
        {"sig1=();created=1388957500;keyid=\"k\"", EU_HTTPSIG_NOT_COVERED},
        {"sig1=(\"@method\" \"@target-uri\" \"x-missing\");created=1388957500;keyid=\"k\"",
         EU_HTTPSIG_MISSING_HEADER},
        {"sig1=(\"@method\" \"@target-uri\" \"@status\");created=1388957500;keyid=\"k\"",
         EU_HTTPSIG_UNSUPPORTED},
        {"sig1=(\"@method\" \"@target-uri\" \"@query-param\";name=\"a\");created=1388957500;"
         "keyid=\"k\"",
         EU_HTTPSIG_UNSUPPORTED},
        {"sig1=(\"@method\" \"@target-uri\");created=1388957500;keyid=\"k\";alg=\"ed25519\"",
         EU_HTTPSIG_UNSUPPORTED},
        {"sig1=(\"@method\" \"@target-uri\");keyid=\"k\"", EU_HTTPSIG_MALFORMED},
        {"sig1=(\"@method\" \"@target-uri\");created=1388957500", EU_HTTPSIG_MALFORMED},
        {"sig1=(\"@method\" \"@target-uri\");created=\"1388957500\";keyid=\"k\"",
         EU_HTTPSIG_MALFORMED},
        {"sig1=(\"@method\" \"@target-uri\");created=1388957500;keyid=k", EU_HTTPSIG_MALFORMED},
        {"sig1=(\"@method\" \"@target-uri\");created=1388957500;created=1;keyid=\"k\"",
         EU_HTTPSIG_MALFORMED},
        {"sig1=(\"@method\" \"@target-uri\");created=1388957500;keyid=\"k\", sig1=()",
         EU_HTTPSIG_MALFORMED},
        {"sig1=(\"@method\" \"@method\" \"@target-uri\");created=1388957500;keyid=\"k\"",
         EU_HTTPSIG_MALFORMED},
        {"sig1=(\"@Method\" \"@target-uri\");created=1388957500;keyid=\"k\"", EU_HTTPSIG_MALFORMED},
        {"sig1=(@method \"@target-uri\");created=1388957500;keyid=\"k\"", EU_HTTPSIG_MALFORMED},
        {"sig1=(", EU_HTTPSIG_MALFORMED},
        {"sig1=(\"@method\" \"@target-uri\");created=1388957500;keyid=\"k\",",
         EU_HTTPSIG_MALFORMED},
        {"nomatch=(\"@method\" \"@target-uri\");created=1388957500;keyid=\"k\"",
         EU_HTTPSIG_MALFORMED},
        {"sig1=(\"@method\" \"@target-uri\");created=1388957561;keyid=\"k\"", EU_HTTPSIG_EXPIRED},
        {"sig1=(\"@method\" \"@target-uri\");created=1388914299;keyid=\"k\"", EU_HTTPSIG_EXPIRED},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        h[2].value = cases[i].in;
        ck_assert_msg(parse_one(&req) == cases[i].want, "case %zu: got %d, want %d", i,
                      parse_one(&req), cases[i].want);
    }
    /* A POST covers its Content-Digest, which must match. */
    req = bare(h, 4, "POST");
    h[2].value = "sig1=(\"@method\" \"@target-uri\");created=1388957500;keyid=\"k\"";
    ck_assert_int_eq(parse_one(&req), EU_HTTPSIG_NOT_COVERED);
    h[2].value = "sig1=(\"@method\" \"@target-uri\" \"content-digest\");created=1388957500;"
                 "keyid=\"k\"";
    ck_assert_int_eq(parse_one(&req), EU_HTTPSIG_OK);
    req.body_len = 1;
    ck_assert_int_eq(parse_one(&req), EU_HTTPSIG_DIGEST_MISMATCH);
    /* No body with a length left set is the empty body (fuzz_httpsig found
     * the digest read the length from a one-byte string). */
    req.method = "GET";
    req.body = NULL;
    req.body_len = 18;
    ck_assert_int_eq(parse_one(&req), EU_HTTPSIG_DIGEST_MISMATCH);
    /* The signature itself must be a byte sequence. */
    req = bare(h, 4, "GET");
    h[2].value = "sig1=(\"@method\" \"@target-uri\");created=1388957500;keyid=\"k\"";
    h[3].value = "sig1=\"AAAA\"";
    ck_assert_int_eq(parse_one(&req), EU_HTTPSIG_MALFORMED);
    h[3].value = "sig1=::";
    ck_assert_int_eq(parse_one(&req), EU_HTTPSIG_MALFORMED);
    req.nheaders = 3;
    ck_assert_int_eq(parse_one(&req), EU_HTTPSIG_MALFORMED);

    /* The signature base: derived components from the request as received,
     * and @signature-params re-serialised the canonical way. */
    h[3].value = "sig1=:AAAA:";
    req.nheaders = 4;
    h[2].value = "sig1=(  \"@method\" \"@target-uri\"  \"@authority\" \"@scheme\" "
                 "\"@request-target\" \"@path\" \"@query\" \"host\"  );created=1388957500;"
                 "keyid=\"a \\\"b\\\\\";x=?1;y=1.50;z=:AAAA:;t=tok";
    req.authority = "Example.COM";
    char *b = base_of(&req, 1388957500, EU_HTTPSIG_OK);
    ck_assert_str_eq(b, "\"@method\": GET\n"
                        "\"@target-uri\": https://Example.COM/foo?param=value&pet=dog\n"
                        "\"@authority\": example.com\n"
                        "\"@scheme\": https\n"
                        "\"@request-target\": /foo?param=value&pet=dog\n"
                        "\"@path\": /foo\n"
                        "\"@query\": ?param=value&pet=dog\n"
                        "\"host\": example.com\n"
                        "\"@signature-params\": (\"@method\" \"@target-uri\" \"@authority\" "
                        "\"@scheme\" \"@request-target\" \"@path\" \"@query\" \"host\");"
                        "created=1388957500;keyid=\"a \\\"b\\\\\";x;y=1.5;z=:AAAA:;t=tok");
    free(b);
    req.target = "/";
    h[2].value = "sig1=(\"@method\" \"@target-uri\" \"@query\");created=1388957500;keyid=\"k\"";
    b = base_of(&req, 1388957500, EU_HTTPSIG_OK);
    ck_assert_ptr_nonnull(strstr(b, "\"@query\": ?\n"));
    free(b);
}
END_TEST

/* ------------------------------------------------------------ published examples */

/* RFC 9421 B.1.2 test-key-rsa-pss, public half. */
static const char rfc_pss_pub[] =
    "-----BEGIN PUBLIC KEY-----\n"
    "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAr4tmm3r20Wd/PbqvP1s2\n"
    "+QEtvpuRaV8Yq40gjUR8y2Rjxa6dpG2GXHbPfvMs8ct+Lh1GH45x28Rw3Ry53mm+\n"
    "oAXjyQ86OnDkZ5N8lYbggD4O3w6M6pAvLkhk95AndTrifbIFPNU8PPMO7OyrFAHq\n"
    "gDsznjPFmTOtCEcN2Z1FpWgchwuYLPL+Wokqltd11nqqzi+bJ9cvSKADYdUAAN5W\n"
    "Utzdpiy6LbTgSxP7ociU4Tn0g5I6aDZJ7A8Lzo0KSyZYoA485mqcO0GVAdVw9lq4\n"
    "aOT9v6d+nb4bnNkQVklLQ3fVAvJm+xdDOp9LCNCN48V2pnDOkFV6+U9nV5oyc6XI\n"
    "2wIDAQAB\n"
    "-----END PUBLIC KEY-----\n";

/* The B.2 test request. */
static struct eu_httpsig_header rfc_headers[] = {
    {"Host", "example.com"},
    {"Date", "Tue, 20 Apr 2021 02:07:55 GMT"},
    {"Content-Type", "application/json"},
    {"Content-Digest", "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNN"
                       "yealdVLvRwEmTHWXvJwew==:"},
    {"Content-Length", "18"},
    {"Signature-Input", "sig-b23=(\"date\" \"@method\" \"@path\" \"@query\" \"@authority\" "
                        "\"content-type\" \"content-digest\" \"content-length\");"
                        "created=1618884473;keyid=\"test-key-rsa-pss\""},
    {"Signature", "sig-b23=:bbN8oArOxYoyylQQUU6QYwrTuaxLwjAC9fbY2F6SVWvh0yBiMIRGOnMYwZ/5MR6fb0Kh1"
                  "rIRASVxFkeGt683+qRpRRU5p2voTp768ZrCUb38K0fUxN0O0iC59DzYx8DFll5GmydPxSmme9v6ULb"
                  "MFkl+V5B1TP/yPViV7KsLNmvKiLJH1pFkh/aYA2HXXZzNBXmIkoQoLd7YfW91kE9o/CCoC1xMy7JA1"
                  "ipwvKvfrs65ldmlu9bpG6A9BmzhuzF8Eim5f8ui9eH8LZH896+QIF61ka39VBrohr9iyMUJpvRX2Zb"
                  "hl5ZJzSRxpJyoEZAFL2FUo5fTIztsDZKEgM4cUA==:"},
};

START_TEST(rfc9421_b23_full_coverage)
{
    struct eu_httpsig_request req = {.method = "POST",
                                     .scheme = "https",
                                     .authority = "example.com",
                                     .target = "/foo?param=Value&Pet=dog",
                                     .headers = rfc_headers,
                                     .nheaders = 7,
                                     .body = "{\"hello\": \"world\"}",
                                     .body_len = 18};
    struct eu_httpsig *sig = NULL;
    ck_assert_int_eq(eu_httpsig_parse(&req, 1618884473 + 2, &sig), EU_HTTPSIG_OK);
    ck_assert_str_eq(eu_httpsig_key_id(sig), "test-key-rsa-pss");
    /* The base B.2.3 prints. */
    ck_assert_str_eq(eu_httpsig_base(sig),
                     "\"date\": Tue, 20 Apr 2021 02:07:55 GMT\n"
                     "\"@method\": POST\n"
                     "\"@path\": /foo\n"
                     "\"@query\": ?param=Value&Pet=dog\n"
                     "\"@authority\": example.com\n"
                     "\"content-type\": application/json\n"
                     "\"content-digest\": sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+"
                     "AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:\n"
                     "\"content-length\": 18\n"
                     "\"@signature-params\": (\"date\" \"@method\" \"@path\" \"@query\" "
                     "\"@authority\" \"content-type\" \"content-digest\" \"content-length\");"
                     "created=1618884473;keyid=\"test-key-rsa-pss\"");
    /* No alg: rsa-pss-sha512 is found by trying. */
    ck_assert_int_eq(eu_httpsig_verify_pem(sig, rfc_pss_pub), EU_HTTPSIG_OK);
    ck_assert_int_eq(eu_httpsig_verify_pem(sig, pub_pem), EU_HTTPSIG_BAD_SIGNATURE);
    eu_httpsig_free(sig);

    /* Changed in transit. */
    req.target = "/foo?param=Value&Pet=cat";
    ck_assert_int_eq(eu_httpsig_parse(&req, 1618884473 + 2, &sig), EU_HTTPSIG_OK);
    ck_assert_int_eq(eu_httpsig_verify_pem(sig, rfc_pss_pub), EU_HTTPSIG_BAD_SIGNATURE);
    eu_httpsig_free(sig);
    req.target = "/foo?param=Value&Pet=dog";
    req.body = "{\"hello\": \"World\"}";
    ck_assert_int_eq(eu_httpsig_parse(&req, 1618884473 + 2, &sig), EU_HTTPSIG_DIGEST_MISMATCH);
    req.body = "{\"hello\": \"world\"}";
    ck_assert_int_eq(eu_httpsig_parse(&req, 1618884473 + 13 * 3600, &sig), EU_HTTPSIG_EXPIRED);
}
END_TEST

START_TEST(rfc9421_b21_minimal)
{
    /* B.2.1 covers nothing, which our policy refuses before any key... */
    struct eu_httpsig_header h[] = {
        {"Host", "example.com"},
        {"Signature-Input", "sig-b21=();created=1618884473;keyid=\"test-key-rsa-pss\";"
                            "nonce=\"b3k2pp5k7z-50gnwp.yemd\""},
        {"Signature", "sig-b21=:d2pmTvmbncD3xQm8E9ZV2828BjQWGgiwAaw5bAkgibUopemLJcWDy/lkbbHAve4cRAt"
                      "x31Iq786U7it++wgGxbtRxf8Udx7zFZsckzXaJMkA7ChG52eSkFxykJeNqsrWH5S+oxNFlD4dz"
                      "Vuwe8DhTSja8xxbR/Z2cOGdCbzR72rgFWhzx2VjBqJzsPLMIQKhO4DGezXehhWwE56YCE+O6c0"
                      "mKZsfxVrogUvA4HELjVKWmAvtl6UnCh8jYzuVG5WSb/QEVPnP5TmcAnLH1g+s++v6d4s8m0gCw"
                      "1fV5/SITLq9mhho8K3+7EPYTU8IU1bLhdxO5Nyt8C8ssinQ98Xw9Q==:"},
    };
    struct eu_httpsig_request req = {.method = "GET",
                                     .scheme = "https",
                                     .authority = "example.com",
                                     .target = "/foo?param=Value&Pet=dog",
                                     .headers = h,
                                     .nheaders = 3};
    struct eu_httpsig *sig = NULL;
    ck_assert_int_eq(eu_httpsig_parse(&req, 1618884473, &sig), EU_HTTPSIG_NOT_COVERED);
    /* ... but its signature checks out over the base the RFC prints. */
    struct eu_sfv_dict d;
    ck_assert_int_eq(eu_sfv_dict_parse(&d, h[2].value), 0);
    const struct eu_sfv_item *it = &d.items[d.members[0].first_item];
    unsigned char raw[512];
    size_t rawlen = 0;
    ck_assert_int_eq(sodium_base642bin(raw, sizeof(raw), it->bare.str, it->bare.len, NULL, &rawlen,
                                       NULL, sodium_base64_VARIANT_ORIGINAL),
                     0);
    eu_sfv_dict_release(&d);
    ck_assert_int_eq(eu_sfv_dict_parse(&d, h[1].value), 0);
    char *params = eu_sfv_member_serialize(&d, &d.members[0]);
    eu_sfv_dict_release(&d);
    char *base = NULL;
    ck_assert_int_ge(asprintf(&base, "\"@signature-params\": %s", params), 0);
    ck_assert_str_eq(base, "\"@signature-params\": ();created=1618884473;"
                           "keyid=\"test-key-rsa-pss\";nonce=\"b3k2pp5k7z-50gnwp.yemd\"");
    EVP_PKEY *k = eu_httpsig_public_key_parse(rfc_pss_pub);
    ck_assert_int_eq(eu_httpsig_verify_raw(EU_HTTPSIG_ALG_RSA_PSS_SHA512, k, base, raw, rawlen),
                     EU_HTTPSIG_OK);
    ck_assert_int_eq(eu_httpsig_verify_raw(EU_HTTPSIG_ALG_RSA_V15_SHA256, k, base, raw, rawlen),
                     EU_HTTPSIG_BAD_SIGNATURE);
    base[5] = 'X';
    ck_assert_int_eq(eu_httpsig_verify_raw(EU_HTTPSIG_ALG_RSA_PSS_SHA512, k, base, raw, rawlen),
                     EU_HTTPSIG_BAD_SIGNATURE);
    EVP_PKEY_free(k);
    free(base);
    free(params);
}
END_TEST

/* draft-cavage-http-signatures-12 Appendix C's "Test" key (1024 bits). */
static const char cavage_pub[] =
    "-----BEGIN PUBLIC KEY-----\n"
    "MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDCFENGw33yGihy92pDjZQhl0C3\n"
    "6rPJj+CvfSC8+q28hxA161QFNUd13wuCTUcq0Qd2qsBe/2hFyc2DCJJg0h1L78+6\n"
    "Z4UMR7EOcpfdUE9Hf3m/hs+FUR45uBJeDK1HSFHD8bHKD6kv8FPGfJTotc+2xjJw\n"
    "oYi+1hqp1fIekaxsyQIDAQAB\n"
    "-----END PUBLIC KEY-----\n";

static struct eu_httpsig_header cavage_headers[] = {
    {"Host", "example.com"},
    {"Date", "Sun, 05 Jan 2014 21:31:40 GMT"},
    {"Content-Type", "application/json"},
    {"Digest", "SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="},
    {"Content-Length", "18"},
    {"Signature",
     "keyId=\"Test\",algorithm=\"rsa-sha256\",headers=\"(request-target) host date "
     "content-type digest content-length\",signature=\"vSdrb+dS3EceC9bcwHSo4MlyKS59iFIr"
     "hgYkz8+oVLEEzmYZZvRs8rgOp+63LEM3v+MFHB32NfpB2bEKBIvB1q52LaEUHFv120V01IL+TAD48XaE"
     "RZFukWgHoBTLMhYS2Gb51gWxpeIq8knRmPnYePbF5MOkR0Zkly4zKH7s1dE=\""},
};

START_TEST(cavage_appendix_c)
{
    struct eu_httpsig_request req = {.method = "POST",
                                     .scheme = "https",
                                     .authority = "example.com",
                                     .target = "/foo?param=value&pet=dog",
                                     .headers = cavage_headers,
                                     .nheaders = 6,
                                     .body = "{\"hello\": \"world\"}",
                                     .body_len = 18};
    /* C.3, all headers. */
    struct eu_httpsig *sig = NULL;
    ck_assert_int_eq(eu_httpsig_parse(&req, 1388957500 + 60, &sig), EU_HTTPSIG_OK);
    ck_assert_str_eq(eu_httpsig_key_id(sig), "Test");
    ck_assert_str_eq(eu_httpsig_base(sig),
                     "(request-target): post /foo?param=value&pet=dog\nhost: example.com\n"
                     "date: Sun, 05 Jan 2014 21:31:40 GMT\ncontent-type: application/json\n"
                     "digest: SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=\n"
                     "content-length: 18");
    ck_assert_int_eq(eu_httpsig_verify_pem(sig, cavage_pub), EU_HTTPSIG_OK);
    eu_httpsig_free(sig);
    req.method = "PUT";
    ck_assert_int_eq(eu_httpsig_parse(&req, 1388957500, &sig), EU_HTTPSIG_OK);
    ck_assert_int_eq(eu_httpsig_verify_pem(sig, cavage_pub), EU_HTTPSIG_BAD_SIGNATURE);
    eu_httpsig_free(sig);
    req.method = "POST";

    /* C.2 covers no digest, which a POST must: refused unread... */
    struct eu_httpsig_header h[] = {
        {"Host", "example.com"},
        {"Date", "Sun, 05 Jan 2014 21:31:40 GMT"},
        {"Signature",
         "keyId=\"Test\",algorithm=\"rsa-sha256\",headers=\"(request-target) host date\","
         "signature=\"qdx+H7PHHDZgy4y/Ahn9Tny9V3GP6YgBPyUXMmoxWtLbHpUnXS2mg2+SbrQDMCJypxBLSPQR2aAj"
         "n7ndmw2iicw3HMbe8VfEdKFYRqzic+efkb3nndiv/x1xSHDJWeSWkx3ButlYSuBskLu6kd9Fswtemr3lgdDEmn0"
         "4swr2Os0=\""},
    };
    req.headers = h;
    req.nheaders = 3;
    ck_assert_int_eq(eu_httpsig_parse(&req, 1388957500, &sig), EU_HTTPSIG_NOT_COVERED);
    /* ... while its signature and C.1's check out over the strings they sign. */
    EVP_PKEY *k = eu_httpsig_public_key_parse(cavage_pub);
    ck_assert_ptr_nonnull(k);
    struct {
        const char *base, *sig;
    } raw[] = {
        {"(request-target): post /foo?param=value&pet=dog\nhost: example.com\n"
         "date: Sun, 05 Jan 2014 21:31:40 GMT",
         "qdx+H7PHHDZgy4y/Ahn9Tny9V3GP6YgBPyUXMmoxWtLbHpUnXS2mg2+SbrQDMCJypxBLSPQR2aAjn7ndmw2iicw"
         "3HMbe8VfEdKFYRqzic+efkb3nndiv/x1xSHDJWeSWkx3ButlYSuBskLu6kd9Fswtemr3lgdDEmn04swr2Os0="},
        {"date: Sun, 05 Jan 2014 21:31:40 GMT",
         "SjWJWbWN7i0wzBvtPl8rbASWz5xQW6mcJmn+ibttBqtifLN7Sazz6m79cNfwwb8DMJ5cou1s7uEGKKCs+FLEEaD"
         "V5lp7q25WqS+lavg7T8hc0GppauB6hbgEKTwblDHYGEtbGmtdHgVCk9SuS13F0hZ8FD0k/5OxEPXe5WozsbM="},
    };
    for (int i = 0; i < 2; i++) {
        unsigned char bin[256];
        size_t len = 0;
        ck_assert_int_eq(sodium_base642bin(bin, sizeof(bin), raw[i].sig, strlen(raw[i].sig), NULL,
                                           &len, NULL, sodium_base64_VARIANT_ORIGINAL),
                         0);
        ck_assert_int_eq(
            eu_httpsig_verify_raw(EU_HTTPSIG_ALG_RSA_V15_SHA256, k, raw[i].base, bin, len),
            EU_HTTPSIG_OK);
    }
    EVP_PKEY_free(k);
}
END_TEST

/* ------------------------------------------------------------ keys */

START_TEST(keys)
{
    /* A sender that signed (request-target) without the query. */
    struct rq r;
    rq_signed(&r, false, "GET", "https://b.example/outbox", "/outbox?page=true", false);
    ck_assert_int_eq(check(&r), EU_HTTPSIG_OK);
    /* The wrong key, garbage, a private key as public, an EC key. */
    ck_assert_int_eq(check_at(&r, NOW, other_pub_pem), EU_HTTPSIG_BAD_SIGNATURE);
    ck_assert_int_eq(
        check_at(&r, NOW, "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"),
        EU_HTTPSIG_BAD_KEY);
    ck_assert_int_eq(check_at(&r, NOW, ""), EU_HTTPSIG_BAD_KEY);
    EVP_PKEY *ec = EVP_EC_gen("P-256");
    struct eu_httpsig *sig = NULL;
    ck_assert_int_eq(eu_httpsig_parse(&r.req, NOW, &sig), EU_HTTPSIG_OK);
    ck_assert_int_eq(eu_httpsig_verify(sig, ec), EU_HTTPSIG_BAD_KEY);
    EVP_PKEY_free(ec);

    /* A PKCS#1 "RSA PUBLIC KEY" works like SubjectPublicKeyInfo. */
    EVP_PKEY *k = eu_httpsig_public_key_parse(pub_pem);
    ck_assert_ptr_nonnull(k);
    OSSL_ENCODER_CTX *ectx =
        OSSL_ENCODER_CTX_new_for_pkey(k, EVP_PKEY_PUBLIC_KEY, "PEM", "type-specific", NULL);
    unsigned char *pkcs1 = NULL;
    size_t pkcs1_len = 0;
    ck_assert_int_eq(OSSL_ENCODER_to_data(ectx, &pkcs1, &pkcs1_len), 1);
    OSSL_ENCODER_CTX_free(ectx);
    char *pem = strndup((const char *)pkcs1, pkcs1_len);
    ck_assert_ptr_nonnull(strstr(pem, "BEGIN RSA PUBLIC KEY"));
    ck_assert_int_eq(eu_httpsig_verify_pem(sig, pem), EU_HTTPSIG_OK);
    free(pem);
    OPENSSL_free(pkcs1);

    /* Signing with a parsed key gives the same as with its PEM. */
    struct eu_httpsig_signed out;
    EVP_PKEY *sk = NULL;
    BIO *bio = BIO_new_mem_buf(priv_pem, -1);
    sk = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
    BIO_free(bio);
    struct eu_httpsig_sign_args a = {.method = "GET",
                                     .url = "https://b.example/outbox",
                                     .key_id = KEY_ID,
                                     .key = sk,
                                     .now = NOW};
    ck_assert_int_eq(eu_httpsig_sign_cavage(&a, &out), 0);
    ck_assert_str_eq(eu_httpsig_signed_get(&out, "Signature"),
                     eu_httpsig_signed_get(&r.out, "Signature"));
    eu_httpsig_signed_release(&out);
    EVP_PKEY_free(sk);
    EVP_PKEY_free(k);
    eu_httpsig_free(sig);
    eu_httpsig_signed_release(&r.out);
    ck_assert_str_eq(eu_httpsig_result_str(EU_HTTPSIG_EXPIRED),
                     "signature expired or dated in the future");
}
END_TEST

int
main(void)
{
    if (eu_ap_rsa_generate(&pub_pem, &priv_pem) < 0 ||
        eu_ap_rsa_generate(&other_pub_pem, &other_priv_pem) < 0) {
        fprintf(stderr, "cannot generate the test keys\n");
        return 1;
    }
    Suite *s = suite_create("httpsig");
    TCase *tc = tcase_create("digests");
    tcase_add_test(tc, digests);
    tcase_add_test(tc, dates);
    suite_add_tcase(s, tc);
    tc = tcase_create("round_trip");
    tcase_add_test(tc, cavage_round_trip);
    tcase_add_test(tc, rfc9421_round_trip);
    tcase_add_test(tc, sign_refuses_bad_input);
    suite_add_tcase(s, tc);
    tc = tcase_create("tampered");
    tcase_add_test(tc, cavage_tampered);
    tcase_add_test(tc, rfc9421_tampered);
    tcase_add_test(tc, times);
    suite_add_tcase(s, tc);
    tc = tcase_create("parsing");
    tcase_add_test(tc, cavage_parsing);
    tcase_add_test(tc, rfc9421_parsing);
    suite_add_tcase(s, tc);
    tc = tcase_create("published");
    tcase_add_test(tc, rfc9421_b23_full_coverage);
    tcase_add_test(tc, rfc9421_b21_minimal);
    tcase_add_test(tc, cavage_appendix_c);
    tcase_add_test(tc, keys);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    free(pub_pem);
    free(priv_pem);
    free(other_pub_pem);
    free(other_priv_pem);
    return failed ? 1 : 0;
}
