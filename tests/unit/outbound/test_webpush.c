/*
 * Web Push crypto (src/outbound/webpush.c): the aes128gcm body must match
 * RFC 8291 Appendix A byte for byte, the independent check of the
 * encryption; aesgcm bodies must open with the draft's key schedule done
 * here with OpenSSL's own HKDF (not the code under test); the VAPID JWT
 * must verify with the public key clients are given; bad keys are refused.
 */
#include <check.h>
#include <jansson.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/param_build.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/webpush.h"

/* RFC 8291 Appendix A. */
static const char *PLAIN = "When I grow up, I want to be a watermelon";
static const char *AS_PRIV = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw";
static const char *AS_PUB =
    "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8";
static const char *UA_PRIV = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94";
static const char *UA_PUB =
    "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4";
static const char *AUTH = "BTBZMqHH6r4Tts7J_aSIgg";
static const char *SALT = "DGv6ra1nlYgDCS1FRnbzlw";
static const char *BODY = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27ml"
                          "mlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPT"
                          "pK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN";

static size_t
dec(const char *s, unsigned char *out, size_t max)
{
    long n = eu_webpush_b64url_decode(s, out, max);
    ck_assert_int_ge(n, 0);
    return (size_t)n;
}

START_TEST(rfc8291_vector)
{
    unsigned char salt[16], priv[32], pub[65];
    ck_assert_uint_eq(dec(SALT, salt, 16), 16);
    ck_assert_uint_eq(dec(AS_PRIV, priv, 32), 32);
    ck_assert_uint_eq(dec(AS_PUB, pub, 65), 65);
    unsigned char *body = NULL;
    size_t len = 0;
    ck_assert_int_eq(eu_webpush_encrypt_with(EU_WEBPUSH_AES128GCM, UA_PUB, AUTH,
                                             (const unsigned char *)PLAIN, strlen(PLAIN), salt,
                                             priv, pub, &body, &len),
                     0);
    char *got = eu_webpush_b64url(body, len);
    ck_assert_str_eq(got, BODY);
    free(got);
    free(body);
}
END_TEST

/* The receiver's side of aesgcm, with EVP_KDF HKDF. */
static void
hkdf(const unsigned char *salt, size_t saltlen, const unsigned char *ikm, size_t ikmlen,
     const unsigned char *info, size_t infolen, unsigned char *out, size_t outlen)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
    ck_assert_int_eq(EVP_PKEY_derive_init(c), 1);
    ck_assert_int_eq(EVP_PKEY_CTX_set_hkdf_md(c, EVP_sha256()), 1);
    ck_assert_int_eq(EVP_PKEY_CTX_set1_hkdf_salt(c, salt, (int)saltlen), 1);
    ck_assert_int_eq(EVP_PKEY_CTX_set1_hkdf_key(c, ikm, (int)ikmlen), 1);
    ck_assert_int_eq(EVP_PKEY_CTX_add1_hkdf_info(c, info, (int)infolen), 1);
    ck_assert_int_eq(EVP_PKEY_derive(c, out, &outlen), 1);
    EVP_PKEY_CTX_free(c);
}

static EVP_PKEY *
key_of(const unsigned char *pub, const unsigned char *priv)
{
    OSSL_PARAM_BLD *b = OSSL_PARAM_BLD_new();
    BIGNUM *d = priv ? BN_bin2bn(priv, 32, NULL) : NULL;
    OSSL_PARAM_BLD_push_utf8_string(b, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0);
    OSSL_PARAM_BLD_push_octet_string(b, OSSL_PKEY_PARAM_PUB_KEY, pub, 65);
    if (d)
        OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_PRIV_KEY, d);
    OSSL_PARAM *p = OSSL_PARAM_BLD_to_param(b);
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    EVP_PKEY *k = NULL;
    ck_assert_int_eq(EVP_PKEY_fromdata_init(c), 1);
    ck_assert_int_eq(EVP_PKEY_fromdata(c, &k, d ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY, p), 1);
    EVP_PKEY_CTX_free(c);
    OSSL_PARAM_free(p);
    OSSL_PARAM_BLD_free(b);
    BN_free(d);
    return k;
}

static const char *
hdr(const struct eu_webpush_msg *m, const char *name)
{
    for (int i = 0; m->headers[i]; i++)
        if (strncmp(m->headers[i], name, strlen(name)) == 0 && m->headers[i][strlen(name)] == ':')
            return m->headers[i] + strlen(name) + 2;
    return NULL;
}

