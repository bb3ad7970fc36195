/*
 * scripts/haproxy.cfg.example in front of two eunha processes, for real
 * (issue 30, item 5): Debian's haproxy runs the example as shipped, with
 * the addresses in the environment variables it expands itself. Requests
 * through it reach both processes; one process SIGKILLed, requests keep
 * succeeding through the other (a refused connection is sent to the other
 * process, and the health check takes the dead one out within about two
 * seconds); the client's own address, not the proxy's and not one the
 * client made up in X-Forwarded-For, is what eunha's rate limit counts.
 * Also: /healthz answers on the public listener for any Host, which is what
 * the proxy checks.
 *
 * scripts/nginx.conf.example likewise, by an nginx the test runs as an
 * unprivileged-port process with its own prefix, logs and temporary
 * directories in the server's scratch directory.
 *
 * Clients use other loopback addresses (127.0.0.2, 127.0.0.3) as their
 * source, so the proxy (127.0.0.1, trusted) and each client differ.
 */
#include "harness.h"

#include <check.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fleet.h"

#define TIMEOUT 180
#define HOST "proxied.example"
#define SERVER_TOML "trusted_proxies = [\"127.0.0.1\"]"

static size_t
sink(char *p, size_t size, size_t n, void *arg)
{
    (void)p;
    (void)arg;
    return size * n;
}

struct hbuf {
    char s[4096];
    size_t len;
};

static size_t
keep_header(char *p, size_t size, size_t n, void *arg)
{
    struct hbuf *h = arg;
    size_t len = size * n;
    if (h->len + len < sizeof(h->s)) {
        memcpy(h->s + h->len, p, len);
        h->len += len;
        h->s[h->len] = '\0';
    }
    return len;
}

/* GET path through the proxy on port from source address src with Host
 * HOST and, when xff is not NULL, the X-Forwarded-For a client made up.
 * Returns the status (0: no answer); remaining gets X-RateLimit-Remaining
 * (-1 when absent) when not NULL. */
static long
get_from(int port, const char *src, const char *path, const char *xff, long *remaining)
{
    CURL *c = curl_easy_init();
    ck_assert_ptr_nonnull(c);
    char url[256], iface[64], xh[128];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
    snprintf(iface, sizeof(iface), "host!%s", src);
    struct curl_slist *h = curl_slist_append(NULL, "Host: " HOST);
    if (xff) {
        snprintf(xh, sizeof(xh), "X-Forwarded-For: %s", xff);
        h = curl_slist_append(h, xh);
    }
    struct hbuf hb = {.s = "", .len = 0};
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_INTERFACE, iface);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, keep_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &hb);
    long status = 0;
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (remaining) {
        *remaining = -1;
        const char *v = strcasestr(hb.s, "\nX-RateLimit-Remaining:");
        if (v)
            *remaining = strtol(v + strlen("\nX-RateLimit-Remaining:"), NULL, 10);
        else
            fprintf(stderr, "%s from %s: %ld without X-RateLimit-Remaining:\n%s\n", path, src,
                    status, hb.s);
    }
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return status;
}

/* Starts haproxy -f scripts/haproxy.cfg.example in the foreground with the
 * three addresses in its environment, its output to log; returns its pid.
 * It dies with the test. */
