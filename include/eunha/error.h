/*
 * An error from validating untrusted input: the HTTP status to answer with
 * and a message that goes both to the log and into Mastodon's
 * {"error": "..."} body.
 */
#ifndef EUNHA_ERROR_H
#define EUNHA_ERROR_H

#define EU_ERROR_MSG_MAX 256

struct eu_error {
    int status;
    char message[EU_ERROR_MSG_MAX];
};

/* Fills err (which may be NULL) with status and a formatted message. Returns -1
 * so validators can `return eu_error_set(...)`. */
int eu_error_set(struct eu_error *err, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
