/*
 * Secrets at rest (include/eunha/secrets.h): the host key in a file of its
 * own, secretbox (XSalsa20-Poly1305) with a random nonce per value, the
 * sealed form as text so it fits the text columns the clear values were
 * in, and clear values of old rows still read.
 */
#include "eunha/secrets.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eunha/mem.h"

static unsigned char key[crypto_secretbox_KEYBYTES];
static bool loaded;

/* Reads exactly the key's bytes from fd: 0, or -1 with err. */
static int
read_key(int fd, const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "[secrets] key_file '%s' is not a regular file", path);
        return -1;
    }
    if (st.st_mode & (S_IRWXG | S_IRWXO)) {
        snprintf(err, errlen, "[secrets] key_file '%s' may be read by others (chmod 600 it)", path);
        return -1;
    }
    if (st.st_size != (off_t)sizeof(key)) {
        snprintf(err, errlen, "[secrets] key_file '%s' must hold exactly %zu bytes, not %lld", path,
                 sizeof(key), (long long)st.st_size);
        return -1;
    }
    size_t got = 0;
    while (got < sizeof(key)) {
        ssize_t n = read(fd, key + got, sizeof(key) - got);
        if (n <= 0) {
            snprintf(err, errlen, "cannot read [secrets] key_file '%s': %s", path,
                     n < 0 ? strerror(errno) : "short file");
            sodium_memzero(key, sizeof(key));
            return -1;
        }
        got += (size_t)n;
    }
    return 0;
}

/* Makes the key file: 0 made, 1 someone else made it first, -1 err. */
static int
make_key(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (errno == EEXIST)
            return 1;
        snprintf(err, errlen, "cannot create [secrets] key_file '%s': %s", path, strerror(errno));
        return -1;
    }
    unsigned char fresh[sizeof(key)];
    randombytes_buf(fresh, sizeof(fresh));
    size_t put = 0;
    while (put < sizeof(fresh)) {
        ssize_t n = write(fd, fresh + put, sizeof(fresh) - put);
        if (n <= 0) {
            snprintf(err, errlen, "cannot write [secrets] key_file '%s': %s", path,
                     strerror(errno));
            sodium_memzero(fresh, sizeof(fresh));
            close(fd);
            unlink(path);
            return -1;
        }
        put += (size_t)n;
    }
    int rc = fsync(fd);
    close(fd);
    sodium_memzero(fresh, sizeof(fresh));
    if (rc < 0) {
        snprintf(err, errlen, "cannot write [secrets] key_file '%s': %s", path, strerror(errno));
        unlink(path);
        return -1;
    }
    return 0;
}

int
eu_secrets_load(const char *path, char *err, size_t errlen)
{
    if (make_key(path, err, errlen) < 0)
        return -1;
    /* Read back what is there, made now or by another process. */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open [secrets] key_file '%s': %s", path, strerror(errno));
        return -1;
    }
    int rc = read_key(fd, path, err, errlen);
    close(fd);
    loaded = rc == 0;
    return rc;
}

bool
eu_secrets_ready(void)
{
    return loaded;
}

void
eu_secrets_unload(void)
{
    sodium_memzero(key, sizeof(key));
    loaded = false;
}

bool
eu_secret_is_sealed(const char *stored)
{
    return stored && strncmp(stored, EU_SECRET_PREFIX, strlen(EU_SECRET_PREFIX)) == 0;
}

char *
eu_secret_seal(const char *clear)
{
    if (!loaded || !clear)
        return NULL;
    size_t mlen = strlen(clear);
    size_t blen = crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES + mlen;
    unsigned char *box = eu_xmalloc(blen);
    randombytes_buf(box, crypto_secretbox_NONCEBYTES);
    crypto_secretbox_easy(box + crypto_secretbox_NONCEBYTES, (const unsigned char *)clear, mlen,
                          box, key);
    size_t plen = strlen(EU_SECRET_PREFIX);
    size_t b64 = sodium_base64_ENCODED_LEN(blen, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    char *out = eu_xmalloc(plen + b64);
    memcpy(out, EU_SECRET_PREFIX, plen);
    sodium_bin2base64(out + plen, b64, box, blen, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
    free(box);
    return out;
}

char *
eu_secret_open(const char *stored)
{
    if (!stored)
        return NULL;
    if (!eu_secret_is_sealed(stored))
        return eu_xstrdup(stored);
    if (!loaded)
        return NULL;
    const char *b64 = stored + strlen(EU_SECRET_PREFIX);
    size_t cap = strlen(b64);
    unsigned char *box = eu_xmalloc(cap + 1);
    size_t blen = 0;
    if (sodium_base642bin(box, cap + 1, b64, strlen(b64), NULL, &blen, NULL,
                          sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
        blen < crypto_secretbox_NONCEBYTES + crypto_secretbox_MACBYTES) {
        free(box);
        return NULL;
    }
    size_t mlen = blen - crypto_secretbox_NONCEBYTES - crypto_secretbox_MACBYTES;
    char *out = eu_xmalloc(mlen + 1);
    if (crypto_secretbox_open_easy((unsigned char *)out, box + crypto_secretbox_NONCEBYTES,
                                   blen - crypto_secretbox_NONCEBYTES, box, key) != 0) {
        free(box);
        free(out);
        return NULL;
    }
    free(box);
    out[mlen] = '\0';
    return out;
}

void
eu_secret_free(char *s)
{
    if (!s)
        return;
    sodium_memzero(s, strlen(s));
    free(s);
}
