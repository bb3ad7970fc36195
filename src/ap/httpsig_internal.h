/*
 * Inside src/ap/httpsig.c, reached by its tests: checking one signature over
 * a given base, so the published examples whose coverage our policy refuses
 * (RFC 9421 B.2.1, draft-cavage C.1 and C.2) can still be checked against
 * the same cryptography.
 */
#ifndef EUNHA_AP_HTTPSIG_INTERNAL_H
#define EUNHA_AP_HTTPSIG_INTERNAL_H

#include <stddef.h>

#include "eunha/httpsig.h"

/* Signature algorithms over RSA keys. */
enum eu_httpsig_alg {
    EU_HTTPSIG_ALG_RSA_V15_SHA256, /* rsa-sha256, hs2019 with RSA, rsa-v1_5-sha256 */
    EU_HTTPSIG_ALG_RSA_PSS_SHA512, /* rsa-pss-sha512 (salt 64 bytes) */
    EU_HTTPSIG_ALG_RSA_ANY,        /* RFC 9421 without alg: either of the above */
};

/* Checks sig (raw bytes) over base with key: EU_HTTPSIG_OK,
 * EU_HTTPSIG_BAD_SIGNATURE or EU_HTTPSIG_BAD_KEY. */
enum eu_httpsig_result eu_httpsig_verify_raw(enum eu_httpsig_alg alg, struct evp_pkey_st *key,
                                             const char *base, const unsigned char *sig,
                                             size_t siglen);

#endif
