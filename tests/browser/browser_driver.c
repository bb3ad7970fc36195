/*
 * Runs tests/browser/pages.mjs, Debian's Chromium driven by puppeteer-core
 * with axe-core, against a real server: starts `eunha serve` through the
 * integration harness with [mail] pointed at a test SMTP server
 * (tests/integration/auth/smtp_sink.py, which writes each message it gets
 * as JSON into a directory node reads), makes a tenant with an accent
 * colour, rules, sign-ups by approval and a post, an owner with a staff
 * token, a user with two-factor sign-in, an OAuth application, and a decoy
 * tenant in the same placement (in Korean, sign-ups closed), then hands
 * node their names. Chromium maps
 * every host name to 127.0.0.1 (--host-resolver-rules), so the pages are
 * asked for by their tenants' own domains.
 *
 * Exits 77 (CTest's "skipped") when node, Chromium or the npm packages are
 * missing, which scripts/test.sh installs; every other failure fails.
 * Screenshots go to EUNHA_BROWSER_OUT (CMake sets it under the build
 * directory).
 */
#include "harness.h"

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef EUNHA_BROWSER_DIR
#error "EUNHA_BROWSER_DIR must name tests/browser"
#endif

/* The test SMTP server test_mail.c uses. */
#define EUNHA_SMTP_SINK EUNHA_BROWSER_DIR "/../integration/auth/smtp_sink.py"
#define HOST "pages.example"
#define DECOY "decoy.example"
#define SKIP 77
/* A TOTP secret (base32) for the user with two-factor sign-in. */
#define OTP_SECRET "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"

static bool
have(const char *what)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "%s >/dev/null 2>&1", what);
    return system(cmd) == 0;
}

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

/* Starts the SMTP sink on port, writing to dir; it dies with this process.
 * Returns its pid. */
static pid_t
sink_start(int port, const char *dir)
{
    char ready[300], p[16];
    snprintf(ready, sizeof(ready), "%s/ready", dir);
    snprintf(p, sizeof(p), "%d", port);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        execl("/usr/bin/python3", "python3", EUNHA_SMTP_SINK, p, dir, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 200; i++) {
        if (access(ready, F_OK) == 0)
            return pid;
        eu_it_sleep_ms(50);
    }
    ck_abort_msg("the SMTP sink did not start (is python3-aiosmtpd installed?)");
    return pid;
}

/*
 * For the moderation and settings pages (pages.mjs's moderation()): mona,
 * a moderator; olga, an admin (the rules); pete, a sign-up awaiting approval; a report by alice on
 * otto; and on the decoy a pending sign-up and a report of its own, whose
 * texts must never show on the tenant's pages. Their names go to node in
 * EUNHA_BROWSER_MOD_*.
 */
static void
seed_moderation(struct eu_it_server *s, const char *db, const char *alice_tok)
{
    char *tid = eu_it_tenant_id(s, HOST), *decoy_tid = eu_it_tenant_id(s, DECOY);
    char *mona = eu_it_account_seed(s, HOST, "mona");
    char *olga = eu_it_account_seed(s, HOST, "olga");
    char *pete = eu_it_account_seed(s, HOST, "pete");
    char *dpete = eu_it_account_seed(s, DECOY, "dpete");
    char *otto = eu_it_account_id(s, HOST, "otto");
    char *dora = eu_it_account_id(s, DECOY, "dora");
    struct eu_it_resp r = {0};
    char path[256], body[256];
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/role", HOST, mona);
    eu_it_admin(s, "PUT", path, "{\"role\":\"moderator\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/role", HOST, olga);
    eu_it_admin(s, "PUT", path, "{\"role\":\"admin\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    free(eu_it_pg_execf(db,
                        "UPDATE users SET approved = false, reason = 'I would like to join'"
                        " WHERE tenant_id = %s AND account_id = %s",
                        tid, pete));
    free(eu_it_pg_execf(db,
                        "UPDATE users SET approved = false, reason = 'Decoy reason'"
                        " WHERE tenant_id = %s AND account_id = %s",
                        decoy_tid, dpete));
    snprintf(body, sizeof(body), "{\"account_id\":\"%s\",\"comment\":\"Otto spams\"}", otto);
    eu_it_callf(s, &r, HOST, "POST", alice_tok, body, "/api/v1/reports");
    EU_IT_EXPECT_STATUS(&r, 200);
    setenv("EUNHA_BROWSER_MOD_REPORT", eu_it_json_str(&r, "id"), 1);
    char *dan_tok = eu_it_user_token(s, DECOY, "dpete", "read write");
    snprintf(body, sizeof(body), "{\"account_id\":\"%s\",\"comment\":\"Decoy report\"}", dora);
    free(eu_it_pg_execf(db,
                        "UPDATE users SET approved = true WHERE tenant_id = %s AND account_id = %s",
                        decoy_tid, dpete));
    eu_it_callf(s, &r, DECOY, "POST", dan_tok, body, "/api/v1/reports");
    EU_IT_EXPECT_STATUS(&r, 200);
    setenv("EUNHA_BROWSER_MOD_DECOY_REPORT", eu_it_json_str(&r, "id"), 1);
    free(eu_it_pg_execf(
        db, "UPDATE users SET approved = false WHERE tenant_id = %s AND account_id = %s", decoy_tid,
        dpete));
    setenv("EUNHA_BROWSER_MOD_PENDING", pete, 1);
    setenv("EUNHA_BROWSER_MOD_TARGET", otto, 1);
    setenv("EUNHA_BROWSER_MOD_DECOY_PENDING", dpete, 1);
    eu_it_resp_free(&r);
    free(tid);
    free(decoy_tid);
    free(mona);
    free(olga);
    free(pete);
    free(dpete);
    free(otto);
    free(dora);
    free(dan_tok);
}

