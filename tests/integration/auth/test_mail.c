/*
 * E-mail end to end (issue 29): a test SMTP server (smtp_sink.py beside
 * this file, on Debian's python3-aiosmtpd) receives what the server sends
 * through [mail], and the links in each message complete the flow over
 * HTTP: sign-up confirmation (the token refused until then, resending with
 * a new address), password reset (CSRF, single use, every token revoked),
 * e-mail change (confirmation to the new address, notice to the old). Bad,
 * reused and foreign tokens get a clear 4xx and change nothing; a token of
 * one tenant does nothing on the decoy tenant's host, whose users get no
 * mail. With the mail server down a request answers at once and the mail
 * arrives once the server is back.
 */
#include "webform.h"
#include "world.h"

#include <check.h>
#include <dirent.h>
#include <libgen.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define TIMEOUT 240
#define HOST "mail.example"
#define DECOY "decoy-mail.example"
#define TITLE "Mail Tënant"
#define FROM "noreply@mail.test"
#define NEW_PASSWORD "a new password, longer"

static const char *const FORM_CT = "Content-Type: application/x-www-form-urlencoded";

/* ------------------------------------------------------ the SMTP sink */

struct sink {
    int port;
    char dir[256];
    pid_t pid;
};

static int
free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

/* Starts the sink on k->port (picked once) writing to k->dir; it dies with
 * the test process. */
