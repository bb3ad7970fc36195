/*
 * Making and hashing bearer tokens, apart from the lookup in auth.c: they
 * need nothing but libsodium, and the test harness makes tokens too. In
 * auth.c they pulled the request machinery, and with it the whole server,
 * into every integration suite's link (16 MB and a second and a half of
 * CPU each, a minute of a clean test build on two cores).
 */
#include <sodium.h>
#include <string.h>

#include "eunha/auth.h"

void
eu_auth_token_new(char out[EU_AUTH_TOKEN_LEN])
{
    unsigned char raw[32];
    randombytes_buf(raw, sizeof(raw));
    sodium_bin2base64(out, EU_AUTH_TOKEN_LEN, raw, sizeof(raw),
                      sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

void
eu_auth_token_hash(const char *token, char out[65])
{
    unsigned char h[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(h, (const unsigned char *)token, strlen(token));
    sodium_bin2hex(out, 65, h, sizeof(h));
}
