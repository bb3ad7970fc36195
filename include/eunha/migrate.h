/*
 * Schema migrations: numbered SQL files from migrations/control and
 * migrations/tenant, compiled into the binary. Each database records the
 * versions applied in its eunha_schema table.
 */
#ifndef EUNHA_MIGRATE_H
#define EUNHA_MIGRATE_H

struct pg_conn;
struct eu_db_conn;

struct eu_migration {
    int version;
    const char *name;
    const char *sql;
};

extern const struct eu_migration eu_control_migrations[];
extern const int eu_control_migrations_count;
extern const struct eu_migration eu_tenant_migrations[];
extern const int eu_tenant_migrations_count;

/* The newest tenant schema version this binary knows. */
int eu_migrate_tenant_latest(void);

/*
 * Brings a database up to date over a blocking connection. Only for start-up
 * and the `eunha migrate` command, never on the loop once it serves. Each
 * migration runs in its own transaction; two processes migrating at once are
 * safe (the loser's insert of the version conflicts and it re-reads).
 * Returns 0, or -1 after logging the failure.
 */
int eu_migrate_blocking(struct pg_conn *pg, const struct eu_migration *set, int count,
                        const char *what);

/*
 * A text naming exactly the migrations of set (the newest version and a
 * hash of all of them), which start-up keeps as the template database's
 * comment: a template whose comment matches needs no connection to know it
 * is up to date. The caller frees it.
 */
char *eu_migrate_stamp(const struct eu_migration *set, int count);

/*
 * The asynchronous form for a tenant database on its first use: runs on a
 * pool's fresh connection as its ready hook (see eu_db_pool_set_ready_hook),
 * then calls eu_db_conn_ready_done(conn, rc). arg is the tenant's name for
 * logs (borrowed, must outlive the pool).
 */
void eu_migrate_tenant_hook(struct eu_db_conn *conn, void *arg);

#endif
