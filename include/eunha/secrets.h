/*
 * Secrets at rest (src/core/secrets.c): a value the database must keep
 * but should not hold in clear (a user's TOTP secret, a push
 * subscription's bearer token) is sealed with libsodium's secretbox under
 * the host's key, a 32-byte file named by [secrets] key_file that the
 * process makes (mode 0600) on its first start. Anyone with the database
 * alone then has no use of them. Losing the key file means the sealed
 * values are lost: users set two-factor sign-in up again and apps
 * subscribe to push again (docs/secrets.md).
 *
 * The key is process-wide, loaded once before the loop starts, so that
 * the pure functions that need the clear value (eu_otp_match()) can open
 * it without an app in hand.
 */
#ifndef EUNHA_SECRETS_H
#define EUNHA_SECRETS_H

#include <stdbool.h>
#include <stddef.h>

/* What a sealed value starts with; anything else is a clear value written
 * before sealing existed, still read as it is. */
#define EU_SECRET_PREFIX "sealed1:"

/*
 * Reads the key from path, or makes it there (32 random bytes, created
 * with O_EXCL and mode 0600, so two processes starting together agree on
 * one) when the file is missing. Refuses a file that is not exactly 32
 * bytes or that others may read. Returns 0, or -1 with err set.
 */
int eu_secrets_load(const char *path, char *err, size_t errlen);

/* Whether a key is loaded (tests and tools that seal nothing have none). */
bool eu_secrets_ready(void);

/*
 * clear sealed under the key: EU_SECRET_PREFIX then the base64 of a fresh
 * nonce and the secretbox. NULL without a key (callers then store nothing
 * new in clear rather than pretend). The caller frees the result.
 */
char *eu_secret_seal(const char *clear);

/*
 * The clear value of stored: opened when it is sealed, copied as it is
 * when it is an old clear value. NULL when it is sealed and cannot be
 * opened (no key, another key, damaged). The caller frees the result
 * (its bytes are wiped first by eu_secret_free()).
 */
char *eu_secret_open(const char *stored);

/* Whether stored is sealed (starts with EU_SECRET_PREFIX). */
bool eu_secret_is_sealed(const char *stored);

/* Wipes and frees a value eu_secret_open() or eu_secret_seal() returned. */
void eu_secret_free(char *s);

/* Forgets the key (wiped); for tests. */
void eu_secrets_unload(void);

#endif