START_TEST(aesgcm_opens)
{
    char *vpriv = NULL, *vpub = NULL;
    ck_assert_int_eq(eu_webpush_vapid_generate(&vpriv, &vpub), 0);
    struct eu_webpush_target t = {
        .endpoint = "https://push.example:8443/send/abc?x=1",
        .p256dh = UA_PUB,
        .auth = AUTH,
        .encoding = EU_WEBPUSH_AESGCM,
        .vapid_private_pem = vpriv,
        .vapid_public = vpub,
        .subject = "mailto:admin@a.example",
        .now = 1700000000,
        .ttl = 172800,
        .urgency = "normal",
    };
    struct eu_webpush_msg m;
    ck_assert_int_eq(eu_webpush_build(&t, (const unsigned char *)PLAIN, strlen(PLAIN), &m), 0);
    ck_assert_str_eq(hdr(&m, "Content-Encoding"), "aesgcm");
    ck_assert_str_eq(hdr(&m, "TTL"), "172800");
    ck_assert_str_eq(hdr(&m, "Urgency"), "normal");
    ck_assert_str_eq(hdr(&m, "Content-Type"), "application/octet-stream");
    const char *enc = hdr(&m, "Encryption"), *ck = hdr(&m, "Crypto-Key");
    ck_assert_ptr_nonnull(enc);
    ck_assert_ptr_nonnull(ck);
    ck_assert(strncmp(enc, "salt=", 5) == 0);
    ck_assert(strncmp(ck, "dh=", 3) == 0);
    const char *semi = strchr(ck, ';');
    ck_assert_ptr_nonnull(semi);
    ck_assert_str_eq(semi + 1 + strlen("p256ecdsa="), vpub);
    ck_assert(strncmp(hdr(&m, "Authorization"), "WebPush ey", 10) == 0);

    unsigned char salt[16], dh[65], uapub[65], uapriv[32], auth[16];
    ck_assert_uint_eq(dec(enc + 5, salt, 16), 16);
    char dh64[128];
    memcpy(dh64, ck + 3, (size_t)(semi - ck - 3));
    dh64[semi - ck - 3] = '\0';
    ck_assert_uint_eq(dec(dh64, dh, 65), 65);
    dec(UA_PUB, uapub, 65);
    dec(UA_PRIV, uapriv, 32);
    dec(AUTH, auth, 16);
    EVP_PKEY *me = key_of(uapub, uapriv), *peer = key_of(dh, NULL);
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new(me, NULL);
    unsigned char shared[32];
    size_t sl = 32;
    ck_assert_int_eq(EVP_PKEY_derive_init(c), 1);
    ck_assert_int_eq(EVP_PKEY_derive_set_peer(c, peer), 1);
    ck_assert_int_eq(EVP_PKEY_derive(c, shared, &sl), 1);
    EVP_PKEY_CTX_free(c);
    unsigned char ikm[32], cek[16], nonce[12], info[200];
    hkdf(auth, 16, shared, 32, (const unsigned char *)"Content-Encoding: auth", 23, ikm, 32);
    size_t cl = 0;
    unsigned char context[140];
    memcpy(context, "P-256\0\0A", 8);
    memcpy(context + 8, uapub, 65);
    context[73] = 0;
    context[74] = 65;
    memcpy(context + 75, dh, 65);
    cl = 140;
    memcpy(info, "Content-Encoding: aesgcm", 25);
    memcpy(info + 25, context, cl);
    hkdf(salt, 16, ikm, 32, info, 25 + cl, cek, 16);
    memcpy(info, "Content-Encoding: nonce", 24);
    memcpy(info + 24, context, cl);
    hkdf(salt, 16, ikm, 32, info, 24 + cl, nonce, 12);
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    unsigned char plain[256];
    int n = 0, f = 0;
    ck_assert_int_eq(EVP_DecryptInit_ex(x, EVP_aes_128_gcm(), NULL, cek, nonce), 1);
    ck_assert_int_eq(EVP_DecryptUpdate(x, plain, &n, m.body, (int)m.body_len - 16), 1);
    ck_assert_int_eq(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_TAG, 16, m.body + m.body_len - 16), 1);
    ck_assert_int_eq(EVP_DecryptFinal_ex(x, plain + n, &f), 1);
    EVP_CIPHER_CTX_free(x);
    ck_assert_int_eq(n + f, (int)strlen(PLAIN) + 2);
    ck_assert_int_eq(plain[0], 0);
    ck_assert_int_eq(plain[1], 0);
    ck_assert(memcmp(plain + 2, PLAIN, strlen(PLAIN)) == 0);
    EVP_PKEY_free(me);
    EVP_PKEY_free(peer);
    eu_webpush_msg_clear(&m);
    free(vpriv);
    free(vpub);
}
END_TEST

