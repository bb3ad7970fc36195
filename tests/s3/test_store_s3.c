/*
 * The S3 file store (src/media/store_s3.c) against a real S3-compatible
 * server: s3rver (npm, tests/s3/package.json) on a free loopback port with
 * a bucket made at its start. Objects go through eu_store_put/del on an
 * event loop with the process's fetch client and CPU pool, exactly as the
 * server runs them, and are read back over plain HTTP with libcurl.
 *
 * s3rver checks that the access key exists but does not verify Signature V4
 * (its authentication.js leaves V4 "unimplemented"), so a wrong secret
 * cannot be caught here; a wrong access key is, and is what the failure
 * case uses.
 *
 * Exits 77 (CTest's "skipped") when node or s3rver is missing, which
 * scripts/test.sh installs.
 */
#include <check.h>
#include <curl/curl.h>
#include <event2/event.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "eunha/app.h"
#include "eunha/config.h"
#include "eunha/cpupool.h"
#include "eunha/fetch.h"
#include "eunha/mediastore.h"

/* CMake passes the absolute path; this default is for cppcheck. */
#ifndef EUNHA_S3_DIR
#define EUNHA_S3_DIR "tests/s3"
#endif

#define SKIP 77
#define BUCKET "media"

static pid_t s3rver_pid;
static int s3rver_port;
static char s3rver_dir[] = "/tmp/eunha-s3rver.XXXXXX";

static int
free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    bind(fd, (struct sockaddr *)&a, sizeof a);
    getsockname(fd, (struct sockaddr *)&a, &len);
    close(fd);
    return ntohs(a.sin_port);
}

static bool
port_open(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bool ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

/* Runs in Check's parent process, once for the suite. */
static void
s3rver_start(void)
{
    ck_assert_ptr_nonnull(mkdtemp(s3rver_dir));
    s3rver_port = free_port();
    char port[16];
    snprintf(port, sizeof port, "%d", s3rver_port);
    s3rver_pid = fork();
    if (s3rver_pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, STDOUT_FILENO);
        execl(EUNHA_S3_DIR "/node_modules/.bin/s3rver", "s3rver", "-d", s3rver_dir, "-a",
              "127.0.0.1", "-p", port, "--silent", "--configure-bucket", BUCKET, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 300 && !port_open(s3rver_port); i++)
        usleep(50 * 1000);
    ck_assert_msg(port_open(s3rver_port), "s3rver did not start on port %d", s3rver_port);
}

static void
s3rver_stop(void)
{
    if (s3rver_pid > 0) {
        kill(s3rver_pid, SIGTERM);
        waitpid(s3rver_pid, NULL, 0);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", s3rver_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", s3rver_dir);
}

/* A loop, CPU pool and fetch client as the server has them, with
 * [federation] at its defaults: https only, no private addresses. The S3
 * requests must pass anyway, being the operator's endpoint. */
struct s3_world {
    struct eu_app app;
    struct eu_store store;
    int rc;
    bool done;
};

static void
world_init(struct s3_world *w, const char *access_key, int path_style)
{
    memset(w, 0, sizeof *w);
    w->app.base = event_base_new();
    w->app.cpu = eu_cpupool_new(w->app.base, 1);
    struct eu_fetch_config fc = {
        .max_requests = 8,
        .max_requests_per_host = 4,
        .max_queued_per_owner = 16,
        .connect_timeout_s = 5,
        .request_timeout_s = 20,
        .max_response_bytes = 1 << 20,
        .max_redirects = 3,
        .host_unavailable_after_s = 3600,
    };
    w->app.fetch = eu_fetch_client_new(w->app.base, &fc);
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "http://127.0.0.1:%d/", s3rver_port);
    struct eu_s3_config sc = {
        .endpoint = endpoint,
        .bucket = BUCKET,
        .region = "us-east-1",
        .access_key = access_key,
        .secret_key = "S3RVER",
        .path_style = path_style,
    };
    w->store.ops = &eu_store_s3_ops;
    w->store.impl = eu_store_s3_new(&w->app, &sc);
    ck_assert_ptr_nonnull(w->store.impl);
}

static void
world_free(struct s3_world *w)
{
    w->store.ops->free(w->store.impl);
    eu_fetch_client_free(w->app.fetch);
    eu_cpupool_free(w->app.cpu);
    event_base_free(w->app.base);
}

static void
on_done(int rc, void *arg)
{
    struct s3_world *w = arg;
    w->rc = rc;
    w->done = true;
    event_base_loopbreak(w->app.base);
}

