/*
 * What the instance's API (instance_info.c) and its pages (web_about.c)
 * say the same way.
 */
#ifndef EUNHA_API_INSTANCE_INTERNAL_H
#define EUNHA_API_INSTANCE_INTERNAL_H

struct eu_req;

/* A domain block's domain as the public sees it (domain_blocks b): an
 * obfuscated one has its middle half starred, as Mastodon's
 * DomainBlock#public_domain does. */
#define EU_SQL_BLOCK_PUBLIC_DOMAIN                                                                 \
    "CASE WHEN b.obfuscate THEN overlay(b.domain PLACING"                                          \
    " repeat('*', length(b.domain) / 2) FROM length(b.domain) / 4 + 1"                             \
    " FOR length(b.domain) / 2) ELSE b.domain END"

/* A terms of service text with %{domain} replaced by the tenant's domain,
 * as in Mastodon's templates; still plain text. On the request's arena. */
const char *eu_instance_terms_text(struct eu_req *req, const char *text);

#endif