static void
sink_start(struct sink *k)
{
    if (!k->port) {
        k->port = free_port();
        snprintf(k->dir, sizeof k->dir, "/tmp/eunha-mail-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(k->dir));
    }
    char ready[300], script[512], here[512];
    snprintf(ready, sizeof ready, "%s/ready", k->dir);
    unlink(ready);
    snprintf(here, sizeof here, "%s", __FILE__);
    snprintf(script, sizeof script, "%s/smtp_sink.py", dirname(here));
    char port[16];
    snprintf(port, sizeof port, "%d", k->port);
    k->pid = fork();
    ck_assert_int_ge(k->pid, 0);
    if (k->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        execl("/usr/bin/python3", "python3", script, port, k->dir, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 200; i++) {
        if (access(ready, F_OK) == 0)
            return;
        eu_it_sleep_ms(50);
    }
    ck_abort_msg("the SMTP sink did not start (is python3-aiosmtpd installed?)");
}

static void
sink_stop(struct sink *k)
{
    if (k->pid > 0) {
        kill(k->pid, SIGKILL);
        waitpid(k->pid, NULL, 0);
        k->pid = 0;
    }
}

/* Every message received so far, oldest first (a new reference). */
static json_t *
sink_all(const struct sink *k)
{
    json_t *all = json_array();
    struct dirent **names;
    int n = scandir(k->dir, &names, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        size_t len = strlen(name);
        if (len > 5 && strcmp(name + len - 5, ".json") == 0) {
            char path[512];
            snprintf(path, sizeof path, "%s/%s", k->dir, name);
            json_t *m = json_load_file(path, 0, NULL);
            if (m)
                json_array_append_new(all, m);
        }
        free(names[i]);
    }
    free(names);
    return all;
}

/* The message's single recipient. */
static const char *
rcpt(json_t *m)
{
    return json_string_value(json_array_get(json_object_get(m, "rcpt_tos"), 0));
}

/* The newest message to `to` whose subject holds subj, waiting up to ms;
 * asserts one comes. A new reference. */
static json_t *
mail_wait(const struct sink *k, const char *to, const char *subj, long ms)
{
    long long until = eu_it_now_ms() + ms;
    for (;;) {
        json_t *all = sink_all(k), *found = NULL;
        for (size_t i = json_array_size(all); i-- > 0 && !found;) {
            json_t *m = json_array_get(all, i);
            const char *s = json_string_value(json_object_get(m, "subject"));
            if (rcpt(m) && strcmp(rcpt(m), to) == 0 && s && strstr(s, subj))
                found = json_incref(m);
        }
        json_decref(all);
        if (found)
            return found;
        ck_assert_msg(eu_it_now_ms() < until, "no mail to %s about \"%s\" in %ld ms", to, subj, ms);
        eu_it_sleep_ms(100);
    }
}

static size_t
mails_to(const struct sink *k, const char *to)
{
    json_t *all = sink_all(k);
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(all); i++)
        if (rcpt(json_array_get(all, i)) && strcmp(rcpt(json_array_get(all, i)), to) == 0)
            n++;
    json_decref(all);
    return n;
}

/* No message went to an address on domain. */
static void
expect_no_mail_on(const struct sink *k, const char *domain)
{
    json_t *all = sink_all(k);
    for (size_t i = 0; i < json_array_size(all); i++) {
        const char *to = rcpt(json_array_get(all, i));
        const char *at = to ? strchr(to, '@') : NULL;
        ck_assert_msg(!at || strcmp(at + 1, domain) != 0, "mail went to %s", to);
    }
    json_decref(all);
}

/* The value of param in the link of the message's text part (caller
 * frees), after checking the HTML part links to the same URL. */
static char *
link_param(json_t *m, const char *path, const char *param)
{
    const char *text = json_string_value(json_object_get(m, "text"));
    const char *html = json_string_value(json_object_get(m, "html"));
    char want[256];
    snprintf(want, sizeof want, "http://%s%s?%s=", HOST, path, param);
    const char *p = text ? strstr(text, want) : NULL;
    ck_assert_msg(p != NULL, "no %s link in %s", want, text);
    p += strlen(want);
    char *tok = strndup(p, strcspn(p, " \r\n"));
    ck_assert_int_ge(strlen(tok), 40);
    char full[512];
    snprintf(full, sizeof full, "%s%s", want, tok);
    ck_assert_msg(html && strstr(html, full), "the HTML part lacks %s: %s", full, html);
    return tok;
}

/* ------------------------------------------------------ the world */

static char toml[512];

static void
start(struct world *w, struct sink *k, bool with_sink)
{
    k->port = 0;
    k->pid = 0;
    if (with_sink) {
        sink_start(k);
    } else {
        k->port = free_port();
        snprintf(k->dir, sizeof k->dir, "/tmp/eunha-mail-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(k->dir));
    }
    snprintf(toml, sizeof toml,
             "[mail]\nsmtp_url = \"smtp://127.0.0.1:%d\"\nfrom = \"" FROM "\"\n"
             "[workers]\njob_backoff_base_seconds = 1\njob_backoff_max_seconds = 2\n"
             "[limits]\nregistrations_per_30min = 0\n",
             k->port);
    static struct eu_it_world_opts o;
    o = (struct eu_it_world_opts){
        .host = HOST,
        .decoy = DECOY,
        .extra_toml = toml,
        .users = {{"alice"},
                  {"bob"},
                  {"olga", NULL, NULL, "read write follow admin:read admin:write"},
                  {"dora", DECOY}},
    };
    eu_it_world_start(w, &o);
    /* The tenant's name and contact address go into From and Reply-To. */
    eu_it_tenant_patch(w->s, HOST, "{\"title\":\"" TITLE "\"}");
    free(eu_it_world_sql(w,
                         "INSERT INTO settings (tenant_id, key, value) VALUES (%s, 'instance',"
                         " '{\"contact_email\":\"admin@" HOST "\"}')"
                         " ON CONFLICT (tenant_id, key) DO UPDATE SET value = excluded.value",
                         w->tid));
}

static void
finish(struct world *w, struct sink *k)
{
    expect_no_mail_on(k, DECOY);
    sink_stop(k);
    eu_it_world_stop(w);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", k->dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* A client_credentials token of a new app on host (caller frees). */
static char *
app_token(struct world *w, const char *host, char **app_id)
{
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, host, "POST", NULL,
                "{\"client_name\":\"Mailer\",\"redirect_uris\":\"app://cb\","
                "\"scopes\":\"read write follow\"}",
                "/api/v1/apps");
    EU_IT_EXPECT_STATUS(&r, 200);
    if (app_id)
        *app_id = strdup(eu_it_json_str(&r, "id"));
    char body[512];
    snprintf(body, sizeof body,
             "{\"grant_type\":\"client_credentials\",\"client_id\":\"%s\",\"client_secret\":"
             "\"%s\",\"scope\":\"write:accounts\"}",
             eu_it_json_str(&r, "client_id"), eu_it_json_str(&r, "client_secret"));
    eu_it_callf(w->s, &r, host, "POST", NULL, body, "/oauth/token");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *tok = strdup(eu_it_json_str(&r, "access_token"));
    eu_it_resp_free(&r);
    return tok;
}

/* Signs user up on host with app token tok; returns the user's token. */
static char *
signup(struct world *w, const char *host, const char *tok, const char *user, const char *email)
{
    struct eu_it_resp r = {0};
    char body[512];
    snprintf(body, sizeof body,
             "{\"username\":\"%s\",\"email\":\"%s\",\"password\":\"hunter2hunter2\","
             "\"agreement\":true,\"locale\":\"en\"}",
             user, email);
    long long t0 = eu_it_now_ms();
    eu_it_callf(w->s, &r, host, "POST", tok, body, "/api/v1/accounts");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(eu_it_now_ms() - t0 < 5000, "sign-up took %lld ms", eu_it_now_ms() - t0);
    char *t = strdup(eu_it_json_str(&r, "access_token"));
    eu_it_resp_free(&r);
    return t;
}

static void
expect_page(const struct eu_it_resp *r, long status, const char *text)
{
    EU_IT_EXPECT_STATUS(r, status);
    ck_assert_msg(r->body && strstr(r->body, text), "no \"%s\" in %.800s", text, r->body);
}

static long
confirmed(struct world *w, const char *username)
{
    return eu_it_world_sql_long(w,
                                "SELECT count(*) FROM users u JOIN accounts a ON a.tenant_id ="
                                " u.tenant_id AND a.id = u.account_id WHERE u.tenant_id = %s"
                                " AND a.username = '%s' AND u.confirmed_at IS NOT NULL",
                                w->tid, username);
}

/* ------------------------------------------------------ sign-up */

START_TEST(test_signup_confirmation)
{
    struct world w;
    struct sink k;
    start(&w, &k, true);
    struct eu_it_resp r = {0};
    char *app_id = NULL;
    char *app = app_token(&w, HOST, &app_id);
    char *carl = signup(&w, HOST, app, "carl", "carl@inbox.example");

    /* Unconfirmed: the token is refused as Mastodon refuses it. */
    eu_it_callf(w.s, &r, HOST, "GET", carl, NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_ERROR(&r, 403);
    EU_IT_EXPECT_JSTR(&r, "error", "Your login is missing a confirmed e-mail address");
    eu_it_callf(w.s, &r, HOST, "GET", carl, NULL, "/api/v1/timelines/home");
    EU_IT_EXPECT_ERROR(&r, 403);
    /* Public lookups do not care. */
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/api/v1/accounts/lookup?acct=carl");
    EU_IT_EXPECT_STATUS(&r, 200);

    /* The mail: headers as RFC 5322 wants them, in the tenant's name. */
    json_t *m = mail_wait(&k, "carl@inbox.example", "Confirmation instructions", 20000);
    ck_assert_str_eq(json_string_value(json_object_get(m, "mail_from")), FROM);
    const char *from = json_string_value(json_object_get(m, "from"));
    ck_assert_msg(strstr(from, TITLE) && strstr(from, "<" FROM ">"), "From: %s", from);
    json_t *h = json_object_get(m, "headers");
    ck_assert_str_eq(json_string_value(json_object_get(h, "reply-to")), "<admin@" HOST ">");
    ck_assert_ptr_nonnull(json_object_get(h, "date"));
    const char *msgid = json_string_value(json_object_get(h, "message-id"));
    ck_assert_msg(msgid && strstr(msgid, "@" HOST ">"), "Message-ID: %s", msgid);
    /* The subject holds the title's non-ASCII letter: encoded, and decoded
     * back whole. */
    const char *subj_raw = json_string_value(json_object_get(h, "subject"));
    ck_assert_msg(strncmp(subj_raw, "=?UTF-8?B?", 10) == 0, "Subject: %s", subj_raw);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(m, "subject")), TITLE));
    ck_assert_msg(
        strstr(json_string_value(json_object_get(h, "content-type")), "multipart/alternative"),
        "%s", json_string_value(json_object_get(h, "content-type")));
    ck_assert(json_is_true(json_object_get(m, "crlf")));
    char *token = link_param(m, "/auth/confirmation", "confirmation_token");
    json_decref(m);

    /* Wrong tokens change nothing: a made-up one, and the real one on the
     * decoy tenant's host. */
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL,
                "/auth/confirmation?confirmation_token=notatokenatallnotatokenatall");
    expect_page(&r, 404, "invalid or has expired");
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/auth/confirmation");
    EU_IT_EXPECT_STATUS(&r, 400);
    eu_it_callf(w.s, &r, DECOY, "GET", NULL, NULL, "/auth/confirmation?confirmation_token=%s",
                token);
    expect_page(&r, 404, "invalid or has expired");
    ck_assert_int_eq(confirmed(&w, "carl"), 0);

    /* The link confirms, once. */
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/auth/confirmation?confirmation_token=%s",
                token);
    expect_page(&r, 200, "successfully confirmed");
    ck_assert_int_eq(confirmed(&w, "carl"), 1);
    eu_it_callf(w.s, &r, HOST, "GET", carl, NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/auth/confirmation?confirmation_token=%s",
                token);
    EU_IT_EXPECT_STATUS(&r, 404);
    /* Nothing left to resend once confirmed. */
    eu_it_callf(w.s, &r, HOST, "POST", carl, "{}", "/api/v1/emails/confirmations");
    EU_IT_EXPECT_ERROR(&r, 403);
    EU_IT_EXPECT_JSTR(&r, "error",
                      "This method is only available while the e-mail is awaiting confirmation");

    /* Resending, with a new address: the old link dies, the new one
     * confirms the new address. Only the app the user signed up with may. */
    char *cleo = signup(&w, HOST, app, "cleo", "cleo@typo.example");
    json_decref(mail_wait(&k, "cleo@typo.example", "Confirmation instructions", 20000));
    char *other = app_token(&w, HOST, NULL);
    char *cleo_other = NULL;
    {
        /* A token of cleo's from another app: the seeded way. */
        char *t = eu_it_world_sql(&w,
                                  "SELECT u.id FROM users u JOIN accounts a ON a.tenant_id ="
                                  " u.tenant_id AND a.id = u.account_id WHERE u.tenant_id = %s"
                                  " AND a.username = 'cleo'",
                                  w.tid);
        free(t);
        cleo_other = eu_it_token_in(w.db, w.tid, "cleo", "read write");
    }
    eu_it_callf(w.s, &r, HOST, "POST", cleo_other, "{}", "/api/v1/emails/confirmations");
    EU_IT_EXPECT_ERROR(&r, 403);
    EU_IT_EXPECT_JSTR(&r, "error",
                      "This method is only available to the application the user originally "
                      "signed-up with");
    eu_it_callf(w.s, &r, HOST, "POST", cleo, "{\"email\":\"bad\\r\\nBcc: x@y.example\"}",
                "/api/v1/emails/confirmations");
    EU_IT_EXPECT_ERROR(&r, 422);
    eu_it_callf(w.s, &r, HOST, "POST", cleo, "{\"email\":\"alice@" HOST "\"}",
                "/api/v1/emails/confirmations");
    EU_IT_EXPECT_ERROR(&r, 422);
    EU_IT_EXPECT_JSTR(&r, "error", "Validation failed: Email has already been taken");
    eu_it_callf(w.s, &r, HOST, "POST", cleo, "{\"email\":\"cleo@right.example\"}",
                "/api/v1/emails/confirmations");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_eq(r.body, "{}");
    m = mail_wait(&k, "cleo@right.example", "Confirmation instructions", 20000);
    char *token2 = link_param(m, "/auth/confirmation", "confirmation_token");
    json_decref(m);
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/auth/confirmation?confirmation_token=%s",
                token2);
    expect_page(&r, 200, "successfully confirmed");
    char *email = eu_it_world_sql(&w,
                                  "SELECT u.email FROM users u JOIN accounts a ON a.tenant_id ="
                                  " u.tenant_id AND a.id = u.account_id WHERE u.tenant_id = %s"
                                  " AND a.username = 'cleo'",
                                  w.tid);
    ck_assert_str_eq(email, "cleo@right.example");
    free(email);

    /* Mastodon 4.4's min_age: a date of birth is asked and checked. */
    eu_it_admin(w.s, "PATCH", "/admin/v1/tenants/" HOST "/instance", "{\"min_age\":16}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/api/v2/instance");
    EU_IT_EXPECT_JINT(&r, "registrations.min_age", 16);
    const char *young[][2] = {{"", "ERR_BLANK"},
                              {",\"date_of_birth\":\"2099-01-01\"", "ERR_BELOW_LIMIT"},
                              {",\"date_of_birth\":\"not a date\"", "ERR_BELOW_LIMIT"}};
    for (size_t i = 0; i < 3; i++) {
        char body[512];
        snprintf(body, sizeof body,
                 "{\"username\":\"kid\",\"email\":\"kid@inbox.example\",\"password\":"
                 "\"hunter2hunter2\",\"agreement\":true%s}",
                 young[i][0]);
        eu_it_callf(w.s, &r, HOST, "POST", app, body, "/api/v1/accounts");
        EU_IT_EXPECT_ERROR(&r, 422);
        EU_IT_EXPECT_JSTR(&r, "details.date_of_birth.0.error", young[i][1]);
    }
    eu_it_callf(w.s, &r, HOST, "POST", app,
                "{\"username\":\"adult\",\"email\":\"adult@inbox.example\",\"password\":"
                "\"hunter2hunter2\",\"agreement\":true,\"date_of_birth\":\"1990-05-05\"}",
                "/api/v1/accounts");
    EU_IT_EXPECT_STATUS(&r, 200);

    /* The decoy's own sign-up mails its own user, not ours. */
    char *dapp = app_token(&w, DECOY, NULL);
    eu_it_callf(w.s, &r, DECOY, "GET", eu_it_tok(&w, "dora"), NULL,
                "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);

    free(dapp);
    free(token);
    free(token2);
    free(carl);
    free(cleo);
    free(cleo_other);
    free(other);
    free(app);
    free(app_id);
    eu_it_resp_free(&r);
    finish(&w, &k);
}
END_TEST

