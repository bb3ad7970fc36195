/*
 * The SMTP client and message composition (include/eunha/mail.h).
 *
 * A sibling of the HTTP client (fetch.c) rather than a mode of it: SMTP
 * needs none of that client's guards (the destination is the operator's
 * one mail server, not a URL from the network), and mail is rare next to
 * federation traffic. It has its own libcurl multi handle on the same
 * event loop: libcurl's sockets and timer are watched by libevent, and a
 * transfer's outcome is read with curl_multi_info_read() after
 * curl_multi_socket_action() returns, so callbacks never run inside
 * libcurl. Outcomes of sends that fail before starting are reported from
 * a zero-delay event, so a callback never runs inside eu_mail_send().
 */
#include "eunha/mail.h"

#include <curl/curl.h>
#include <event2/event.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eunha/config.h"
#include "eunha/log.h"
#include "eunha/mem.h"

/* A whole exchange with the mail server; a server that is slower is
 * treated as down and the job retries later. */
#define SEND_TIMEOUT_S 60
#define CONNECT_TIMEOUT_S 10

struct send {
    struct eu_mail_client *c;
    CURL *easy;
    struct curl_slist *rcpt;
    char *from; /* "<addr>" */
    char *msg;
    size_t len, off;
    eu_mail_sent_cb cb;
    void *arg;
    struct event *failed; /* reports a send that could not start */
    char errbuf[CURL_ERROR_SIZE];
    struct send *prev, *next;
};

struct sock {
    struct eu_mail_client *c;
    struct event *ev;
};

struct eu_mail_client {
    struct event_base *base;
    CURLM *multi;
    struct event *timer;
    char *url, *user, *password;
    bool starttls;
    struct send *all;
};

static void check_done(struct eu_mail_client *c);

static void
unlink_send(struct send *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        s->c->all = s->next;
    if (s->next)
        s->next->prev = s->prev;
}

static void
free_send(struct send *s)
{
    if (s->easy) {
        curl_multi_remove_handle(s->c->multi, s->easy);
        curl_easy_cleanup(s->easy);
    }
    if (s->failed)
        event_free(s->failed);
    curl_slist_free_all(s->rcpt);
    free(s->from);
    if (s->msg)
        sodium_memzero(s->msg, s->len); /* it may hold a reset link */
    free(s->msg);
    free(s);
}

static void
on_socket_event(evutil_socket_t fd, short what, void *arg)
{
    struct eu_mail_client *c = arg;
    int flags = (what & EV_READ ? CURL_CSELECT_IN : 0) | (what & EV_WRITE ? CURL_CSELECT_OUT : 0);
    int running;
    curl_multi_socket_action(c->multi, fd, flags, &running);
    check_done(c);
}

static int
socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    struct eu_mail_client *c = userp;
    struct sock *sk = socketp;
    if (what == CURL_POLL_REMOVE) {
        if (sk) {
            event_free(sk->ev);
            free(sk);
            curl_multi_assign(c->multi, fd, NULL);
        }
        return 0;
    }
    short kind =
        EV_PERSIST | (what & CURL_POLL_IN ? EV_READ : 0) | (what & CURL_POLL_OUT ? EV_WRITE : 0);
    if (!sk) {
        sk = eu_xcalloc(1, sizeof(*sk));
        sk->c = c;
        curl_multi_assign(c->multi, fd, sk);
    } else {
        event_free(sk->ev);
    }
    sk->ev = event_new(c->base, fd, kind, on_socket_event, c);
    event_add(sk->ev, NULL);
    return 0;
}

static void
on_timer(evutil_socket_t fd, short what, void *arg)
{
    struct eu_mail_client *c = arg;
    int running;
    curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    check_done(c);
}

static int
timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
    struct eu_mail_client *c = userp;
    if (timeout_ms < 0) {
        evtimer_del(c->timer);
        return 0;
    }
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    evtimer_add(c->timer, &tv);
    return 0;
}

