/*
 * RSA key generation for actors (include/eunha/apkeys.h).
 */
#include "eunha/apkeys.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <stdlib.h>
#include <string.h>

/* Copies a memory BIO's contents into a NUL-terminated string the caller
 * frees with free(); NULL on failure. */
static char *
bio_to_string(BIO *bio)
{
    char *data = NULL;
    long len = BIO_get_mem_data(bio, &data);
    if (len <= 0 || !data)
        return NULL;
    char *out = malloc((size_t)len + 1);
    if (!out)
        return NULL;
    memcpy(out, data, (size_t)len);
    out[len] = '\0';
    return out;
}

int
eu_ap_rsa_generate(char **pub_pem, char **priv_pem)
{
    *pub_pem = NULL;
    *priv_pem = NULL;
    EVP_PKEY *key = EVP_RSA_gen(2048);
    if (!key)
        return -1;
    BIO *pub = BIO_new(BIO_s_mem());
    BIO *priv = BIO_new(BIO_s_mem());
    int rc = -1;
    if (pub && priv && PEM_write_bio_PUBKEY(pub, key) == 1 &&
        PEM_write_bio_PrivateKey(priv, key, NULL, NULL, 0, NULL, NULL) == 1) {
        *pub_pem = bio_to_string(pub);
        *priv_pem = bio_to_string(priv);
        if (*pub_pem && *priv_pem) {
            rc = 0;
        } else {
            free(*pub_pem);
            free(*priv_pem);
            *pub_pem = NULL;
            *priv_pem = NULL;
        }
    }
    BIO_free(pub);
    BIO_free(priv);
    EVP_PKEY_free(key);
    return rc;
}
