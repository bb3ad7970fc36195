/*
 * Domain blocks: an account's own (/api/v1/domain_blocks, src/api/
 * domain_blocks.c) and its tenant's (the operator's, /admin/v1/tenants/
 * {domain}/domain_blocks, src/admin/domain_blocks.c). Both are rows of the
 * tenant (tenant migration 0029); what they change is applied where the
 * rows are read: the timeline and render statements, notify.c, the inbox
 * and authorized fetch (src/ap/authfetch.c) and delivery (src/ap/
 * deliver.c).
 */
#ifndef EUNHA_DOMAINBLOCK_H
#define EUNHA_DOMAINBLOCK_H

#include <stddef.h>

#include "eunha/sql.h"

struct eu_req;

/* Longest domain kept: a DNS name and a port. */
#define EU_DOMAIN_BLOCK_MAX 260

/*
 * Writes the form a domain block is kept under into out (outlen at least
 * EU_DOMAIN_BLOCK_MAX + 1): surrounding blanks and one trailing dot
 * dropped, lower-cased, with its ":PORT" when one is named (remote
 * accounts' domains carry the port of a non-default one, as
 * eu_fetch_host_of() writes hosts). The name must be a DNS name of
 * [a-z0-9-_] labels or an IPv4 address; internationalised names must come
 * as punycode ("xn--..."). Returns 0, or -1 when in is no such domain.
 */
int eu_domain_block_normalize(const char *in, char *out, size_t outlen);

/* User-level blocks (src/api/domain_blocks.c, routed by its table
 * eu_domain_blocks_routes): GET, POST and DELETE /api/v1/domain_blocks as
 * Mastodon's. */
void eu_domain_blocks_index(struct eu_req *req);
void eu_domain_blocks_create(struct eu_req *req);
void eu_domain_blocks_destroy(struct eu_req *req);

/* Their statements and the admin API's, for the registry. */
extern const struct eu_sql eu_domain_blocks_sql[];
extern const struct eu_sql eu_admin_domain_blocks_sql[];

/* The operator's API (src/admin/domain_blocks.c, eu_admin_domain_blocks_routes):
 * domain blocks and the delivery refusals deliver.c keeps. */
void eu_admin_domain_blocks_list(struct eu_req *req);
void eu_admin_domain_blocks_create(struct eu_req *req);
void eu_admin_domain_blocks_show(struct eu_req *req);
void eu_admin_domain_blocks_delete(struct eu_req *req);
void eu_admin_delivery_refusals_list(struct eu_req *req);
void eu_admin_delivery_refusals_delete(struct eu_req *req);

#endif