/* Reads finished transfers and reports them; a callback may send more. */
static void
check_done(struct eu_mail_client *c)
{
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(c->multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        struct send *s = NULL;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&s);
        CURLcode rc = m->data.result;
        unlink_send(s);
        const char *err =
            rc == CURLE_OK ? NULL : (s->errbuf[0] ? s->errbuf : curl_easy_strerror(rc));
        char *copy = err ? eu_xstrdup(err) : NULL;
        eu_mail_sent_cb cb = s->cb;
        void *arg = s->arg;
        free_send(s);
        cb(rc == CURLE_OK, copy, arg);
        free(copy);
    }
}

static size_t
read_cb(char *buf, size_t size, size_t nmemb, void *userp)
{
    struct send *s = userp;
    size_t room = size * nmemb, n = s->len - s->off;
    if (n > room)
        n = room;
    memcpy(buf, s->msg + s->off, n);
    s->off += n;
    return n;
}

struct eu_mail_client *
eu_mail_client_new(struct event_base *base, const struct eu_config *cfg)
{
    if (!cfg->mail_smtp_url || !*cfg->mail_smtp_url)
        return NULL;
    struct eu_mail_client *c = eu_xcalloc(1, sizeof(*c));
    c->base = base;
    c->multi = curl_multi_init();
    if (!c->multi) {
        eu_log_error("mail", "cannot set up libcurl for SMTP");
        free(c);
        return NULL;
    }
    c->timer = evtimer_new(base, on_timer, c);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
    c->url = eu_xstrdup(cfg->mail_smtp_url);
    c->user = cfg->mail_user ? eu_xstrdup(cfg->mail_user) : NULL;
    c->password = cfg->mail_password ? eu_xstrdup(cfg->mail_password) : NULL;
    c->starttls = cfg->mail_starttls;
    return c;
}

void
eu_mail_client_abandon_all(struct eu_mail_client *c)
{
    if (!c)
        return;
    while (c->all) {
        struct send *s = c->all;
        unlink_send(s);
        eu_mail_sent_cb cb = s->cb;
        void *arg = s->arg;
        free_send(s);
        cb(false, "the process is stopping", arg);
    }
}

void
eu_mail_client_free(struct eu_mail_client *c)
{
    if (!c)
        return;
    while (c->all) {
        struct send *s = c->all;
        unlink_send(s);
        free_send(s);
    }
    curl_multi_cleanup(c->multi);
    event_free(c->timer);
    free(c->url);
    free(c->user);
    if (c->password)
        sodium_memzero(c->password, strlen(c->password));
    free(c->password);
    free(c);
}

static void
on_failed(evutil_socket_t fd, short what, void *arg)
{
    struct send *s = arg;
    unlink_send(s);
    eu_mail_sent_cb cb = s->cb;
    void *cbarg = s->arg;
    free_send(s);
    cb(false, "cannot start the SMTP transfer", cbarg);
}

static void
report_failure(struct send *s)
{
    struct timeval now = {0, 0};
    s->failed = evtimer_new(s->c->base, on_failed, s);
    evtimer_add(s->failed, &now);
}