static int
wait_done(struct s3_world *w)
{
    while (!w->done)
        event_base_loop(w->app.base, EVLOOP_ONCE);
    w->done = false;
    return w->rc;
}

struct got {
    unsigned char *body;
    size_t len;
    long status;
    char content_type[64];
};

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
    struct got *g = arg;
    g->body = realloc(g->body, g->len + size * n);
    memcpy(g->body + g->len, p, size * n);
    g->len += size * n;
    return size * n;
}

/* A plain, anonymous GET, as a browser loads a media URL. */
static struct got
http_get(const char *url)
{
    struct got g = {0};
    CURL *c = curl_easy_init();
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &g);
    curl_easy_setopt(c, CURLOPT_PROXY, "");
    ck_assert_int_eq(curl_easy_perform(c), CURLE_OK);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &g.status);
    char *ct = NULL;
    curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
    snprintf(g.content_type, sizeof g.content_type, "%s", ct ? ct : "");
    curl_easy_cleanup(c);
    return g;
}

START_TEST(test_put_get_delete)
{
    struct s3_world w;
    world_init(&w, "S3RVER", 1);
    /* Binary, with NULs, big enough to be sent in many writes. */
    size_t len = 300 * 1024 + 7;
    unsigned char *data = malloc(len);
    for (size_t i = 0; i < len; i++)
        data[i] = (unsigned char)((i * 2654435761u) >> 13);
    const char *key = "42/media_attachments/1001/original.png";
    eu_store_put(&w.store, key, data, len, "image/png", on_done, &w);
    ck_assert(!w.done); /* never from inside put */
    ck_assert_int_eq(wait_done(&w), 0);

    char *url = eu_store_url(&w.store, "https://a.example", key);
    char want[128];
    snprintf(want, sizeof want, "http://127.0.0.1:%d/" BUCKET "/%s", s3rver_port, key);
    ck_assert_str_eq(url, want);
    struct got g = http_get(url);
    ck_assert_int_eq(g.status, 200);
    ck_assert_str_eq(g.content_type, "image/png");
    ck_assert_uint_eq(g.len, len);
    ck_assert_mem_eq(g.body, data, len);
    free(g.body);

    eu_store_del(&w.store, key, on_done, &w);
    ck_assert(!w.done);
    ck_assert_int_eq(wait_done(&w), 0);
    g = http_get(url);
    ck_assert_int_eq(g.status, 404);
    free(g.body);
    /* Deleting what is not there succeeds. */
    eu_store_del(&w.store, key, on_done, &w);
    ck_assert_int_eq(wait_done(&w), 0);

    free(url);
    free(data);
    world_free(&w);
}
END_TEST

START_TEST(test_wrong_credentials_fail_logged)
{
    struct s3_world w;
    world_init(&w, "NOT-A-KEY", 1);
    /* The log line goes to stderr: catch it in a file. */
    char logpath[] = "/tmp/eunha-s3log.XXXXXX";
    int fd = mkstemp(logpath);
    int saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    eu_store_put(&w.store, "42/media_attachments/1002/original.jpg", (const unsigned char *)"jpeg",
                 4, "image/jpeg", on_done, &w);
    int rc = wait_done(&w);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    ck_assert_int_eq(rc, -1);
    char log[4096] = "";
    ssize_t n = pread(fd, log, sizeof log - 1, 0);
    close(fd);
    unlink(logpath);
    ck_assert_int_gt(n, 0);
    ck_assert_msg(strstr(log, "s3 put of '42/media_attachments/1002/original.jpg' failed: HTTP 403"
                              " InvalidAccessKeyId"),
                  "log: %s", log);
    ck_assert_ptr_null(strstr(log, "S3RVER")); /* no secret in the log */
    /* Nothing was stored. */
    char url[128];
    snprintf(url, sizeof url,
             "http://127.0.0.1:%d/" BUCKET "/42/media_attachments/1002/original.jpg", s3rver_port);
    struct got g = http_get(url);
    ck_assert_int_eq(g.status, 404);
    free(g.body);
    world_free(&w);
}
END_TEST

START_TEST(test_bad_keys_refused)
{
    struct s3_world w;
    world_init(&w, "S3RVER", 1);
    static const char *const bad[] = {"../etc/passwd", "/1/a.png", "1/a b.png", "1//a.png", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        eu_store_put(&w.store, bad[i], (const unsigned char *)"x", 1, "image/png", on_done, &w);
        ck_assert(!w.done);
        ck_assert_int_eq(wait_done(&w), -1);
        eu_store_del(&w.store, bad[i], on_done, &w);
        ck_assert(!w.done);
        ck_assert_int_eq(wait_done(&w), -1);
    }
    world_free(&w);
}
END_TEST

