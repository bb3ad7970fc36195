/*
 * A LISTEN connection on the loop (include/eunha/dblisten.h): libpq's
 * non-blocking connect driven by PQconnectPoll() with the socket watched
 * by libevent (the socket may change from one poll to the next when a
 * connection string names several hosts), then LISTEN, then each readable
 * event consumed and its notifications handed to the callback.
 */
#include "eunha/dblisten.h"

#include <event2/event.h>
#include <libpq-fe.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/db.h"
#include "eunha/log.h"
#include "eunha/mem.h"

/* How long a broken connection waits before the next attempt. */
#define RETRY_S 1

struct eu_db_listener {
    struct event_base *base;
    char *conninfo, *dbname, *channel;
    eu_db_notify_cb cb;
    void *arg;
    PGconn *pg;
    struct event *io;    /* the socket, while connecting or listening */
    struct event *retry; /* the next attempt */
    bool listening;      /* LISTEN sent; its answer is being read or was */
    bool warned;         /* a failure was logged since the last success */
};

static void start(struct eu_db_listener *l);

static void
drop(struct eu_db_listener *l, const char *why)
{
    if (!l->warned)
        eu_log_warn("db", "listening on '%s' stopped: %s; trying again every %d s", l->channel, why,
                    RETRY_S);
    l->warned = true;
    if (l->io) {
        event_free(l->io);
        l->io = NULL;
    }
    if (l->pg) {
        PQfinish(l->pg);
        l->pg = NULL;
    }
    l->listening = false;
    struct timeval tv = {RETRY_S, 0};
    evtimer_add(l->retry, &tv);
}

static void
watch(struct eu_db_listener *l, short what, event_callback_fn fn)
{
    if (l->io)
        event_free(l->io);
    l->io = event_new(l->base, PQsocket(l->pg), what, fn, l);
    event_add(l->io, NULL);
}

static void
on_readable(evutil_socket_t fd, short what, void *arg)
{
    struct eu_db_listener *l = arg;
    if (!PQconsumeInput(l->pg)) {
        drop(l, PQerrorMessage(l->pg));
        return;
    }
    /* LISTEN's own answer (once), and nothing else is ever sent. */
    PGresult *res;
    while (!PQisBusy(l->pg) && (res = PQgetResult(l->pg))) {
        bool ok = PQresultStatus(res) == PGRES_COMMAND_OK;
        PQclear(res);
        if (!ok) {
            drop(l, "LISTEN was refused");
            return;
        }
    }
    PGnotify *n;
    while ((n = PQnotifies(l->pg))) {
        l->cb(n->extra, l->arg);
        PQfreemem(n);
    }
}

static void
on_connecting(evutil_socket_t fd, short what, void *arg)
{
    struct eu_db_listener *l = arg;
    switch (PQconnectPoll(l->pg)) {
    case PGRES_POLLING_READING:
        watch(l, EV_READ, on_connecting);
        return;
    case PGRES_POLLING_WRITING:
        watch(l, EV_WRITE, on_connecting);
        return;
    case PGRES_POLLING_OK:
        break;
    default:
        drop(l, PQerrorMessage(l->pg));
        return;
    }
    char *sql = eu_xasprintf("LISTEN %s", l->channel);
    int sent = PQsendQuery(l->pg, sql);
    free(sql);
    if (!sent) {
        drop(l, PQerrorMessage(l->pg));
        return;
    }
    l->listening = true;
    watch(l, EV_READ | EV_PERSIST, on_readable);
    if (l->warned)
        eu_log_info("db", "listening on '%s' again", l->channel);
    l->warned = false;
    /* Whatever was sent while nobody listened is lost: look again. */
    l->cb(NULL, l->arg);
}

static void
start(struct eu_db_listener *l)
{
    const char *keys[] = {"dbname", "dbname", "application_name", NULL};
    const char *vals[] = {l->conninfo, l->dbname, "eunha_listen", NULL};
    l->pg = PQconnectStartParams(keys, vals, 1);
    if (!l->pg || PQstatus(l->pg) == CONNECTION_BAD) {
        drop(l, l->pg ? PQerrorMessage(l->pg) : "out of memory");
        return;
    }
    PQsetnonblocking(l->pg, 1);
    /* PQconnectStart's first step is to write: poll once it can. */
    watch(l, EV_WRITE, on_connecting);
}

static void
on_retry(evutil_socket_t fd, short what, void *arg)
{
    start(arg);
}

struct eu_db_listener *
eu_db_listener_new(struct event_base *base, const char *conninfo, const char *dbname,
                   const char *channel, eu_db_notify_cb cb, void *arg)
{
    if (strspn(channel, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(channel))
        return NULL;
    struct eu_db_listener *l = eu_xcalloc(1, sizeof(*l));
    l->base = base;
    l->conninfo = eu_xstrdup(conninfo);
    l->dbname = eu_xstrdup(dbname);
    l->channel = eu_xstrdup(channel);
    l->cb = cb;
    l->arg = arg;
    l->retry = evtimer_new(base, on_retry, l);
    start(l);
    return l;
}

void
eu_db_listener_free(struct eu_db_listener *l)
{
    if (!l)
        return;
    if (l->io)
        event_free(l->io);
    event_free(l->retry);
    if (l->pg)
        PQfinish(l->pg);
    free(l->conninfo);
    free(l->dbname);
    free(l->channel);
    free(l);
}