void
eu_mail_send(struct eu_mail_client *c, const char *from_addr, const char *rcpt, const char *message,
             size_t len, eu_mail_sent_cb cb, void *arg)
{
    struct send *s = eu_xcalloc(1, sizeof(*s));
    s->c = c;
    s->cb = cb;
    s->arg = arg;
    s->msg = eu_xmalloc(len + 1);
    memcpy(s->msg, message, len);
    s->len = len;
    s->from = eu_xmalloc(strlen(from_addr) + 3);
    sprintf(s->from, "<%s>", from_addr);
    char *to = eu_xmalloc(strlen(rcpt) + 3);
    sprintf(to, "<%s>", rcpt);
    s->rcpt = curl_slist_append(NULL, to);
    free(to);
    s->next = c->all;
    if (c->all)
        c->all->prev = s;
    c->all = s;
    s->easy = curl_easy_init();
    if (!s->easy || !s->rcpt) {
        report_failure(s);
        return;
    }
    CURL *e = s->easy;
    curl_easy_setopt(e, CURLOPT_URL, c->url);
    curl_easy_setopt(e, CURLOPT_MAIL_FROM, s->from);
    curl_easy_setopt(e, CURLOPT_MAIL_RCPT, s->rcpt);
    curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(e, CURLOPT_READFUNCTION, read_cb);
    curl_easy_setopt(e, CURLOPT_READDATA, s);
    curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, (curl_off_t)len);
    curl_easy_setopt(e, CURLOPT_PRIVATE, s);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, s->errbuf);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, (long)CONNECT_TIMEOUT_S);
    curl_easy_setopt(e, CURLOPT_TIMEOUT, (long)SEND_TIMEOUT_S);
    /* smtps:// is TLS from the start; starttls asks for STARTTLS on
     * smtp:// and fails rather than send in the clear. */
    if (c->starttls)
        curl_easy_setopt(e, CURLOPT_USE_SSL, (long)CURLUSESSL_ALL);
    if (c->user)
        curl_easy_setopt(e, CURLOPT_USERNAME, c->user);
    if (c->password)
        curl_easy_setopt(e, CURLOPT_PASSWORD, c->password);
    if (curl_multi_add_handle(c->multi, e) != CURLM_OK) {
        curl_easy_cleanup(e);
        s->easy = NULL;
        report_failure(s);
    }
}

/* ------------------------------------------------------------ composing */

bool
eu_mail_header_ok(const char *s)
{
    return s && !strpbrk(s, "\r\n") && strlen(s) <= 998;
}

/* An address as we accept it in a header: local@domain, no spaces, angle
 * brackets, quotes or separators that would change the header's meaning. */
static bool
address_ok(const char *s)
{
    const char *at = s ? strchr(s, '@') : NULL;
    return at && at != s && at[1] && eu_mail_header_ok(s) && !strpbrk(s, " \t<>\"(),;:\\[]") &&
           strlen(s) <= 254;
}

/* A growing buffer; every append aborts on memory exhaustion as eu_x* do. */
struct buf {
    char *p;
    size_t len, cap;
};

