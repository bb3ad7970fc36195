/*
 * The process: everything one eunha serve shares between its tenants. One
 * instance lives for the life of the process; handlers reach it through
 * req->app.
 */
#ifndef EUNHA_APP_H
#define EUNHA_APP_H

#include <stdbool.h>
#include <stdint.h>

struct event_base;
struct eu_config;
struct eu_router;
struct eu_registry;
struct eu_db_pool;
struct eu_redis;
struct eu_cpupool;
struct eu_http_server;
struct eu_fetch_client;
struct eu_store;

struct eu_app {
    struct event_base *base;
    struct eu_config *cfg;
    char *config_path;
    struct eu_router *router;
    struct eu_registry *registry;
    struct eu_db_pool *control; /* the control database */
    char *control_dbname;
    struct eu_redis *redis;
    struct eu_cpupool *cpu;
    /* File work (the local media store, /system/ reads): threads of its
     * own, so a file never waits behind image decoding on cpu. */
    struct eu_cpupool *io;
    struct eu_http_server *http;
    struct eu_fetch_client *fetch; /* outbound federation requests (fetch.h) */
    struct eu_store *store;        /* media files ([media], mediastore.h) */
    bool stopping;
    /* metrics */
    uint64_t requests_by_class[6]; /* index status/100 */
    int inflight;
};

/*
 * Runs `eunha serve`: start-up (control database, template, registry),
 * listeners, the loop until SIGTERM/SIGINT. ready_file may be NULL. Returns
 * the process exit code.
 */
int eu_app_serve(const char *config_path, const char *ready_file);
/* `eunha migrate`: migrates control, template and every placement's
 * database with blocking connections (not a server). Returns the exit code. */
int eu_app_migrate(const char *config_path);
/* Reloads the tenant registry from the control table (asynchronously). */
void eu_app_reload_tenants(struct eu_app *app);

#endif