/* ------------------------------------------------------ password reset */

/* The cookie "name=value" set by r (caller frees). */
static char *
form_cookie(const struct eu_it_resp *r)
{
    const char *v = eu_it_resp_header(r, "Set-Cookie");
    ck_assert_msg(v && strncmp(v, "_eunha_form=", 12) == 0, "cookie: %s", v);
    ck_assert_msg(strstr(v, "HttpOnly") && strstr(v, "SameSite=Strict"), "cookie: %s", v);
    return strndup(v, strcspn(v, ";"));
}

/* The authenticity_token of the page's form (caller frees). */
static char *
form_csrf(const struct eu_it_resp *r)
{
    const char *key = "name=\"authenticity_token\" value=\"";
    const char *p = strstr(r->body, key);
    ck_assert_msg(p != NULL, "no CSRF token in %.800s", r->body);
    p += strlen(key);
    return strndup(p, strcspn(p, "\""));
}

static void
post_form(struct world *w, struct eu_it_resp *r, const char *host, const char *path,
          const char *cookie, const char *body)
{
    char line[512];
    const char *headers[4] = {FORM_CT, "Accept: text/html", NULL, NULL};
    if (cookie) {
        snprintf(line, sizeof line, "Cookie: %s", cookie);
        headers[2] = line;
    }
    int rc = eu_it_http_raw(r, "POST", w->s->public_port, host, path, headers, body);
    ck_assert_msg(rc == 0, "POST %s: %s", path, r->error);
}

