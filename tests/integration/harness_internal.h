/*
 * What harness.c and harness_pg.c share and the tests do not: the
 * harness's own small helpers. Every string returned is malloc'd, the
 * caller's to free.
 */
#ifndef EUNHA_IT_HARNESS_INTERNAL_H
#define EUNHA_IT_HARNESS_INTERNAL_H

/* strdup and a formatted string that abort on no memory. */
char *it_xstrdup(const char *s);
char *it_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The environment's value of name, or fallback (not copied). */
const char *it_env_or(const char *name, const char *fallback);
/* Drops the databases of test servers whose runner is gone. */
void it_drop_stale_databases(void);

#endif
