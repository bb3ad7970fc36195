/*
 * RSA key generation: the pair parses back, is 2048 bits, and the two halves
 * belong together (a signature by one verifies with the other).
 */
#include <check.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/apkeys.h"

START_TEST(pair_round_trips)
{
    char *pub = NULL, *priv = NULL;
    ck_assert_int_eq(eu_ap_rsa_generate(&pub, &priv), 0);
    ck_assert_ptr_nonnull(strstr(pub, "-----BEGIN PUBLIC KEY-----"));
    ck_assert_ptr_nonnull(strstr(priv, "-----BEGIN PRIVATE KEY-----"));

    BIO *b = BIO_new_mem_buf(pub, -1);
    EVP_PKEY *pk = PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);
    BIO_free(b);
    b = BIO_new_mem_buf(priv, -1);
    EVP_PKEY *sk = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
    BIO_free(b);
    ck_assert_ptr_nonnull(pk);
    ck_assert_ptr_nonnull(sk);
    ck_assert_int_eq(EVP_PKEY_get_bits(pk), 2048);

    const unsigned char msg[] = "(request-target): post /inbox";
    unsigned char sig[512];
    size_t siglen = sizeof sig;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    ck_assert_int_eq(EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, sk), 1);
    ck_assert_int_eq(EVP_DigestSign(ctx, sig, &siglen, msg, sizeof msg - 1), 1);
    EVP_MD_CTX_free(ctx);
    ctx = EVP_MD_CTX_new();
    ck_assert_int_eq(EVP_DigestVerifyInit(ctx, NULL, EVP_sha256(), NULL, pk), 1);
    ck_assert_int_eq(EVP_DigestVerify(ctx, sig, siglen, msg, sizeof msg - 1), 1);
    EVP_MD_CTX_free(ctx);

    /* A second pair is a different key. */
    char *pub2 = NULL, *priv2 = NULL;
    ck_assert_int_eq(eu_ap_rsa_generate(&pub2, &priv2), 0);
    ck_assert_str_ne(pub, pub2);

    EVP_PKEY_free(pk);
    EVP_PKEY_free(sk);
    free(pub);
    free(priv);
    free(pub2);
    free(priv2);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("apkeys");
    TCase *tc = tcase_create("keys");
    tcase_add_test(tc, pair_round_trips);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