static char *
tenant_app(struct world *w, const char *host, char **secret)
{
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, host, "POST", NULL,
                "{\"client_name\":\"Pw\",\"redirect_uris\":\"urn:ietf:wg:oauth:2.0:oob\","
                "\"scopes\":\"read write\"}",
                "/api/v1/apps");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(eu_it_json_str(&r, "client_id"));
    *secret = strdup(eu_it_json_str(&r, "client_secret"));
    eu_it_resp_free(&r);
    return id;
}

/* The password grant's status for alice with password. */
static long
password_grant(struct world *w, const char *password)
{
    char *secret;
    char *id = tenant_app(w, HOST, &secret);
    struct eu_it_resp r = {0};
    json_t *b = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "grant_type", "password", "client_id",
                          id, "client_secret", secret, "username", "alice@" HOST, "password",
                          password, "scope", "read");
    char *body = json_dumps(b, 0);
    eu_it_callf(w->s, &r, HOST, "POST", NULL, body, "/oauth/token");
    long st = r.status;
    free(body);
    json_decref(b);
    free(id);
    free(secret);
    eu_it_resp_free(&r);
    return st;
}

START_TEST(test_password_reset)
{
    struct world w;
    struct sink k;
    start(&w, &k, true);
    struct eu_it_resp r = {0};

    /* The sign-in page links to the reset page. */
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/auth/password/new");
    expect_page(&r, 200, "Forgot your password?");
    char *cookie = form_cookie(&r);
    char *csrf = form_csrf(&r);

    /* Without the CSRF pair: refused, nothing sent. */
    post_form(&w, &r, HOST, "/auth/password", NULL, "email=alice%40" HOST);
    EU_IT_EXPECT_STATUS(&r, 422);
    char body[512];
    snprintf(body, sizeof body, "authenticity_token=%s&email=alice%%40" HOST, csrf);
    post_form(&w, &r, HOST, "/auth/password", "_eunha_form=forged", body);
    EU_IT_EXPECT_STATUS(&r, 422);

    /* The same answer for an address with an account and one without. */
    snprintf(body, sizeof body, "authenticity_token=%s&email=nobody%%40nowhere.example", csrf);
    post_form(&w, &r, HOST, "/auth/password", cookie, body);
    expect_page(&r, 200, "If your email address exists");
    char *nobody_body = strdup(r.body);
    snprintf(body, sizeof body, "authenticity_token=%s&email=ALICE%%40" HOST, csrf);
    post_form(&w, &r, HOST, "/auth/password", cookie, body);
    expect_page(&r, 200, "If your email address exists");
    ck_assert_str_eq(r.body, nobody_body);
    /* dora's address asked on our host: she is not our user; no mail. */
    snprintf(body, sizeof body, "authenticity_token=%s&email=dora%%40" DECOY, csrf);
    post_form(&w, &r, HOST, "/auth/password", cookie, body);
    ck_assert_str_eq(r.body, nobody_body);

    json_t *m = mail_wait(&k, "alice@" HOST, "Reset password instructions", 20000);
    char *token = link_param(m, "/auth/password/edit", "reset_password_token");
    json_decref(m);

    /* The link on the decoy's host, and a made-up one: invalid. */
    eu_it_callf(w.s, &r, DECOY, "GET", NULL, NULL, "/auth/password/edit?reset_password_token=%s",
                token);
    expect_page(&r, 404, "invalid, already used or has expired");
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL,
                "/auth/password/edit?reset_password_token=madeupmadeupmadeupmadeup");
    EU_IT_EXPECT_STATUS(&r, 404);

    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/auth/password/edit?reset_password_token=%s",
                token);
    expect_page(&r, 200, "Set a new password");
    free(cookie);
    free(csrf);
    cookie = form_cookie(&r);
    csrf = form_csrf(&r);

    /* Mismatched confirmation, short password, missing CSRF: the password
     * stays. */
    snprintf(body, sizeof body,
             "authenticity_token=%s&reset_password_token=%s&password=longenough1"
             "&password_confirmation=different1",
             csrf, token);
    post_form(&w, &r, HOST, "/auth/password/edit", cookie, body);
    expect_page(&r, 422, "doesn&#39;t match");
    snprintf(body, sizeof body,
             "authenticity_token=%s&reset_password_token=%s&password=short"
             "&password_confirmation=short",
             csrf, token);
    post_form(&w, &r, HOST, "/auth/password/edit", cookie, body);
    expect_page(&r, 422, "too short");
    snprintf(body, sizeof body,
             "reset_password_token=%s&password=longenough1&password_confirmation=longenough1",
             token);
    post_form(&w, &r, HOST, "/auth/password/edit", cookie, body);
    EU_IT_EXPECT_STATUS(&r, 422);
    /* On the decoy's host with a valid form pair: the token is not its. */
    snprintf(body, sizeof body,
             "authenticity_token=%s&reset_password_token=%s&password=longenough1"
             "&password_confirmation=longenough1",
             csrf, token);
    post_form(&w, &r, DECOY, "/auth/password/edit", cookie, body);
    EU_IT_EXPECT_STATUS(&r, 404);
    ck_assert_int_eq(password_grant(&w, EU_IT_PASSWORD), 200);

    /* alice's tokens work until the reset. */
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *enc = eu_it_urlencode(NEW_PASSWORD);
    snprintf(body, sizeof body,
             "authenticity_token=%s&reset_password_token=%s&password=%s"
             "&password_confirmation=%s",
             csrf, token, enc, enc);
    post_form(&w, &r, HOST, "/auth/password/edit", cookie, body);
    expect_page(&r, 200, "changed successfully");
    /* Every token revoked; the old password refused, the new one works. */
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 401);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "bob"), NULL,
                "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(password_grant(&w, EU_IT_PASSWORD), 400);
    ck_assert_int_eq(password_grant(&w, NEW_PASSWORD), 200);
    json_decref(mail_wait(&k, "alice@" HOST, "Password changed", 20000));
    /* Single use. */
    post_form(&w, &r, HOST, "/auth/password/edit", cookie, body);
    EU_IT_EXPECT_STATUS(&r, 404);
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/auth/password/edit?reset_password_token=%s",
                token);
    EU_IT_EXPECT_STATUS(&r, 404);
    ck_assert_int_eq(mails_to(&k, "nobody@nowhere.example"), 0);
    ck_assert_int_eq(mails_to(&k, "dora@" DECOY), 0);

    /* ------------------------------------------------ e-mail change */
    const char *bob = eu_it_tok(&w, "bob");
    eu_it_callf(w.s, &r, HOST, "POST", bob,
                "{\"password\":\"wrong password\",\"new_email\":\"bob@new.example\"}",
                "/api/v1/user/email_change");
    EU_IT_EXPECT_ERROR(&r, 422);
    eu_it_callf(w.s, &r, HOST, "POST", bob, "{\"password\":\"" EU_IT_PASSWORD "\"}",
                "/api/v1/user/email_change");
    EU_IT_EXPECT_ERROR(&r, 400);
    eu_it_callf(w.s, &r, HOST, "POST", bob,
                "{\"password\":\"" EU_IT_PASSWORD "\",\"new_email\":\"alice@" HOST "\"}",
                "/api/v1/user/email_change");
    EU_IT_EXPECT_ERROR(&r, 422);
    eu_it_callf(w.s, &r, HOST, "POST", bob,
                "{\"password\":\"" EU_IT_PASSWORD "\",\"new_email\":\"bob@new.example\"}",
                "/api/v1/user/email_change");
    EU_IT_EXPECT_STATUS(&r, 202);
    EU_IT_EXPECT_JSTR(&r, "email", "bob@" HOST);
    EU_IT_EXPECT_JSTR(&r, "unconfirmed_email", "bob@new.example");
    json_decref(mail_wait(&k, "bob@" HOST, "Email changing", 20000));
    m = mail_wait(&k, "bob@new.example", "Confirm email", 20000);
    char *ctoken = link_param(m, "/auth/confirmation", "confirmation_token");
    json_decref(m);
    /* Not changed until confirmed; still signed in meanwhile. */
    char *email = eu_it_world_sql(&w,
                                  "SELECT email FROM users WHERE tenant_id = %s AND"
                                  " account_id = %s",
                                  w.tid, eu_it_id(&w, "bob"));
    ck_assert_str_eq(email, "bob@" HOST);
    free(email);
    eu_it_callf(w.s, &r, HOST, "GET", bob, NULL, "/api/v1/accounts/verify_credentials");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, DECOY, "GET", NULL, NULL, "/auth/confirmation?confirmation_token=%s",
                ctoken);
    EU_IT_EXPECT_STATUS(&r, 404);
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "/auth/confirmation?confirmation_token=%s",
                ctoken);
    expect_page(&r, 200, "successfully confirmed");
    email = eu_it_world_sql(&w,
                            "SELECT email FROM users WHERE tenant_id = %s AND"
                            " account_id = %s",
                            w.tid, eu_it_id(&w, "bob"));
    ck_assert_str_eq(email, "bob@new.example");
    free(email);

    /* The same change from the settings page of a signed-in browser. */
    struct eu_it_webform b = {.s = w.s, .host = HOST};
    eu_it_webform_send(&b, &r, "GET", "/auth/sign_in?return_to=%2Fsettings%2Femail", NULL);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_webform_post(&b, &r, "/auth/sign_in",
                       "email=olga&password=" EU_IT_PASSWORD "&return_to=%2Fsettings%2Femail");
    EU_IT_EXPECT_STATUS(&r, 302);
    eu_it_webform_send(&b, &r, "GET", "/settings/email", NULL);
    expect_page(&r, 200, "olga@" HOST);
    eu_it_webform_post(&b, &r, "/settings/email", "new_email=olga%40new.example&password=wrong");
    expect_page(&r, 422, "Invalid password");
    eu_it_webform_post(&b, &r, "/settings/email",
                       "new_email=bob%40new.example&password=" EU_IT_PASSWORD);
    expect_page(&r, 422, "Email has already been taken");
    /* A post without the form's token changes nothing. */
    eu_it_webform_send(&b, &r, "POST", "/settings/email",
                       "new_email=olga%40evil.example&password=" EU_IT_PASSWORD);
    expect_page(&r, 422, "authenticity token");
    eu_it_webform_send(&b, &r, "GET", "/settings/email", NULL);
    eu_it_webform_post(&b, &r, "/settings/email",
                       "new_email=olga%40new.example&password=" EU_IT_PASSWORD);
    expect_page(&r, 200, "olga@new.example");
    json_decref(mail_wait(&k, "olga@" HOST, "Email changing", 20000));
    json_decref(mail_wait(&k, "olga@new.example", "Confirm email", 20000));
    eu_it_webform_send(&b, &r, "GET", "/settings/email", NULL);
    expect_page(&r, 200, "Waiting for confirmation");
    ck_assert_ptr_null(strstr(r.body, "olga@evil.example"));
    /* The session is the tenant's: the decoy's host does not know it. */
    b.host = DECOY;
    eu_it_webform_send(&b, &r, "GET", "/settings/email", NULL);
    EU_IT_EXPECT_STATUS(&r, 302);
    ck_assert_int_eq(mails_to(&k, "olga@evil.example"), 0);
    b.host = HOST;
    eu_it_webform_free(&b);

    free(ctoken);
    free(enc);
    free(nobody_body);
    free(token);
    free(cookie);
    free(csrf);
    eu_it_resp_free(&r);
    finish(&w, &k);
}
END_TEST

