/*
 * RSA keys of ActivityPub actors. Every local account, and each tenant's
 * instance actor, signs with its own RSA-2048 key; generating one takes tens
 * to hundreds of milliseconds, so it runs on the CPU pool, never the loop.
 */
#ifndef EUNHA_APKEYS_H
#define EUNHA_APKEYS_H

struct eu_app;
struct eu_job;
struct eu_tenant;

/*
 * Generates an RSA-2048 key pair as PEM text: the public key as
 * SubjectPublicKeyInfo ("BEGIN PUBLIC KEY", what actor documents publish) and
 * the private key as PKCS#8. Call it on a CPU pool thread. Returns 0 and sets
 * *pub_pem and *priv_pem (malloc'd; the caller frees both with free()), or -1
 * with both left NULL.
 */
int eu_ap_rsa_generate(char **pub_pem, char **priv_pem);

/*
 * Queues t's "account_keys" job (src/ap/account_keys.c), which gives every
 * local account of t that lacks a key pair one, a few per run. Call it from
 * the loop when an account turns out to have no keys (an account made
 * before keys existed, the instance actor); it is a no-op while such a job
 * waits. Returns -1 only if the job kind is unknown.
 */
int eu_ap_account_keys_enqueue(struct eu_app *app, struct eu_tenant *t);
/* The job's handler, for src/app/kinds.c. */
void eu_ap_account_keys_run(struct eu_job *job);

#endif