static pid_t
haproxy_start(int port, int p1, int p2, const char *log)
{
    const char *src = getenv("EUNHA_SOURCE_DIR");
    ck_assert_msg(src && *src, "EUNHA_SOURCE_DIR is not set");
    char cfg[512];
    snprintf(cfg, sizeof(cfg), "%s/scripts/haproxy.cfg.example", src);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        char v[64];
        snprintf(v, sizeof(v), "127.0.0.1:%d", port);
        setenv("EUNHA_PROXY_BIND", v, 1);
        snprintf(v, sizeof(v), "127.0.0.1:%d", p1);
        setenv("EUNHA_1", v, 1);
        snprintf(v, sizeof(v), "127.0.0.1:%d", p2);
        setenv("EUNHA_2", v, 1);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execlp("haproxy", "haproxy", "-db", "-f", cfg, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* How many lines of the proxy's log name server (e.g. "eunha/eunha1"). */
static int
log_count(const char *log, const char *server)
{
    FILE *f = fopen(log, "r");
    if (!f)
        return 0;
    char line[2048];
    int n = 0;
    while (fgets(line, sizeof(line), f))
        if (strstr(line, server) && strstr(line, "GET /api/v1/instance"))
            n++;
    fclose(f);
    return n;
}

START_TEST(test_haproxy_example)
{
    ck_assert_msg(system("command -v haproxy >/dev/null") == 0,
                  "haproxy is not installed (scripts/lib/services.sh EU_DEPS has it)");
    struct eu_it_opts oa = {.server_toml = SERVER_TOML};
    struct eu_it_server *a = eu_it_server_start_opts(&oa);
    struct eu_it_opts ob = {.name = a->name, .server_toml = SERVER_TOML};
    struct eu_it_server *b = eu_it_server_start_opts(&ob);
    b->keep_databases = true; /* a drops them */
    json_decref(eu_it_tenant_create(a, HOST, "Proxied"));
    struct eu_it_resp r = {0};

    /* The public /healthz: any Host, or none; the admin one is unchanged. */
    ck_assert_int_eq(eu_it_http(&r, "GET", a->public_port, NULL, "/healthz", NULL, NULL), 0);
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "status", "ok");
    ck_assert_int_eq(
        eu_it_http(&r, "GET", b->public_port, "nobody.example", "/healthz", NULL, NULL), 0);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(eu_it_http(&r, "GET", a->admin_port, NULL, "/healthz", NULL, NULL), 0);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(eu_it_http(&r, "POST", a->public_port, HOST, "/healthz", NULL, NULL), 0);
    ck_assert_int_ne(r.status, 200);
    /* b knows the tenant a created. */
    long long t0 = eu_it_now_ms();
    for (;;) {
        eu_it_public(b, "GET", HOST, "/api/v1/instance", &r);
        if (r.status == 200)
            break;
        ck_assert_msg(eu_it_now_ms() - t0 < 10000, "b: %ld", r.status);
        eu_it_sleep_ms(50);
    }
    eu_it_resp_free(&r);

    int port = eu_it_services("eu_free_port");
    ck_assert_int_gt(port, 0);
    char log[128];
    snprintf(log, sizeof(log), "/tmp/eunha_it_haproxy_%d.log", (int)getpid());
    pid_t hp = haproxy_start(port, a->public_port, b->public_port, log);

    /* Up, and both processes take requests. */
    t0 = eu_it_now_ms();
    while (get_from(port, "127.0.0.1", "/api/v1/instance", NULL, NULL) != 200) {
        ck_assert_msg(eu_it_now_ms() - t0 < 15000, "no answer through haproxy (log %s)", log);
        eu_it_sleep_ms(100);
    }
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(get_from(port, "127.0.0.1", "/api/v1/instance", NULL, NULL), 200);
    eu_it_sleep_ms(300); /* the log line comes as the exchange ends */
    int n1 = log_count(log, "eunha/eunha1"), n2 = log_count(log, "eunha/eunha2");
    fprintf(stderr, "through haproxy: %d requests to a, %d to b\n", n1, n2);
    ck_assert_msg(n1 >= 3 && n2 >= 3, "round-robin: a %d, b %d", n1, n2);

    /* The client's address is counted, not the proxy's, and not what the
     * client wrote in X-Forwarded-For (the proxy drops it). */
    long first = 0, rem = 0;
    ck_assert_int_eq(get_from(port, "127.0.0.2", "/api/v1/instance", "203.0.113.1", &first), 200);
    ck_assert_msg(first > 0, "no X-RateLimit-Remaining through the proxy");
    ck_assert_int_eq(get_from(port, "127.0.0.2", "/api/v1/instance", "203.0.113.2", &rem), 200);
    ck_assert_int_eq(rem, first - 1);
    ck_assert_int_eq(get_from(port, "127.0.0.2", "/api/v1/instance", NULL, &rem), 200);
    ck_assert_int_eq(rem, first - 2);
    ck_assert_int_eq(get_from(port, "127.0.0.3", "/api/v1/instance", "127.0.0.2", &rem), 200);
    ck_assert_int_eq(rem, first);
    /* Two X-Forwarded-For lines (a proxy that adds its own line, as
     * HAProxy's option forwardfor does without the example's del-header):
     * read as one list, so the made-up first line is not the client. */
    const char *two[] = {"X-Forwarded-For: 203.0.113.9", "X-Forwarded-For: 127.0.0.2", NULL};
    ck_assert_int_eq(eu_it_http_raw(&r, "GET", b->public_port, HOST, "/api/v1/instance", two, NULL),
                     0);
    EU_IT_EXPECT_STATUS(&r, 200);
    const char *v = eu_it_resp_header(&r, "X-RateLimit-Remaining");
    ck_assert_msg(v && atol(v) == first - 3, "two lines: remaining %s, want %ld", v ? v : "-",
                  first - 3);
    eu_it_resp_free(&r);

    /* a is killed: requests keep succeeding through b. */
    eu_it_server_signal(a, SIGKILL);
    eu_it_server_stop(a);
    long long killed = eu_it_now_ms();
    int failed = 0, ok_after = 0;
    long long last_fail = 0;
    for (int i = 0; i < 40; i++) {
        long st = get_from(port, "127.0.0.1", "/api/v1/instance", NULL, NULL);
        if (st != 200) {
            failed++;
            last_fail = eu_it_now_ms() - killed;
            ok_after = 0;
        } else {
            ok_after++;
        }
        eu_it_sleep_ms(100);
    }
    fprintf(stderr, "after the kill: %d of 40 requests failed, the last %lld ms after it\n", failed,
            last_fail);
    /* inter 1s, fall 2: out within about two seconds, with the margin a
     * loaded machine needs; every request after that succeeds. */
    ck_assert_msg(failed == 0 || last_fail < 3000, "a request failed %lld ms after the kill",
                  last_fail);
    ck_assert_int_ge(ok_after, 20);
    /* The health check took it out. */
    t0 = eu_it_now_ms();
    for (;;) {
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "grep -q 'eunha/eunha1 is DOWN' %s", log);
        if (system(cmd) == 0)
            break;
        ck_assert_msg(eu_it_now_ms() - t0 < 5000, "haproxy never marked eunha1 down (log %s)", log);
        eu_it_sleep_ms(100);
    }

    kill(hp, SIGTERM);
    waitpid(hp, NULL, 0);
    unlink(log);
    ck_assert_int_eq(eu_it_server_stop(b), 0);
    eu_it_server_free(b);
    eu_it_server_free(a);
}
END_TEST

