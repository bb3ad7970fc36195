/*
 * TOTP for two-factor sign-in (see otp_internal.h): RFC 4226's HOTP over
 * HMAC-SHA1 (OpenSSL) at RFC 6238's 30-second steps, base32 secrets as
 * authenticator apps take them, the set-up's QR code drawn as inline SVG
 * with libqrencode, recovery codes, and the two statements that spend a
 * code so that it works once. The secret is kept sealed under the host key
 * (include/eunha/secrets.h) and opened only to compute a code.
 */
#include "otp_internal.h"

#include <ctype.h>
#include <libpq-fe.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <qrencode.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/auth.h"
#include "eunha/http.h"
#include "eunha/secrets.h"
#include "eunha/sql.h"
#include "oauth_internal.h"

enum {
    OTP_CONSUME_STEP,
    OTP_USE_RECOVERY,
};

const struct eu_sql eu_otp_sql[] = {
    /* $2 user, $3 the step: recorded only if later than the last one, so
     * a replayed code (or two racing requests) finds no row; $4 the secret
     * sealed when it was still in clear, else NULL. */
    [OTP_CONSUME_STEP] = {"otp.consume_step",
                          "UPDATE users SET otp_consumed_timestep = $3,"
                          " otp_secret = coalesce($4, otp_secret)"
                          " WHERE tenant_id = $1 AND id = $2 AND otp_required_for_login"
                          " AND (otp_consumed_timestep IS NULL OR otp_consumed_timestep < $3)"
                          " RETURNING id"},
    /* $2 user, $3 the code's hash: removed if it is there. */
    [OTP_USE_RECOVERY] = {"otp.use_recovery",
                          "UPDATE users SET otp_backup_codes = array_remove(otp_backup_codes, $3)"
                          " WHERE tenant_id = $1 AND id = $2 AND otp_required_for_login"
                          " AND $3 = ANY (otp_backup_codes) RETURNING id"},
    {0},
};

static const char B32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

void
eu_otp_secret_new(char out[EU_OTP_SECRET_LEN + 1])
{
    unsigned char raw[20];
    randombytes_buf(raw, sizeof(raw));
    /* 20 bytes are 160 bits: exactly 32 letters of 5 bits. */
    for (int i = 0; i < EU_OTP_SECRET_LEN; i++) {
        int bit = i * 5, byte = bit / 8, shift = bit % 8;
        unsigned v = (unsigned)raw[byte] << 8 | (byte + 1 < 20 ? raw[byte + 1] : 0);
        out[i] = B32[(v >> (11 - shift)) & 31];
    }
    out[EU_OTP_SECRET_LEN] = '\0';
    sodium_memzero(raw, sizeof(raw));
}

int
eu_otp_base32_decode(const char *s, unsigned char *out, size_t cap)
{
    unsigned buf = 0;
    int bits = 0;
    size_t n = 0;
    for (; *s && *s != '='; s++) {
        if (*s == ' ')
            continue;
        const char *p = strchr(B32, toupper((unsigned char)*s));
        if (!p || !*p)
            return -1;
        buf = buf << 5 | (unsigned)(p - B32);
        bits += 5;
        if (bits >= 8) {
            if (n == cap)
                return -1;
            out[n++] = (unsigned char)(buf >> (bits - 8));
            bits -= 8;
        }
    }
    return (int)n;
}

long
eu_otp_hotp(const unsigned char *key, size_t keylen, uint64_t step, int digits)
{
    unsigned char msg[8], mac[EVP_MAX_MD_SIZE];
    unsigned int maclen = 0;
    for (int i = 7; i >= 0; i--) {
        msg[i] = (unsigned char)(step & 0xff);
        step >>= 8;
    }
    if (!HMAC(EVP_sha1(), key, (int)keylen, msg, sizeof(msg), mac, &maclen) || maclen < 20)
        return -1;
    /* RFC 4226 5.3: dynamic truncation. */
    int off = mac[maclen - 1] & 0x0f;
    unsigned long bin = (unsigned long)(mac[off] & 0x7f) << 24 | (unsigned long)mac[off + 1] << 16 |
                        (unsigned long)mac[off + 2] << 8 | mac[off + 3];
    unsigned long mod = 1;
    for (int i = 0; i < digits; i++)
        mod *= 10;
    return (long)(bin % mod);
}

const char *
eu_otp_secret_stored(struct eu_arena *a, const char *secret)
{
    char *sealed = eu_secret_seal(secret);
    if (!sealed)
        return secret;
    const char *out = eu_arena_strdup(a, sealed);
    free(sealed);
    return out;
}

