/*
 * One line per event on stderr: level, time, subsystem, tenant, request id,
 * message. The tenant and request id come from a context the HTTP layer sets
 * while a request's code runs, so call sites stay short.
 */
#ifndef EUNHA_LOG_H
#define EUNHA_LOG_H

#include <stdbool.h>

enum eu_log_level { EU_LOG_DEBUG, EU_LOG_INFO, EU_LOG_WARN, EU_LOG_ERROR };

/* Sets the minimum level written. */
void eu_log_set_level(enum eu_log_level level);
/* Parses "debug", "info", "warn", "error"; returns -1 on anything else. */
int eu_log_level_parse(const char *s, enum eu_log_level *out);
bool eu_log_is_enabled(enum eu_log_level level);
/* Sets the context added to every line until the next call; the strings are
 * borrowed and must outlive the context (pass NULL to clear). */
void eu_log_set_context(const char *tenant, const char *request_id);

/*
 * Returns url with every password replaced by "********": the one in
 * "scheme://user:pass@host" (also ":pass@", as Redis URLs write it) and
 * libpq's "password=..." in a URL's query or a key=value conninfo. Use it
 * on every server URL or conninfo that goes into a log line or an error
 * message. The caller frees the result.
 */
char *eu_log_redact_url(const char *url);

void eu_log_write(enum eu_log_level level, const char *subsystem, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define EU_LOG(level, sub, ...)                                                                    \
    do {                                                                                           \
        if (eu_log_is_enabled(level))                                                              \
            eu_log_write(level, sub, __VA_ARGS__);                                                 \
    } while (0)
#define eu_log_debug(sub, ...) EU_LOG(EU_LOG_DEBUG, sub, __VA_ARGS__)
#define eu_log_info(sub, ...) EU_LOG(EU_LOG_INFO, sub, __VA_ARGS__)
#define eu_log_warn(sub, ...) EU_LOG(EU_LOG_WARN, sub, __VA_ARGS__)
#define eu_log_error(sub, ...) EU_LOG(EU_LOG_ERROR, sub, __VA_ARGS__)

#endif