/* Writes DIR/nginx.conf: a main configuration for an unprivileged nginx
 * of its own (foreground, one process, every path under dir) that
 * includes DIR/eunha.conf, which is scripts/nginx.conf.example with only
 * its addresses changed: the upstream's servers are p1 and p2, and it
 * listens on 127.0.0.1:port. */
static void
nginx_configure(const char *dir, int port, int p1, int p2)
{
    const char *src = getenv("EUNHA_SOURCE_DIR");
    ck_assert_msg(src && *src, "EUNHA_SOURCE_DIR is not set");
    char path[512], line[1024];
    snprintf(path, sizeof(path), "%s/scripts/nginx.conf.example", src);
    FILE *in = fopen(path, "r");
    ck_assert_ptr_nonnull(in);
    snprintf(path, sizeof(path), "%s/eunha.conf", dir);
    FILE *out = fopen(path, "w");
    ck_assert_ptr_nonnull(out);
    bool servers = false, listen = false;
    while (fgets(line, sizeof(line), in)) {
        if (strstr(line, "server 10.0.0.")) {
            if (!servers)
                fprintf(out,
                        "    server 127.0.0.1:%d max_fails=2 fail_timeout=5s;\n"
                        "    server 127.0.0.1:%d max_fails=2 fail_timeout=5s;\n",
                        p1, p2);
            servers = true;
        } else if (strstr(line, "listen 80;")) {
            fprintf(out, "    listen 127.0.0.1:%d;\n", port);
            listen = true;
        } else {
            fputs(line, out);
        }
    }
    fclose(in);
    fclose(out);
    ck_assert_msg(servers && listen, "the example's upstream or listen line moved");
    snprintf(path, sizeof(path), "%s/nginx.conf", dir);
    out = fopen(path, "w");
    ck_assert_ptr_nonnull(out);
    fprintf(out,
            "daemon off;\nmaster_process off;\npid %s/nginx.pid;\nerror_log %s/error.log info;\n"
            "events { worker_connections 256; }\n"
            "http {\n"
            "    log_format up '$remote_addr \"$request\" $status upstream=$upstream_addr';\n"
            "    access_log %s/access.log up;\n"
            "    client_body_temp_path %s/body;\n    proxy_temp_path %s/proxy;\n"
            "    fastcgi_temp_path %s/fastcgi;\n    uwsgi_temp_path %s/uwsgi;\n"
            "    scgi_temp_path %s/scgi;\n"
            "    include %s/eunha.conf;\n}\n",
            dir, dir, dir, dir, dir, dir, dir, dir, dir);
    fclose(out);
}

/* Starts nginx on DIR/nginx.conf in the foreground; it dies with the
 * test. */
