/*
 * One PostgreSQL connection that LISTENs on a channel, on the event loop
 * (src/db/listen.c): how a process hears of what another process changed
 * in the control database (a tenant created, suspended, moved or deleted
 * through any process's admin API) without polling. The connection is
 * made and read without blocking; when it breaks it is made again a
 * second later, and since notifications sent meanwhile are lost, the
 * callback is then told to look at everything again.
 */
#ifndef EUNHA_DBLISTEN_H
#define EUNHA_DBLISTEN_H

struct event_base;
struct eu_db_listener;

/* payload is the notification's text (borrowed for the call), or NULL
 * once the connection is (again) listening: what was sent before may have
 * been missed. */
typedef void (*eu_db_notify_cb)(const char *payload, void *arg);

/*
 * Listens on channel (an identifier of letters, digits and '_') in
 * database dbname on conninfo's server. Strings are copied. Returns a
 * listener freed with eu_db_listener_free(); it connects in the background.
 */
struct eu_db_listener *eu_db_listener_new(struct event_base *base, const char *conninfo,
                                          const char *dbname, const char *channel,
                                          eu_db_notify_cb cb, void *arg);
void eu_db_listener_free(struct eu_db_listener *l);

#endif
