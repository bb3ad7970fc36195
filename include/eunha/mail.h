/*
 * E-mail: the process's SMTP client and message composition
 * (src/outbound/mail.c). A tenant's mail goes out as durable jobs through
 * eunha/mailer.h, which stands on this.
 *
 * The client speaks SMTP through libcurl's multi interface on the event
 * loop, like the outbound HTTP client beside it (fetch.h), so a slow or
 * absent mail server holds no request and no thread. It exists only when
 * [mail] smtp_url is set; without it every message is written to the log
 * (info) instead, and the flows that send mail still complete.
 *
 * A message is composed here as RFC 5322 text: Date, Message-ID, From
 * with the tenant's name, Reply-To, To, Subject (RFC 2047 encoded when not
 * ASCII), List-Unsubscribe when given, and a multipart/alternative body of
 * plain text and HTML. Header values that came from users are refused when
 * they hold CR or LF (header injection).
 *
 * Everything runs on the loop thread.
 */
#ifndef EUNHA_MAIL_H
#define EUNHA_MAIL_H

#include <stdbool.h>
#include <stddef.h>

struct event_base;
struct eu_config;
struct eu_mail_client;

/* ------------------------------------------------------ the SMTP client */

/*
 * Creates the client from [mail] in cfg (copied). Returns NULL when
 * smtp_url is unset (mail goes to the log) or libcurl cannot be set up
 * (logged). Free with eu_mail_client_free().
 */
struct eu_mail_client *eu_mail_client_new(struct event_base *base, const struct eu_config *cfg);
/* For shutdown: aborts every send in flight, calling each callback with
 * ok false, so the jobs waiting on them end (unrecorded while the queue
 * stops: their locks expire and they run again). NULL: no-op. */
void eu_mail_client_abandon_all(struct eu_mail_client *c);
/* Aborts what is in flight without calling back and frees c. NULL: no-op. */
void eu_mail_client_free(struct eu_mail_client *c);

/* ok false with error (libcurl's text, borrowed for the call) when the
 * server could not be reached or refused the message. */
typedef void (*eu_mail_sent_cb)(bool ok, const char *error, void *arg);

/*
 * Sends message (RFC 5322 text, CRLF line ends, len bytes; copied) from
 * from_addr to rcpt. cb runs exactly once, on the loop, never from inside
 * this call.
 */
void eu_mail_send(struct eu_mail_client *c, const char *from_addr, const char *rcpt,
                  const char *message, size_t len, eu_mail_sent_cb cb, void *arg);

/* ------------------------------------------------------ composing */

/* True when s may be a header value: no CR, LF or NUL, at most 998 bytes. */
bool eu_mail_header_ok(const char *s);

struct eu_mail_msg {
    const char *from_name;        /* the tenant's title; may be NULL */
    const char *from_addr;        /* "notifications@a.example" */
    const char *reply_to;         /* the tenant's contact address, or NULL */
    const char *to;               /* one address */
    const char *subject;          /* UTF-8 */
    const char *text;             /* the plain-text part, UTF-8, LF line ends */
    const char *html;             /* the HTML part, UTF-8 */
    const char *list_unsubscribe; /* a URL, or NULL */
    const char *domain;           /* for the Message-ID: the tenant's domain */
};

/*
 * Composes m as an RFC 5322 message with CRLF line ends. Returns it
 * (caller frees; *len bytes), or NULL when a header value holds CR or LF
 * or an address is malformed.
 */
char *eu_mail_compose(const struct eu_mail_msg *m, size_t *len);

#endif
