/*
 * Servers of a test's own, beside the PostgreSQL and Redis scripts/test.sh
 * started for the whole run: the fleet's tests (issue 30) need a second
 * PostgreSQL server, a second Redis, a standby to promote. Each is started
 * through scripts/lib/services.sh, as the run's own servers are, in a
 * scratch directory the test owns and removes when it stops the server.
 */
#ifndef EUNHA_IT_FLEET_H
#define EUNHA_IT_FLEET_H

#include <libpq-fe.h>

/* One server of the test's own: its scratch directory and port. */
struct eu_it_extra {
    char dir[64];
    int port;
};

/* Runs cmd under bash with scripts/lib/services.sh loaded (its stdout read,
 * its stderr the test's); returns the first line of output as a number, 0
 * when it printed nothing, -1 when it failed. */
int eu_it_services(const char *cmd);

/* Starts a PostgreSQL of the test's own (copied from the run's initdb'd
 * seed when there is one, as services.sh does for the first); fails the
 * test when it cannot. Stop it with eu_it_extra_pg_stop(). */
void eu_it_extra_pg_start(struct eu_it_extra *x);
void eu_it_extra_pg_stop(struct eu_it_extra *x);
/* A connection to db on x as postgres; fails the test when it cannot. The
 * caller PQfinish()es it. */
PGconn *eu_it_extra_pg_connect(const struct eu_it_extra *x, const char *db);
/* "postgresql://postgres:secret@127.0.0.1:PORT/db" into out. */
void eu_it_extra_pg_url(const struct eu_it_extra *x, const char *db, char *out, size_t outlen);

/* Starts a non-persistent Redis of the test's own; fails the test when it
 * cannot. Stop it with eu_it_extra_redis_stop(). */
void eu_it_extra_redis_start(struct eu_it_extra *x);
void eu_it_extra_redis_stop(struct eu_it_extra *x);

#endif
