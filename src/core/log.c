/*
 * The logger: one line per event on stderr. Every line carries the tenant and
 * request id of the code that is running, set by the HTTP layer around a
 * handler's callbacks, so call sites only say what happened.
 */
#include "eunha/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "eunha/mem.h"

#define MASK "********"

static enum eu_log_level min_level = EU_LOG_INFO;
/* The loop is single-threaded; CPU-pool threads never log with context. */
static _Thread_local const char *ctx_tenant;
static _Thread_local const char *ctx_request;

static const char *const level_names[] = {"debug", "info", "warn", "error"};

void
eu_log_set_level(enum eu_log_level level)
{
    min_level = level;
}

int
eu_log_level_parse(const char *s, enum eu_log_level *out)
{
    for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
        if (strcmp(s, level_names[i]) == 0) {
            *out = (enum eu_log_level)i;
            return 0;
        }
    }
    return -1;
}

bool
eu_log_is_enabled(enum eu_log_level level)
{
    return level >= min_level;
}

void
eu_log_set_context(const char *tenant, const char *request_id)
{
    ctx_tenant = tenant;
    ctx_request = request_id;
}

void
eu_log_write(enum eu_log_level level, const char *subsystem, const char *fmt, ...)
{
    char line[2048];
    struct timeval tv;
    struct tm tm;
    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    int n = snprintf(line, sizeof(line), "%-5s %04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s",
                     level_names[level], tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec, (long)(tv.tv_usec / 1000), subsystem);
    if (ctx_tenant && n < (int)sizeof(line))
        n += snprintf(line + n, sizeof(line) - n, " tenant=%s", ctx_tenant);
    if (ctx_request && n < (int)sizeof(line))
        n += snprintf(line + n, sizeof(line) - n, " req=%s", ctx_request);
    if (n < (int)sizeof(line) - 1) {
        line[n++] = ' ';
        va_list ap;
        va_start(ap, fmt);
        int m = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
        va_end(ap);
        n = m < 0 ? n : n + m;
    }
    if (n > (int)sizeof(line) - 2)
        n = (int)sizeof(line) - 2;
    /* Keep one event on one line whatever the message held. */
    for (int i = 0; i < n; i++)
        if (line[i] == '\n' || line[i] == '\r')
            line[i] = ' ';
    line[n++] = '\n';
    fwrite(line, 1, (size_t)n, stderr);
}

/* Kept here, not in config.c, so that every subsystem that names a server
 * in a log line or an error can reach it. */
char *
eu_log_redact_url(const char *url)
{
    size_t len = strlen(url);
    /* Each "password=..." (9+ bytes in) becomes at most 17 bytes out and the
     * userinfo mask adds at most 8, so 9 * len + 10 bytes always suffice. */
    char *out = eu_xmalloc(len * (sizeof MASK) + sizeof MASK + 1);
    size_t o = 0;
    const char *authority = strstr(url, "://");
    const char *at = NULL, *colon = NULL;
    if (authority) {
        authority += 3;
        size_t alen = strcspn(authority, "/?#");
        for (size_t i = 0; i < alen; i++)
            if (authority[i] == '@')
                at = authority + i; /* the last '@': passwords may hold one */
        if (at)
            colon = memchr(authority, ':', (size_t)(at - authority));
    }
    for (const char *c = url; *c;) {
        if (colon && c == colon + 1) {
            memcpy(out + o, MASK, sizeof MASK - 1);
            o += sizeof MASK - 1;
            c = at;
            /* Once: with an empty password c is colon + 1 again, and
             * masking it over and over ran past the buffer. */
            colon = NULL;
            continue;
        }
        if (strncmp(c, "password=", 9) == 0 && (c == url || strchr("?& ", c[-1]))) {
            memcpy(out + o, "password=" MASK, 9 + sizeof MASK - 1);
            o += 9 + sizeof MASK - 1;
            c += 9;
            if (*c == '\'') {
                /* Quoted conninfo value: skip to the closing quote. */
                c++;
                while (*c && *c != '\'')
                    c += c[0] == '\\' && c[1] ? 2 : 1;
                if (*c)
                    c++;
            } else {
                c += strcspn(c, "& #");
            }
            continue;
        }
        out[o++] = *c++;
    }
    out[o] = '\0';
    return out;
}