START_TEST(test_pages_in_chromium)
{
    char maildir[] = "/tmp/eunha-browser-mail-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(maildir));
    int smtp = free_port();
    pid_t sink = sink_start(smtp, maildir);
    char toml[512];
    snprintf(toml, sizeof(toml),
             "[mail]\nsmtp_url = \"smtp://127.0.0.1:%d\"\nfrom = \"pages@pages.example\"\n"
             "[workers]\njob_backoff_base_seconds = 1\njob_backoff_max_seconds = 2\n"
             "[limits]\nregistrations_per_30min = 0\n",
             smtp);
    struct eu_it_server *s = eu_it_server_start(toml);
    json_decref(eu_it_tenant_create(s, HOST, "Pages & Co"));
    json_decref(eu_it_tenant_create(s, DECOY, "Decoy"));
    char *alice_id = eu_it_account_seed(s, HOST, "alice");
    free(eu_it_account_seed(s, HOST, "otto"));
    free(eu_it_account_seed(s, DECOY, "dora"));
    struct eu_it_resp r = {0};
    eu_it_admin(s, "PATCH", "/admin/v1/tenants/" HOST "/instance",
                "{\"accent_color\":\"#0b7a75\",\"description\":\"A place for pages.\","
                "\"contact_username\":\"alice\",\"languages\":[\"en\"]}",
                &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_admin(s, "POST", "/admin/v1/tenants/" HOST "/rules",
                "{\"text\":\"Be kind\",\"hint\":\"No harassment\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    /* Sign-ups wait for a moderator here; owen is the owner, and approves
     * them with his staff token (alice stays a plain user: the moderation
     * pages must refuse her). The decoy reads in Korean and takes none. */
    eu_it_tenant_patch(s, HOST, "{\"registrations\":\"approval\"}");
    eu_it_tenant_patch(s, DECOY, "{\"registrations\":\"closed\"}");
    eu_it_admin(s, "PATCH", "/admin/v1/tenants/" DECOY "/instance", "{\"languages\":[\"ko\"]}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    char path[256];
    char *owen_id = eu_it_account_seed(s, HOST, "owen");
    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts/%s/role", HOST, owen_id);
    free(owen_id);
    eu_it_admin(s, "PUT", path, "{\"role\":\"owner\"}", &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    char *staff = eu_it_user_token(s, HOST, "owen", "read write admin:read admin:write");
    char *tok = eu_it_user_token(s, HOST, "alice", "read write");
    eu_it_callf(s, &r, HOST, "POST", tok,
                "{\"status\":\"Hello from the browser test\",\"spoiler_text\":\"greeting\"}",
                "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *status_id = strdup(eu_it_json_str(&r, "id"));
    char reply[256];
    snprintf(reply, sizeof(reply), "{\"status\":\"A reply\",\"in_reply_to_id\":\"%s\"}", status_id);
    eu_it_callf(s, &r, HOST, "POST", tok, reply, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *db = eu_it_tenant_database(s, HOST);
    char *tid = eu_it_tenant_id(s, HOST);
    /* A sensitive picture under a tag: the tag page shows its blurhash. */
    char *pic = eu_it_pg_execf(
        db,
        "WITH n AS (SELECT eunha_next_id() AS id) INSERT INTO media_attachments"
        " (tenant_id, id, account_id, type, state, description, blurhash, meta, file_key,"
        " file_content_type, file_size, preview_key, preview_size)"
        " SELECT %s, n.id, %s, 'image', 'ready', 'a cat', 'LEHV6nWB2yk8pyo0adR*.7kCMdnj',"
        " '{\"original\":{\"width\":640,\"height\":480}}',"
        " '%s/media_attachments/' || n.id || '/original.jpg', 'image/jpeg', 1000,"
        " '%s/media_attachments/' || n.id || '/small.webp', 100 FROM n RETURNING id::text",
        tid, alice_id, tid, tid);
    char picture[256];
    snprintf(picture, sizeof(picture),
             "{\"status\":\"A picture for #pages\",\"media_ids\":[\"%s\"],"
             "\"sensitive\":true}",
             pic);
    eu_it_callf(s, &r, HOST, "POST", tok, picture, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    free(pic);
    /* otto signs in with a second factor. */
    free(eu_it_pg_execf(db,
                        "UPDATE users SET otp_secret = '%s', otp_required_for_login = true"
                        " WHERE tenant_id = %s AND account_id = (SELECT id FROM accounts"
                        " WHERE tenant_id = %s AND username = 'otto' AND domain IS NULL)",
                        OTP_SECRET, tid, tid));
    struct eu_it_app app =
        eu_it_app_create(s, HOST,
                         "{\"client_name\":\"Browser Test App\",\"redirect_uris\":"
                         "\"urn:ietf:wg:oauth:2.0:oob\",\"scopes\":\"read write push\"}");

    seed_moderation(s, db, tok);

    char port[16], cmd[1024];
    snprintf(port, sizeof(port), "%d", s->public_port);
    setenv("EUNHA_BROWSER_PORT", port, 1);
    setenv("EUNHA_BROWSER_HOST", HOST, 1);
    setenv("EUNHA_BROWSER_DECOY", DECOY, 1);
    setenv("EUNHA_BROWSER_STATUS", status_id, 1);
    setenv("EUNHA_BROWSER_CLIENT_ID", app.id, 1);
    setenv("EUNHA_BROWSER_CLIENT_SECRET", app.secret, 1);
    setenv("EUNHA_BROWSER_PASSWORD", EU_IT_PASSWORD, 1);
    setenv("EUNHA_BROWSER_OTP_SECRET", OTP_SECRET, 1);
    setenv("EUNHA_BROWSER_STAFF_TOKEN", staff, 1);
    setenv("EUNHA_BROWSER_MAILDIR", maildir, 1);
    snprintf(cmd, sizeof(cmd), "cd '%s' && node pages.mjs", EUNHA_BROWSER_DIR);
    int rc = system(cmd);
    int code = rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
    if (code != 0)
        eu_it_server_print_log(s);
    ck_assert_msg(code == 0, "node pages.mjs exited with %d", code);

    kill(sink, SIGKILL);
    waitpid(sink, NULL, 0);
    eu_it_remove_tree(maildir);
    eu_it_resp_free(&r);
    free(alice_id);
    free(staff);
    free(tok);
    free(status_id);
    free(db);
    free(tid);
    ck_assert_int_eq(eu_it_server_stop(s), 0);
    eu_it_server_free(s);
}
END_TEST

int
main(void)
{
    if (!have("command -v node") || !have("command -v chromium") ||
        !have("test -d '" EUNHA_BROWSER_DIR "/node_modules/puppeteer-core'")) {
        fprintf(stderr, "browser: node, chromium or the npm packages are missing (scripts/test.sh"
                        " installs them); skipping\n");
        return SKIP;
    }
    Suite *suite = suite_create("browser");
    /* About two minutes alone; a full run on a busy 2-core machine took
     * over five, with the settings and moderation pages. */
    EU_IT_ADD_TCASE(suite, test_pages_in_chromium, 600);
    return eu_it_run_suite(suite);
}