static void
put(struct buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->p = eu_xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void
puts_(struct buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static bool
is_ascii_printable(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
            return false;
    return true;
}

/* s as RFC 2047 encoded words (UTF-8, base64), each at most 75 characters
 * and cut between characters, folded onto continuation lines. */
static void
put_encoded(struct buf *b, const char *s)
{
    size_t n = strlen(s), i = 0;
    bool first = true;
    while (i < n) {
        /* 45 bytes of text make 60 of base64: with "=?UTF-8?B?" and "?="
         * a word stays under 75. */
        size_t take = n - i > 45 ? 45 : n - i;
        while (take < n - i && take > 0 && ((unsigned char)s[i + take] & 0xC0) == 0x80)
            take--;
        char enc[128];
        sodium_bin2base64(enc, sizeof enc, (const unsigned char *)s + i, take,
                          sodium_base64_VARIANT_ORIGINAL);
        if (!first)
            puts_(b, "\r\n ");
        puts_(b, "=?UTF-8?B?");
        puts_(b, enc);
        puts_(b, "?=");
        first = false;
        i += take;
    }
}

/* A phrase (a display name) as a quoted string when ASCII, else encoded. */
static void
put_phrase(struct buf *b, const char *s)
{
    if (!is_ascii_printable(s)) {
        put_encoded(b, s);
        return;
    }
    puts_(b, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            puts_(b, "\\");
        put(b, s, 1);
    }
    puts_(b, "\"");
}

/* text with LF line ends as base64 of its CRLF form, in 76-column lines. */
static void
put_base64_body(struct buf *b, const char *text)
{
    struct buf crlf = {0};
    for (const char *p = text; *p; p++) {
        if (*p == '\n' && (p == text || p[-1] != '\r'))
            puts_(&crlf, "\r");
        put(&crlf, p, 1);
    }
    const unsigned char *src = (const unsigned char *)(crlf.p ? crlf.p : "");
    for (size_t i = 0; i < crlf.len; i += 57) {
        size_t take = crlf.len - i > 57 ? 57 : crlf.len - i;
        char enc[80];
        sodium_bin2base64(enc, sizeof enc, src + i, take, sodium_base64_VARIANT_ORIGINAL);
        puts_(b, enc);
        puts_(b, "\r\n");
    }
    free(crlf.p);
}

char *
eu_mail_compose(const struct eu_mail_msg *m, size_t *len)
{
    if (!address_ok(m->from_addr) || !address_ok(m->to) ||
        (m->reply_to && *m->reply_to && !address_ok(m->reply_to)) ||
        !eu_mail_header_ok(m->subject) || (m->from_name && !eu_mail_header_ok(m->from_name)) ||
        (m->list_unsubscribe &&
         (!eu_mail_header_ok(m->list_unsubscribe) || strpbrk(m->list_unsubscribe, "<> "))) ||
        !eu_mail_header_ok(m->domain))
        return NULL;
    struct buf b = {0};
    char date[64];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S +0000", &tm);
    unsigned char rnd[16];
    randombytes_buf(rnd, sizeof rnd);
    char hex[33], boundary[48];
    sodium_bin2hex(hex, sizeof hex, rnd, sizeof rnd);
    snprintf(boundary, sizeof boundary, "=_eunha_%.24s", hex);

    puts_(&b, "Date: ");
    puts_(&b, date);
    puts_(&b, "\r\nMessage-ID: <");
    puts_(&b, hex);
    puts_(&b, "@");
    puts_(&b, m->domain);
    puts_(&b, ">\r\nFrom: ");
    if (m->from_name && *m->from_name) {
        put_phrase(&b, m->from_name);
        puts_(&b, " ");
    }
    puts_(&b, "<");
    puts_(&b, m->from_addr);
    puts_(&b, ">\r\n");
    if (m->reply_to && *m->reply_to) {
        puts_(&b, "Reply-To: <");
        puts_(&b, m->reply_to);
        puts_(&b, ">\r\n");
    }
    puts_(&b, "To: <");
    puts_(&b, m->to);
    puts_(&b, ">\r\nSubject: ");
    if (is_ascii_printable(m->subject))
        puts_(&b, m->subject);
    else
        put_encoded(&b, m->subject);
    puts_(&b, "\r\n");
    if (m->list_unsubscribe && *m->list_unsubscribe) {
        puts_(&b, "List-Unsubscribe: <");
        puts_(&b, m->list_unsubscribe);
        puts_(&b, ">\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n");
    }
    puts_(&b, "Auto-Submitted: auto-generated\r\nMIME-Version: 1.0\r\n"
              "Content-Type: multipart/alternative; boundary=\"");
    puts_(&b, boundary);
    puts_(&b, "\"\r\n\r\n--");
    puts_(&b, boundary);
    puts_(&b, "\r\nContent-Type: text/plain; charset=utf-8\r\n"
              "Content-Transfer-Encoding: base64\r\n\r\n");
    put_base64_body(&b, m->text ? m->text : "");
    puts_(&b, "--");
    puts_(&b, boundary);
    puts_(&b, "\r\nContent-Type: text/html; charset=utf-8\r\n"
              "Content-Transfer-Encoding: base64\r\n\r\n");
    put_base64_body(&b, m->html ? m->html : "");
    puts_(&b, "--");
    puts_(&b, boundary);
    puts_(&b, "--\r\n");
    *len = b.len;
    return b.p;
}