/* ------------------------------------------------ the staff's mails */

static char *
account_id(struct world *w, const char *username)
{
    return eu_it_world_sql(w, "SELECT id FROM accounts WHERE tenant_id = %s AND username = '%s'",
                           w->tid, username);
}

START_TEST(test_staff_mails)
{
    struct world w;
    struct sink k;
    start(&w, &k, true);
    struct eu_it_resp r = {0};
    char path[256];
    snprintf(path, sizeof path, "/admin/v1/tenants/%s/accounts/%s/role", HOST,
             eu_it_id(&w, "olga"));
    eu_it_admin(w.s, "PUT", path, "{\"role\":\"owner\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    const char *olga = eu_it_tok(&w, "olga");

    /* Sign-ups awaiting approval: one approved, one rejected, each told. */
    eu_it_tenant_patch(w.s, HOST, "{\"registrations\":\"approval\"}");
    char *app = app_token(&w, HOST, NULL);
    char *pam = signup(&w, HOST, app, "pam", "pam@inbox.example");
    char *rex = signup(&w, HOST, app, "rex", "rex@inbox.example");
    char *pam_id = account_id(&w, "pam"), *rex_id = account_id(&w, "rex");
    eu_it_callf(w.s, &r, HOST, "POST", olga, NULL, "/api/v1/admin/accounts/%s/approve", pam_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    json_t *m = mail_wait(&k, "pam@inbox.example", "Welcome to " TITLE, 20000);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(m, "text")), "approved"));
    json_decref(m);
    eu_it_callf(w.s, &r, HOST, "POST", olga, NULL, "/api/v1/admin/accounts/%s/reject", rex_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    json_decref(mail_wait(&k, "rex@inbox.example", "not approved", 20000));

    /* A strike the moderator keeps quiet sends nothing; a told one mails
     * Mastodon's subject with the moderator's text. */
    eu_it_callf(w.s, &r, HOST, "POST", olga,
                "{\"type\":\"none\",\"text\":\"quiet\",\"send_email_notification\":false}",
                "/api/v1/admin/accounts/%s/action", eu_it_id(&w, "alice"));
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, HOST, "POST", olga,
                "{\"type\":\"silence\",\"text\":\"Please stop spamming.\"}",
                "/api/v1/admin/accounts/%s/action", eu_it_id(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    m = mail_wait(&k, "bob@" HOST, "Your account @bob@" HOST " has been limited", 20000);
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(m, "text")), "Please stop spamming."));
    json_decref(m);
    eu_it_callf(w.s, &r, HOST, "POST", olga, "{\"type\":\"suspend\"}",
                "/api/v1/admin/accounts/%s/action", eu_it_id(&w, "bob"));
    EU_IT_EXPECT_STATUS(&r, 200);
    json_decref(mail_wait(&k, "bob@" HOST, "has been suspended", 20000));
    ck_assert_int_eq(mails_to(&k, "alice@" HOST), 0);
    /* The decoy's owner acting on its own user mails nobody of ours, and
     * our moderator cannot reach the decoy's user at all. */
    eu_it_callf(w.s, &r, HOST, "POST", olga, "{\"type\":\"none\"}",
                "/api/v1/admin/accounts/%s/action", eu_it_id(&w, "dora"));
    ck_assert_int_ge(r.status, 400);

    free(pam);
    free(rex);
    free(pam_id);
    free(rex_id);
    free(app);
    eu_it_resp_free(&r);
    finish(&w, &k);
}
END_TEST

