/*
 * The parts of src/http/server.c that read proxy headers, declared for the
 * fuzz targets and tests: they see untrusted bytes before anything else does,
 * so they are exercised on their own, without a listener.
 */
#ifndef EUNHA_HTTP_SERVER_INTERNAL_H
#define EUNHA_HTTP_SERVER_INTERNAL_H

struct eu_arena;
struct eu_config;

/* The first item of a comma-separated header value (X-Forwarded-Host,
 * X-Forwarded-Proto), blanks trimmed. Owned by a. */
const char *eu_http_list_first(struct eu_arena *a, const char *v);
/*
 * The client's address from X-Forwarded-For value v sent by the trusted
 * proxy peer, skipping cfg's trusted proxies from the right; peer when no
 * entry can be believed. Owned by a (or peer itself).
 */
const char *eu_http_forwarded_client(struct eu_arena *a, const char *v, const char *peer,
                                     const struct eu_config *cfg);

#endif