int64_t
eu_otp_match(const char *secret, const char *code, time_t now, int64_t consumed)
{
    long want = 0;
    int digits = 0;
    for (const char *p = code; *p; p++) {
        if (*p == ' ')
            continue;
        if (!isdigit((unsigned char)*p) || ++digits > EU_OTP_DIGITS)
            return -1;
        want = want * 10 + (*p - '0');
    }
    unsigned char key[64];
    char *clear = secret ? eu_secret_open(secret) : NULL; /* NULL: another key */
    int keylen = clear ? eu_otp_base32_decode(clear, key, sizeof(key)) : -1;
    eu_secret_free(clear);
    if (digits != EU_OTP_DIGITS || keylen <= 0) {
        sodium_memzero(key, sizeof(key));
        return -1;
    }
    int64_t found = -1;
    int64_t t = (int64_t)now / EU_OTP_STEP_S;
    /* Every candidate is computed, so the time taken says nothing. */
    for (int64_t step = t - 1; step <= t + 1; step++) {
        long got = eu_otp_hotp(key, (size_t)keylen, (uint64_t)step, EU_OTP_DIGITS);
        if (got == want && step > consumed && found < 0)
            found = step;
    }
    sodium_memzero(key, sizeof(key));
    return found;
}

const char *
eu_otp_uri(struct eu_arena *a, const char *issuer, const char *account, const char *secret)
{
    const char *label = eu_arena_sprintf(a, "%s:%s", issuer, account);
    return eu_arena_sprintf(a, "otpauth://totp/%s?secret=%s&issuer=%s",
                            eu_oauth_url_encode(a, label), secret, eu_oauth_url_encode(a, issuer));
}

const char *
eu_otp_qr_svg(struct eu_arena *a, const char *text)
{
    QRcode *qr = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1);
    if (!qr)
        return NULL;
    int w = qr->width, quiet = 4, size = w + 2 * quiet;
    /* One path of unit squares for the dark modules ("M x y h1 v1 h-1 z"
     * is at most ~20 bytes each). */
    size_t cap = (size_t)w * (size_t)w * 24 + 512, len = 0;
    char *out = eu_arena_alloc(a, cap);
    len += (size_t)snprintf(out + len, cap - len,
                            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" "
                            "width=\"%d\" height=\"%d\" shape-rendering=\"crispEdges\" "
                            "role=\"img\" aria-label=\"QR code\"><rect width=\"%d\" height=\"%d\" "
                            "fill=\"#fff\"/><path fill=\"#000\" d=\"",
                            size, size, size * 6, size * 6, size, size);
    for (int y = 0; y < w; y++)
        for (int x = 0; x < w; x++)
            if (qr->data[y * w + x] & 1)
                len +=
                    (size_t)snprintf(out + len, cap - len, "M%d %dh1v1h-1z", x + quiet, y + quiet);
    snprintf(out + len, cap - len, "\"/></svg>");
    QRcode_free(qr);
    return out;
}

void
eu_otp_recovery_hash(const char *code, char out[65])
{
    char folded[64];
    size_t n = 0;
    for (const char *p = code; *p && n + 1 < sizeof(folded); p++)
        if (*p != ' ' && *p != '-')
            folded[n++] = (char)tolower((unsigned char)*p);
    folded[n] = '\0';
    eu_auth_token_hash(folded, out);
}

void
eu_otp_recovery_new(struct eu_arena *a, const char *codes[EU_OTP_RECOVERY_CODES],
                    const char **hashes_literal)
{
    const char *lit = "{";
    for (int i = 0; i < EU_OTP_RECOVERY_CODES; i++) {
        unsigned char raw[EU_OTP_RECOVERY_LEN / 2];
        char hex[EU_OTP_RECOVERY_LEN + 1], hash[65];
        randombytes_buf(raw, sizeof(raw));
        sodium_bin2hex(hex, sizeof(hex), raw, sizeof(raw));
        codes[i] = eu_arena_strdup(a, hex);
        eu_otp_recovery_hash(hex, hash);
        lit = eu_arena_sprintf(a, "%s%s%s", lit, i ? "," : "", hash);
    }
    *hashes_literal = eu_arena_sprintf(a, "%s}", lit);
}

struct verify {
    eu_otp_done_cb done;
    void *arg;
};

static void
on_spent(struct eu_req *req, PGresult *res, void *arg)
{
    struct verify *v = arg;
    v->done(req, PQntuples(res) == 1, v->arg);
}

void
eu_otp_verify(struct eu_req *req, int64_t user_id, const char *secret, int64_t consumed,
              const char *code, eu_otp_done_cb done, void *arg)
{
    struct verify *v = eu_arena_calloc(req->arena, sizeof(*v));
    v->done = done;
    v->arg = arg;
    const char *uid = eu_arena_sprintf(req->arena, "%lld", (long long)user_id);
    int64_t step = eu_otp_match(secret, code, time(NULL), consumed);
    if (step >= 0) {
        const char *s = eu_arena_sprintf(req->arena, "%lld", (long long)step);
        const char *sealed = NULL;
        if (!eu_secret_is_sealed(secret) && eu_secrets_ready())
            sealed = eu_otp_secret_stored(req->arena, secret);
        const char *p[] = {uid, s, sealed};
        eu_req_stmt(req, &eu_otp_sql[OTP_CONSUME_STEP], 3, p, on_spent, v);
        return;
    }
    char hash[65];
    eu_otp_recovery_hash(code, hash);
    const char *p[] = {uid, hash};
    eu_req_stmt(req, &eu_otp_sql[OTP_USE_RECOVERY], 2, p, on_spent, v);
}