START_TEST(test_config_and_urls)
{
    struct eu_app app = {0};
    struct eu_s3_config sc = {.endpoint = "https://s3.example.com",
                              .bucket = "files",
                              .region = "eu-west-1",
                              .access_key = "AK",
                              .secret_key = "SK"};
    void *impl = eu_store_s3_new(&app, &sc);
    ck_assert_ptr_nonnull(impl);
    char *u = eu_store_s3_ops.url(impl, "https://a.example", "7/accounts/3/avatar-9.png");
    ck_assert_str_eq(u, "https://files.s3.example.com/7/accounts/3/avatar-9.png");
    free(u);
    eu_store_s3_ops.free(impl);
    sc.public_url = "https://cdn.example/";
    impl = eu_store_s3_new(&app, &sc);
    u = eu_store_s3_ops.url(impl, "https://a.example", "7/x.png");
    ck_assert_str_eq(u, "https://cdn.example/7/x.png");
    free(u);
    eu_store_s3_ops.free(impl);
    sc.bucket = NULL;
    ck_assert_ptr_null(eu_store_s3_new(&app, &sc));
    sc.bucket = "files";
    sc.endpoint = "s3.example.com";
    ck_assert_ptr_null(eu_store_s3_new(&app, &sc));

    /* [media.s3] in eunha.toml, and the secret masked when printed. */
    char path[] = "/tmp/eunha-s3conf.XXXXXX";
    int fd = mkstemp(path);
    const char *toml = "[media.s3]\nendpoint = \"http://127.0.0.1:9000\"\nbucket = \"b\"\n"
                       "region = \"r1\"\naccess_key = \"ak\"\nsecret_key = \"sekrit\"\n"
                       "public_url = \"https://cdn.example\"\npath_style = true\n";
    ck_assert_int_eq(write(fd, toml, strlen(toml)), (ssize_t)strlen(toml));
    close(fd);
    struct eu_config cfg;
    eu_config_init_defaults(&cfg);
    ck_assert_str_eq(cfg.s3_region, "us-east-1");
    ck_assert_ptr_null(cfg.s3_endpoint);
    char err[256];
    ck_assert_msg(eu_config_load(&cfg, path, err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq(cfg.s3_endpoint, "http://127.0.0.1:9000");
    ck_assert_str_eq(cfg.s3_bucket, "b");
    ck_assert_str_eq(cfg.s3_region, "r1");
    ck_assert_str_eq(cfg.s3_access_key, "ak");
    ck_assert_str_eq(cfg.s3_secret_key, "sekrit");
    ck_assert_str_eq(cfg.s3_public_url, "https://cdn.example");
    ck_assert(cfg.s3_path_style);
    char *printed = NULL;
    size_t plen = 0;
    FILE *out = open_memstream(&printed, &plen);
    eu_config_print(&cfg, out);
    fclose(out);
    ck_assert_ptr_nonnull(strstr(printed, "[media.s3]\nendpoint = \"http://127.0.0.1:9000\""));
    ck_assert_ptr_nonnull(strstr(printed, "secret_key = \"********\""));
    ck_assert_ptr_null(strstr(printed, "sekrit"));
    free(printed);
    eu_config_release(&cfg);

    toml = "[media.s3]\nendpoint = \"s3.example.com\"\n";
    fd = open(path, O_WRONLY | O_TRUNC);
    ck_assert_int_eq(write(fd, toml, strlen(toml)), (ssize_t)strlen(toml));
    close(fd);
    eu_config_init_defaults(&cfg);
    ck_assert_int_eq(eu_config_load(&cfg, path, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "media.s3.endpoint"), "%s", err);
    eu_config_release(&cfg);
    unlink(path);
}
END_TEST

int
main(void)
{
    if (system("node --version >/dev/null 2>&1") != 0 ||
        access(EUNHA_S3_DIR "/node_modules/s3rver/package.json", R_OK) != 0) {
        fprintf(stderr, "store_s3: node or s3rver is not installed (run scripts/test.sh or npm"
                        " install in tests/s3); skipping\n");
        return SKIP;
    }
    Suite *s = suite_create("store_s3");
    TCase *tc = tcase_create("s3rver");
    tcase_add_unchecked_fixture(tc, s3rver_start, s3rver_stop);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_put_get_delete);
    tcase_add_test(tc, test_wrong_credentials_fail_logged);
    tcase_add_test(tc, test_bad_keys_refused);
    suite_add_tcase(s, tc);
    tc = tcase_create("config");
    tcase_add_test(tc, test_config_and_urls);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
