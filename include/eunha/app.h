/*
 * The process: everything one eunha serve shares between its tenants. One
 * instance lives for the life of the process; handlers reach it through
 * req->app. Only the struct is here, so every room may read it (it names
 * its members' types and nothing else); the wiring that fills it in
 * (src/app/app.c) is declared in serve.h.
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
struct eu_mail_client;

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
    struct eu_mail_client *mail;   /* SMTP ([mail], mail.h); NULL: mail goes to the log */
    /* The other processes' changes of tenants (dblisten.h, app.c). */
    struct eu_db_listener *tenant_listener;
    bool stopping;
    /* metrics */
    uint64_t requests_by_class[6]; /* index status/100 */
    int inflight;
};

#endif