/* ------------------------------------------- notifications by mail */

/* POST form body to path on host with headers (a cookie, or none). */
static void
post_raw(struct world *w, struct eu_it_resp *r, const char *host, const char *path,
         const char *cookie, const char *body)
{
    char c[256];
    snprintf(c, sizeof c, "Cookie: _eunha_session=%s", cookie ? cookie : "");
    const char *headers[] = {FORM_CT, c, NULL};
    eu_it_resp_free(r);
    ck_assert_int_eq(eu_it_http_raw(r, "POST", w->s->public_port, host, path, headers, body), 0);
}

/* The unsubscribe link's path and query ("/unsubscribe?token=...") from
 * the List-Unsubscribe header of m (caller frees). */
static char *
unsubscribe_path(json_t *m)
{
    const char *h =
        json_string_value(json_object_get(json_object_get(m, "headers"), "list-unsubscribe"));
    ck_assert_msg(h != NULL, "no List-Unsubscribe");
    const char *p = strstr(h, "http://" HOST "/unsubscribe?token=");
    ck_assert_msg(p != NULL, "List-Unsubscribe: %s", h);
    p += strlen("http://" HOST);
    return strndup(p, strcspn(p, ">"));
}

START_TEST(test_notification_mails)
{
    struct world w;
    struct sink k;
    start(&w, &k, true);
    struct eu_it_resp r = {0};
    const char *alice = "alice@" HOST;

    /* Mastodon's defaults: follows and mentions by mail, favourites not. */
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "bob"), NULL, "/api/v1/accounts/%s/follow",
                eu_it_id(&w, "alice"));
    EU_IT_EXPECT_STATUS(&r, 200);
    json_decref(mail_wait(&k, alice, "bob is now following you", 20000));
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "bob"), "{\"status\":\"lunch, @alice?\"}",
                "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    json_t *m = mail_wait(&k, alice, "You were mentioned by bob", 20000);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(m, "text")), "lunch, @alice?"));
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(m, "html")), "View the post"));
    char *unsub = unsubscribe_path(m);
    ck_assert_ptr_nonnull(strstr(unsub, "&type=mention"));
    json_decref(m);
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "alice"), "{\"status\":\"mine\"}",
                "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *mine = strdup(eu_it_json_str(&r, "id"));
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s/favourite",
                mine);
    EU_IT_EXPECT_STATUS(&r, 200);

    /* The link does nothing on the decoy's host, or with a kind that does
     * not exist; one click on ours ends mention mails. */
    post_raw(&w, &r, DECOY, unsub, NULL, "List-Unsubscribe=One-Click");
    EU_IT_EXPECT_STATUS(&r, 404);
    post_raw(&w, &r, HOST, "/unsubscribe?token=x&type=everything", NULL, "");
    EU_IT_EXPECT_STATUS(&r, 422);
    eu_it_callf(w.s, &r, HOST, "GET", NULL, NULL, "%s", unsub);
    expect_page(&r, 200, "Unsubscribe");
    post_raw(&w, &r, HOST, unsub, NULL, "List-Unsubscribe=One-Click");
    expect_page(&r, 200, "You will no longer get e-mails");
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM users WHERE tenant_id = %s AND"
                                          " account_id = %s AND NOT (notification_emails ->>"
                                          " 'mention')::boolean",
                                          w.tid, eu_it_id(&w, "alice")),
                     1);
    size_t before = mails_to(&k, alice);
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "bob"), "{\"status\":\"again @alice\"}",
                "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);

    /* The preferences page: favourites on, through the signed-in session. */
    free(eu_it_world_sql(&w,
                         "INSERT INTO web_sessions (tenant_id, user_id, session_hash, csrf_token,"
                         " expires_at) SELECT %s, u.id, encode(sha256('alice-cookie'::bytea),"
                         " 'hex'), 'alice-csrf', now() + interval '1 day' FROM users u"
                         " WHERE u.tenant_id = %s AND u.account_id = %s",
                         w.tid, w.tid, eu_it_id(&w, "alice")));
    post_raw(&w, &r, HOST, "/settings/preferences/notifications", "alice-cookie",
             "authenticity_token=wrong&favourite=1");
    EU_IT_EXPECT_STATUS(&r, 422);
    post_raw(&w, &r, HOST, "/settings/preferences/notifications", NULL, "favourite=1");
    EU_IT_EXPECT_STATUS(&r, 302);
    post_raw(&w, &r, HOST, "/settings/preferences/notifications", "alice-cookie",
             "authenticity_token=alice-csrf&favourite=1&follow=1");
    expect_page(&r, 200, "Your preferences were saved");
    ck_assert_ptr_nonnull(strstr(r.body, "name=\"favourite\" value=\"1\" checked"));
    ck_assert_ptr_null(strstr(r.body, "name=\"mention\" value=\"1\" checked"));
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "bob"), NULL,
                "/api/v1/statuses/%s/unfavourite", mine);
    eu_it_callf(w.s, &r, HOST, "POST", eu_it_tok(&w, "bob"), NULL, "/api/v1/statuses/%s/favourite",
                mine);
    EU_IT_EXPECT_STATUS(&r, 200);
    json_decref(mail_wait(&k, alice, "bob favorited your post", 20000));
    /* Neither the second mention nor the first favourite was mailed. */
    ck_assert_int_eq(mails_to(&k, alice), before + 1);

    free(unsub);
    free(mine);
    eu_it_resp_free(&r);
    finish(&w, &k);
}
END_TEST

/* ------------------------------------------------ the server down */

START_TEST(test_mail_server_down)
{
    struct world w;
    struct sink k;
    start(&w, &k, false); /* nothing listens on the mail port yet */
    struct eu_it_resp r = {0};
    char *app = app_token(&w, HOST, NULL);
    /* The request answers at once (signup() asserts under 5 s). */
    char *dan = signup(&w, HOST, app, "dan", "dan@inbox.example");
    eu_it_sleep_ms(1500);
    /* The job failed and waits for its retry, with the reason kept. */
    ck_assert_int_ge(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM jobs WHERE tenant_id = %s"
                                          " AND kind = 'mail' AND attempts >= 1",
                                          w.tid),
                     1);
    sink_start(&k);
    json_t *m = mail_wait(&k, "dan@inbox.example", "Confirmation instructions", 30000);
    json_decref(m);
    ck_assert_int_eq(mails_to(&k, "dan@inbox.example"), 1);
    free(dan);
    free(app);
    eu_it_resp_free(&r);
    finish(&w, &k);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("mail");
    EU_IT_ADD_TCASE(s, test_signup_confirmation, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_password_reset, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_staff_mails, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_notification_mails, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_mail_server_down, TIMEOUT);
    return eu_it_run_suite(s);
}
