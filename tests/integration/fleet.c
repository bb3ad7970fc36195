/*
 * Servers of a test's own (fleet.h): thin calls into scripts/lib/services.sh
 * so a test starts PostgreSQL and Redis exactly as scripts/test.sh does.
 */
#include "fleet.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
eu_it_services(const char *cmd)
{
    const char *src = getenv("EUNHA_SOURCE_DIR");
    ck_assert_msg(src && *src, "EUNHA_SOURCE_DIR is not set (CMakeLists.txt sets it)");
    char line[4096];
    snprintf(line, sizeof(line), "bash -c '. \"%s/scripts/lib/services.sh\" && %s'", src, cmd);
    FILE *f = popen(line, "r");
    ck_assert_ptr_nonnull(f);
    char out[64] = "";
    if (!fgets(out, sizeof(out), f))
        out[0] = '\0';
    int rc = pclose(f);
    return rc == 0 && out[0] ? atoi(out) : (rc == 0 ? 0 : -1);
}

static void
scratch(struct eu_it_extra *x, const char *what)
{
    snprintf(x->dir, sizeof(x->dir), "/tmp/eunha_it_%s_XXXXXX", what);
    ck_assert_ptr_nonnull(mkdtemp(x->dir));
}

void
eu_it_extra_pg_start(struct eu_it_extra *x)
{
    scratch(x, "pg");
    char cmd[2048];
    snprintf(cmd, sizeof(cmd),
             "d=%s/pg; if [ -n \"${EUNHA_TEST_PG_SEED:-}\" ] && [ -f "
             "\"$EUNHA_TEST_PG_SEED/PG_VERSION\" ];"
             " then cp -a \"$EUNHA_TEST_PG_SEED\" \"$d\"; fi; chmod 755 %s;"
             " p=$(eu_free_port) && eu_pg_start \"$d\" \"$p\" --no-fsync >&2 && echo \"$p\"",
             x->dir, x->dir);
    x->port = eu_it_services(cmd);
    ck_assert_msg(x->port > 0, "cannot start a PostgreSQL of the test's own");
}

void
eu_it_extra_pg_stop(struct eu_it_extra *x)
{
    if (!x->port)
        return;
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "eu_pg_stop %s/pg >&2; rm -rf %s", x->dir, x->dir);
    eu_it_services(cmd);
    x->port = 0;
}

PGconn *
eu_it_extra_pg_connect(const struct eu_it_extra *x, const char *db)
{
    char conninfo[256];
    snprintf(conninfo, sizeof(conninfo), "host=127.0.0.1 port=%d user=postgres dbname=%s", x->port,
             db);
    PGconn *c = PQconnectdb(conninfo);
    ck_assert_msg(PQstatus(c) == CONNECTION_OK, "server on %d: %s", x->port, PQerrorMessage(c));
    return c;
}

void
eu_it_extra_pg_url(const struct eu_it_extra *x, const char *db, char *out, size_t outlen)
{
    snprintf(out, outlen, "postgresql://postgres:secret@127.0.0.1:%d/%s", x->port, db);
}

void
eu_it_extra_redis_start(struct eu_it_extra *x)
{
    scratch(x, "redis");
    char cmd[1024];
    snprintf(cmd, sizeof(cmd),
             "p=$(eu_free_port) && eu_redis_start %s/redis \"$p\" >&2 && echo \"$p\"", x->dir);
    x->port = eu_it_services(cmd);
    ck_assert_msg(x->port > 0, "cannot start a Redis of the test's own");
}

void
eu_it_extra_redis_stop(struct eu_it_extra *x)
{
    if (!x->port)
        return;
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "eu_redis_stop %s/redis >&2; rm -rf %s", x->dir, x->dir);
    eu_it_services(cmd);
    x->port = 0;
}