static pid_t
nginx_start(const char *dir)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        char conf[512], log[512];
        snprintf(conf, sizeof(conf), "%s/nginx.conf", dir);
        snprintf(log, sizeof(log), "%s/stderr.log", dir);
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execlp("nginx", "nginx", "-p", dir, "-e", log, "-c", conf, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Lines of nginx's access log that went to upstream port p. */
static int
nginx_count(const char *dir, int p)
{
    char path[512], want[64], line[2048];
    snprintf(path, sizeof(path), "%s/access.log", dir);
    snprintf(want, sizeof(want), "upstream=127.0.0.1:%d", p);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int n = 0;
    while (fgets(line, sizeof(line), f))
        if (strstr(line, want) && strstr(line, "GET /api/v1/instance"))
            n++;
    fclose(f);
    return n;
}

/* scripts/nginx.conf.example as shipped but for its addresses, run by an
 * nginx of the test's own (its prefix, logs and temporary files in a
 * scratch directory): both processes take requests, the client's address
 * is what the rate limit counts (not the proxy's, not a made-up one), and
 * a process SIGKILLed costs no request (proxy_next_upstream). */
START_TEST(test_nginx_example)
{
    ck_assert_msg(system("command -v nginx >/dev/null") == 0,
                  "nginx is not installed (scripts/lib/services.sh EU_TEST_DEPS has it)");
    struct eu_it_opts oa = {.server_toml = SERVER_TOML};
    struct eu_it_server *a = eu_it_server_start_opts(&oa);
    struct eu_it_opts ob = {.name = a->name, .server_toml = SERVER_TOML};
    struct eu_it_server *b = eu_it_server_start_opts(&ob);
    b->keep_databases = true; /* a drops them */
    json_decref(eu_it_tenant_create(a, HOST, "Proxied"));
    struct eu_it_resp r = {0};
    long long t0 = eu_it_now_ms();
    for (;;) {
        eu_it_public(b, "GET", HOST, "/api/v1/instance", &r);
        if (r.status == 200)
            break;
        ck_assert_msg(eu_it_now_ms() - t0 < 10000, "b: %ld", r.status);
        eu_it_sleep_ms(50);
    }
    eu_it_resp_free(&r);

    char dir[320];
    snprintf(dir, sizeof(dir), "%s/nginx", a->dir);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    int port = eu_it_services("eu_free_port");
    ck_assert_int_gt(port, 0);
    nginx_configure(dir, port, a->public_port, b->public_port);
    pid_t ng = nginx_start(dir);

    t0 = eu_it_now_ms();
    while (get_from(port, "127.0.0.1", "/api/v1/instance", NULL, NULL) != 200) {
        ck_assert_msg(eu_it_now_ms() - t0 < 15000, "no answer through nginx (logs in %s)", dir);
        eu_it_sleep_ms(100);
    }
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(get_from(port, "127.0.0.1", "/api/v1/instance", NULL, NULL), 200);
    eu_it_sleep_ms(300);
    int n1 = nginx_count(dir, a->public_port), n2 = nginx_count(dir, b->public_port);
    fprintf(stderr, "through nginx: %d requests to a, %d to b\n", n1, n2);
    ck_assert_msg(n1 >= 3 && n2 >= 3, "round-robin: a %d, b %d", n1, n2);

    /* nginx appends the client to what it wrote; eunha reads from the
     * right, so the made-up address is never counted. */
    long first = 0, rem = 0;
    ck_assert_int_eq(get_from(port, "127.0.0.2", "/api/v1/instance", "203.0.113.1", &first), 200);
    ck_assert_msg(first > 0, "no X-RateLimit-Remaining through nginx");
    ck_assert_int_eq(get_from(port, "127.0.0.2", "/api/v1/instance", "203.0.113.2", &rem), 200);
    ck_assert_int_eq(rem, first - 1);
    ck_assert_int_eq(get_from(port, "127.0.0.2", "/api/v1/instance", NULL, &rem), 200);
    ck_assert_int_eq(rem, first - 2);
    ck_assert_int_eq(get_from(port, "127.0.0.3", "/api/v1/instance", "127.0.0.2", &rem), 200);
    ck_assert_int_eq(rem, first);

    /* a is killed: a refused connection goes to b, so nothing fails. */
    eu_it_server_signal(a, SIGKILL);
    eu_it_server_stop(a);
    int failed = 0;
    for (int i = 0; i < 20; i++) {
        if (get_from(port, "127.0.0.1", "/api/v1/instance", NULL, NULL) != 200)
            failed++;
        eu_it_sleep_ms(50);
    }
    ck_assert_msg(failed == 0, "%d of 20 requests failed after the kill (logs in %s)", failed, dir);

    kill(ng, SIGTERM);
    waitpid(ng, NULL, 0);
    ck_assert_int_eq(eu_it_server_stop(b), 0);
    eu_it_server_free(b);
    eu_it_server_free(a);
}
END_TEST

int
main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    Suite *s = suite_create("front_proxy");
    EU_IT_ADD_TCASE(s, test_haproxy_example, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_nginx_example, TIMEOUT);
    return eu_it_run_suite(s);
}
