/*
 * The process's one shared Redis connection (hiredis async on the loop).
 * It reconnects with backoff; while it is down, commands fail at once so
 * callers fall back to PostgreSQL instead of waiting. Every tenant key lives
 * under "<prefix>:{t<ID>}:" (see eu_tenant_key in tenant.h).
 */
#ifndef EUNHA_REDIS_H
#define EUNHA_REDIS_H

#include <stdbool.h>
#include <stddef.h>

struct event_base;
struct eu_redis;
struct redisReply;

/* reply is NULL when Redis is down or the connection broke; it belongs to
 * hiredis and dies when the callback returns. */
typedef void (*eu_redis_reply_cb)(struct redisReply *reply, void *arg);

/* Where and as whom to connect, from a Redis URL. */
struct eu_redis_target {
    char *host;      /* NULL for a unix socket */
    int port;        /* 6379 unless given */
    char *unix_path; /* "unix:///path": the socket, else NULL */
    int db;          /* "/N" after the host, else 0 */
    char *user;      /* "user:" before the password (Redis 6 ACL), else NULL */
    char *password;  /* ":password@": sent with AUTH on every connect, else NULL */
};

/*
 * Parses "redis://[[user]:password@]host[:port][/db]" (user and password
 * may be %-escaped) or "unix:///path" into t. Returns 0, or -1 with a
 * message in err that shows the URL with its password masked. Release t
 * with eu_redis_target_release() after success.
 */
int eu_redis_url_parse(const char *url, struct eu_redis_target *t, char *err, size_t errlen);
/* Frees t's strings (wiping the password) and zeroes it. */
void eu_redis_target_release(struct eu_redis_target *t);

/* Parses url (see eu_redis_url_parse()) and starts connecting.
 * A command without a reply after timeout_ms (<= 0: 1000) is answered with
 * NULL and the connection re-made. Returns NULL with a message in err for a
 * malformed url. Free with eu_redis_free(). */
struct eu_redis *eu_redis_new(struct event_base *base, const char *url, int timeout_ms, char *err,
                              size_t errlen);
/* A Redis that is never up, for a URL that cannot be used: every command
 * fails as while a real one is down, and nothing is ever received. Lets a
 * placement's bad redis_url cost its own tenants their Redis and nothing
 * else. Free with eu_redis_free(). */
struct eu_redis *eu_redis_new_down(struct event_base *base);
void eu_redis_free(struct eu_redis *r);
bool eu_redis_is_connected(const struct eu_redis *r);
/*
 * Sends a command given as argv (binary-safe, lengths in argvlen or NULL for
 * C strings). cb (may be NULL) runs later with the reply; when Redis is down
 * it runs later with NULL. Returns 0 if sent, -1 if not (cb still runs).
 */
int eu_redis_command(struct eu_redis *r, eu_redis_reply_cb cb, void *arg, int argc,
                     const char **argv, const size_t *argvlen);

/* A message on a channel matching the subscription's pattern. channel and
 * msg belong to hiredis and die when the callback returns. */
typedef void (*eu_redis_message_cb)(const char *channel, const char *msg, size_t len, void *arg);
/* The subscription is live again: messages published while it was down
 * were lost, so whatever they would have said must be assumed. */
typedef void (*eu_redis_subscribed_cb)(void *arg);

/*
 * Subscribes to pattern (PSUBSCRIBE glob) on a second connection of its
 * own, re-made with backoff like the first. on_subscribed (may be NULL)
 * runs each time Redis confirms the subscription, the first time included;
 * on_message runs for each message. Both run on the loop. One subscription
 * per eu_redis: returns -1 when there already is one, else 0.
 */
int eu_redis_psubscribe(struct eu_redis *r, const char *pattern, eu_redis_message_cb on_message,
                        eu_redis_subscribed_cb on_subscribed, void *arg);
/* True while the subscription is confirmed on a live connection, i.e.
 * while no message can be missed. */
bool eu_redis_is_subscribed(const struct eu_redis *r);

/*
 * Plain channel subscriptions (the streaming API's), sharing the one
 * subscriber connection with the pattern subscription. on_message runs
 * for each message of a subscribed channel; on_ready each time the
 * subscriber connection is (re)made, when the caller must subscribe all
 * its channels again (messages meanwhile were lost). Call once.
 */
void eu_redis_channels_listen(struct eu_redis *r, eu_redis_message_cb on_message,
                              eu_redis_subscribed_cb on_ready, void *arg);
/* SUBSCRIBE channel: 0 if sent, -1 while the subscriber is down (on_ready
 * will come). */
int eu_redis_subscribe(struct eu_redis *r, const char *channel);
/* UNSUBSCRIBE channel; nothing while the subscriber is down. */
void eu_redis_unsubscribe(struct eu_redis *r, const char *channel);

/*
 * cb (NULL: none) runs each time the command connection is made or made
 * again, before any command queued later goes on it, so keys a Redis
 * restart may have lost can be set again before anyone reads them. One
 * per eu_redis; the last call wins.
 */
void eu_redis_on_connect(struct eu_redis *r, eu_redis_subscribed_cb cb, void *arg);

#endif
