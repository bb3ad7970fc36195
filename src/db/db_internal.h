/*
 * Declarations shared inside src/db/ (and its unit tests) only.
 */
#ifndef EUNHA_DB_INTERNAL_H
#define EUNHA_DB_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

/*
 * True when every reference to a tenant table in sql is matched by a mention
 * of its tenant_id (see sqlcheck.c for the exact rule). On false, why gets a
 * message naming the table. May be called from any thread.
 */
bool eu_db_sql_check_tenant(const char *sql, char *why, size_t whylen);

#endif
