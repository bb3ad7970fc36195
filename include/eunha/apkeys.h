/*
 * RSA keys of ActivityPub actors. Every local account, and each tenant's
 * instance actor, signs with its own RSA-2048 key; generating one takes tens
 * to hundreds of milliseconds, so it runs on the CPU pool, never the loop.
 */
#ifndef EUNHA_APKEYS_H
#define EUNHA_APKEYS_H

/*
 * Generates an RSA-2048 key pair as PEM text: the public key as
 * SubjectPublicKeyInfo ("BEGIN PUBLIC KEY", what actor documents publish) and
 * the private key as PKCS#8. Call it on a CPU pool thread. Returns 0 and sets
 * *pub_pem and *priv_pem (malloc'd; the caller frees both with free()), or -1
 * with both left NULL.
 */
int eu_ap_rsa_generate(char **pub_pem, char **priv_pem);

#endif
