/*
 * Fuzz target: HTTP signature headers (src/ap/httpsig.c, src/ap/sfv.c). The
 * first byte picks what the rest is:
 *   0  a draft-cavage Signature value (and, again, Authorization: Signature)
 *   1  Signature-Input, a line break, Signature (RFC 9421)
 *   2  a Digest value, then a Content-Digest value, over a fixed body
 *   3  an RFC 8941 dictionary
 *   4  an HTTP date
 * on a POST whose other headers (Host, Date, Digest, Content-Digest, two
 * X-A lines) are fixed. Checked besides sanitizer reports: a signature that
 * parses has a key id and a signed string without CR or a stray line; a
 * dictionary member re-serialised parses back to the same serialisation; a
 * parsed date formats to one that parses to the same time.
 */
#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ap/sfv_internal.h"
#include "eunha/httpsig.h"

#define BODY "{\"hello\": \"world\"}"
#define NOW 1388957500

static void
check_signature(const struct eu_httpsig_request *req)
{
    struct eu_httpsig *sig = NULL;
    enum eu_httpsig_result r = eu_httpsig_parse(req, NOW, &sig);
    if (r != EU_HTTPSIG_OK) {
        if (sig)
            abort();
        return;
    }
    const char *id = eu_httpsig_key_id(sig);
    const char *base = eu_httpsig_base(sig);
    if (!id || !*id || !base || strchr(base, '\r'))
        abort();
    /* Every line of a signed string names what it covers. */
    for (const char *l = base; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (*l != '"' && *l != '(' && !(*l >= 'a' && *l <= 'z') && !(*l >= '0' && *l <= '9') &&
            !strchr("-_!#$%&'*+.^`|~", *l))
            abort();
    eu_httpsig_free(sig);
}

static void
check_dict(const char *s)
{
    struct eu_sfv_dict d;
    if (eu_sfv_dict_parse(&d, s) < 0)
        return;
    for (int i = 0; i < d.nmembers; i++) {
        char *ser = eu_sfv_member_serialize(&d, &d.members[i]);
        if (!ser)
            abort();
        size_t n = strlen(ser) + 4;
        char *again = malloc(n);
        memcpy(again, "k=", 2);
        memcpy(again + 2, ser, strlen(ser) + 1);
        struct eu_sfv_dict d2;
        /* A bare-key member serialises as an item "?1" with its params. */
        if (eu_sfv_dict_parse(&d2, again) < 0)
            abort();
        char *ser2 = eu_sfv_member_serialize(&d2, &d2.members[0]);
        if (!ser2 || strcmp(ser, ser2) != 0)
            abort();
        free(ser2);
        eu_sfv_dict_release(&d2);
        free(again);
        free(ser);
    }
    eu_sfv_dict_release(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 3 * EU_HTTPSIG_MAX_HEADER)
        return 0;
    int mode = data[0] % 5;
    char *in = strndup((const char *)data + 1, size - 1);
    struct eu_httpsig_header h[8] = {
        {"Host", "example.com"},
        {"Date", "Sun, 05 Jan 2014 21:31:40 GMT"},
        {"Digest", "SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="},
        {"Content-Digest", "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:"},
        {"X-A", " one "},
        {"x-a", "two"},
    };
    struct eu_httpsig_request req = {.method = "POST",
                                     .scheme = "https",
                                     .authority = "example.com",
                                     .target = "/foo?param=value&pet=dog",
                                     .headers = h,
                                     .nheaders = 6,
                                     .body = BODY,
                                     .body_len = strlen(BODY)};
    switch (mode) {
    case 0:
        h[6] = (struct eu_httpsig_header){"Signature", in};
        req.nheaders = 7;
        check_signature(&req);
        {
            char *auth = malloc(strlen(in) + 11);
            memcpy(auth, "Signature ", 10);
            memcpy(auth + 10, in, strlen(in) + 1);
            h[6] = (struct eu_httpsig_header){"Authorization", auth};
            check_signature(&req);
            free(auth);
        }
        break;
    case 1: {
        char *nl = strchr(in, '\n');
        h[6] = (struct eu_httpsig_header){"Signature-Input", in};
        h[7] = (struct eu_httpsig_header){"Signature", nl ? nl + 1 : "sig1=:AAAA:"};
        if (nl)
            *nl = '\0';
        req.nheaders = 8;
        check_signature(&req);
        req.method = "GET";
        req.body = NULL;
        check_signature(&req);
        /* A caller that left the length of no body set. */
        req.body_len = 0;
        check_signature(&req);
        break;
    }
    case 2:
        eu_httpsig_digest_check(in, BODY, strlen(BODY));
        eu_httpsig_content_digest_check(in, BODY, strlen(BODY));
        break;
    case 3:
        check_dict(in);
        break;
    case 4: {
        time_t t, t2;
        char buf[30];
        if (eu_httpsig_date_parse(in, &t) == 0) {
            eu_httpsig_date_format(t, buf);
            if (eu_httpsig_date_parse(buf, &t2) != 0 || t2 != t)
                abort();
        }
        break;
    }
    }
    free(in);
    return 0;
}