START_TEST(vapid_jwt_verifies)
{
    char *vpriv = NULL, *vpub = NULL;
    ck_assert_int_eq(eu_webpush_vapid_generate(&vpriv, &vpub), 0);
    ck_assert_ptr_nonnull(strstr(vpriv, "BEGIN PRIVATE KEY"));
    struct eu_webpush_target t = {
        .endpoint = "https://push.example/send/abc",
        .p256dh = UA_PUB,
        .auth = AUTH,
        .encoding = EU_WEBPUSH_AES128GCM,
        .vapid_private_pem = vpriv,
        .vapid_public = vpub,
        .subject = "mailto:admin@a.example",
        .now = 1700000000,
        .ttl = 60,
    };
    struct eu_webpush_msg m;
    ck_assert_int_eq(eu_webpush_build(&t, (const unsigned char *)"{}", 2, &m), 0);
    const char *a = hdr(&m, "Authorization");
    ck_assert(strncmp(a, "vapid t=", 8) == 0);
    const char *k = strstr(a, ", k=");
    ck_assert_ptr_nonnull(k);
    ck_assert_str_eq(k + 4, vpub);
    ck_assert_ptr_null(hdr(&m, "Encryption"));
    /* aes128gcm: salt, rs 4096, the key, then 2 + 1 + 16 bytes. */
    ck_assert_uint_eq(m.body_len, 86 + 2 + 1 + 16);
    ck_assert_int_eq(m.body[18], 0x10);
    ck_assert_int_eq(m.body[20], 65);

    char jwt[1024];
    size_t jl = (size_t)(k - a - 8);
    memcpy(jwt, a + 8, jl);
    jwt[jl] = '\0';
    char *d1 = strchr(jwt, '.'), *d2 = strrchr(jwt, '.');
    ck_assert_ptr_ne(d1, d2);
    unsigned char claims[512], sig[64], pub[65];
    *d2 = '\0';
    long cl = eu_webpush_b64url_decode(d1 + 1, claims, sizeof claims - 1);
    ck_assert_int_gt(cl, 0);
    claims[cl] = '\0';
    json_t *j = json_loads((const char *)claims, 0, NULL);
    ck_assert_str_eq(json_string_value(json_object_get(j, "aud")), "https://push.example");
    ck_assert_int_eq(json_integer_value(json_object_get(j, "exp")), 1700000000 + 12 * 3600);
    ck_assert_str_eq(json_string_value(json_object_get(j, "sub")), "mailto:admin@a.example");
    json_decref(j);
    ck_assert_uint_eq(dec(d2 + 1, sig, 64), 64);
    ck_assert_uint_eq(dec(vpub, pub, 65), 65);
    ECDSA_SIG *s = ECDSA_SIG_new();
    ECDSA_SIG_set0(s, BN_bin2bn(sig, 32, NULL), BN_bin2bn(sig + 32, 32, NULL));
    unsigned char der[128], *dp = der;
    int derlen = i2d_ECDSA_SIG(s, &dp);
    ECDSA_SIG_free(s);
    EVP_PKEY *pk = key_of(pub, NULL);
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    ck_assert_int_eq(EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, pk), 1);
    ck_assert_int_eq(
        EVP_DigestVerify(md, der, (size_t)derlen, (const unsigned char *)jwt, strlen(jwt)), 1);
    EVP_MD_CTX_free(md);
    EVP_PKEY_free(pk);
    eu_webpush_msg_clear(&m);
    free(vpriv);
    free(vpub);
}
END_TEST

START_TEST(bad_keys_refused)
{
    ck_assert(eu_webpush_keys_valid(UA_PUB, AUTH));
    ck_assert(!eu_webpush_keys_valid(UA_PUB, "AAAA"));
    ck_assert(!eu_webpush_keys_valid("not base64!", AUTH));
    ck_assert(!eu_webpush_keys_valid(AUTH, AUTH));
    /* A point off the curve: the last byte of y changed. */
    char off[100];
    strcpy(off, UA_PUB);
    off[strlen(off) - 2] = off[strlen(off) - 2] == 'A' ? 'B' : 'A';
    ck_assert(!eu_webpush_keys_valid(off, AUTH));
    ck_assert(!eu_webpush_keys_valid(NULL, AUTH));
    /* Too long for one record. */
    char *vpriv = NULL, *vpub = NULL;
    ck_assert_int_eq(eu_webpush_vapid_generate(&vpriv, &vpub), 0);
    struct eu_webpush_target t = {.endpoint = "https://p.example/x",
                                  .p256dh = UA_PUB,
                                  .auth = AUTH,
                                  .vapid_private_pem = vpriv,
                                  .vapid_public = vpub};
    static unsigned char big[5000];
    struct eu_webpush_msg m;
    ck_assert_int_eq(eu_webpush_build(&t, big, sizeof big, &m), -1);
    t.endpoint = "no-origin";
    ck_assert_int_eq(eu_webpush_build(&t, big, 10, &m), -1);
    free(vpriv);
    free(vpub);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("webpush");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, rfc8291_vector);
    tcase_add_test(tc, aesgcm_opens);
    tcase_add_test(tc, vapid_jwt_verifies);
    tcase_add_test(tc, bad_keys_refused);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
