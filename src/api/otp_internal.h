/*
 * Two-factor sign-in with TOTP (RFC 6238) as Mastodon's devise-two-factor
 * does it: HMAC-SHA1, 6 digits, 30-second steps, one step of drift either
 * way, a step never accepted twice, and 10 single-use recovery codes kept
 * as hashes. otp.c holds the arithmetic, the set-up's QR code and the
 * statements that consume a code; the sign-in (oauth.c) and the settings
 * pages (settings_otp.c) use them. Nobody else includes it.
 */
#ifndef EUNHA_API_OTP_INTERNAL_H
#define EUNHA_API_OTP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct eu_arena;
struct eu_req;

#define EU_OTP_DIGITS 6
#define EU_OTP_STEP_S 30
/* A 160-bit secret (RFC 4226's recommended length) is 32 base32 letters. */
#define EU_OTP_SECRET_LEN 32
#define EU_OTP_RECOVERY_CODES 10
/* 16 hex digits: 64 random bits each, as devise-two-factor's codes. */
#define EU_OTP_RECOVERY_LEN 16

/* A new secret: 20 random bytes as 32 base32 letters, NUL-terminated. */
void eu_otp_secret_new(char out[EU_OTP_SECRET_LEN + 1]);

/*
 * What users.otp_secret keeps of the base32 secret: sealed under the host
 * key (include/eunha/secrets.h), so the database alone cannot make codes.
 * In a's memory; the secret itself when no key is loaded (a tool).
 */
const char *eu_otp_secret_stored(struct eu_arena *a, const char *secret);

/* Decodes base32 (RFC 4648, upper or lower case, no padding needed) into
 * out; returns the byte count, or -1 on a bad letter or too small out. */
int eu_otp_base32_decode(const char *s, unsigned char *out, size_t cap);

/* RFC 4226's HOTP of key at counter step, truncated to digits digits
 * (6 to 8), with HMAC-SHA1; -1 if HMAC fails. */
long eu_otp_hotp(const unsigned char *key, size_t keylen, uint64_t step, int digits);

/*
 * The step a 6-digit code matches for the secret at time now (the base32
 * secret, or as eu_otp_secret_stored() keeps it: opened here; the
 * step of now, the one before or the one after), if that step is after
 * consumed (-1: none consumed yet); else -1. code may have spaces.
 */
int64_t eu_otp_match(const char *secret, const char *code, time_t now, int64_t consumed);

/* The otpauth:// URI an authenticator app reads from the QR code. Arena. */
const char *eu_otp_uri(struct eu_arena *a, const char *issuer, const char *account,
                       const char *secret);

/* text as a QR code in inline SVG (arena), or NULL if it does not fit. */
const char *eu_otp_qr_svg(struct eu_arena *a, const char *text);

/* New recovery codes (arena strings) and a Postgres text[] literal of their
 * hashes (arena) for users.otp_backup_codes. */
void eu_otp_recovery_new(struct eu_arena *a, const char *codes[EU_OTP_RECOVERY_CODES],
                         const char **hashes_literal);

/* The hash a recovery code is stored as (65 bytes, hex), after folding the
 * code as typed (spaces and dashes dropped, lower case). */
void eu_otp_recovery_hash(const char *code, char out[65]);

typedef void (*eu_otp_done_cb)(struct eu_req *req, bool ok, void *arg);

/*
 * Checks code for user_id, whose base32 secret and last consumed step
 * (-1 for none) the caller loaded: a TOTP code is accepted when its step
 * is later than any consumed (the step is recorded in the same statement,
 * so two requests cannot both spend it), else a recovery code when it is
 * one of the user's (removed in the same statement). Then done(ok). A
 * secret still stored in clear (before sealing existed) is sealed by the
 * statement that spends its code.
 */
void eu_otp_verify(struct eu_req *req, int64_t user_id, const char *secret, int64_t consumed,
                   const char *code, eu_otp_done_cb done, void *arg);

#endif
