/*
 * Integration test harness: spawns the eunha binary with a generated config,
 * speaks HTTP to it with libcurl and inspects PostgreSQL with libpq. See
 * harness.h for the contract of each helper. What it does in PostgreSQL
 * directly (its connections, dropping databases, seeding accounts and
 * tokens) is in harness_pg.c.
 *
 * It links only against libc, libcurl, libpq, jansson, Check and libpng (to
 * make image fixtures), never the server's own code, so the tests exercise
 * the binary from the outside.
 */
#include "harness.h"
#include "harness_internal.h"

#include <check.h>
#include <ctype.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <png.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_REDIS_URL "redis://127.0.0.1:6379/0"
#define READY_TIMEOUT_MS 60000
#define STOP_TIMEOUT_MS 30000
#define HTTP_TIMEOUT_S 30L
#define LOG_TAIL_BYTES 6000
#define MAX_LIVE 64
#define MAX_PENDING 8

/* Servers started by this process and not yet freed, for the exit handler. */
static struct eu_it_server *live[MAX_LIVE];
/* "*_START" variables to run at exit because a test ran the "*_STOP". */
static char pending_start[MAX_PENDING][64];
static bool exit_handler_set;
static unsigned server_counter;
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void pending_save(void);

/* curl_global_init() is not thread-safe; pthread_once runs it once. */
static void
init_curl(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* ------------------------------------------------------------- utilities */

char *
it_xstrdup(const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d)
        abort();
    return d;
}

char *
it_xasprintf(const char *fmt, ...)
{
    va_list ap;
    char *out;

    va_start(ap, fmt);
    if (vasprintf(&out, fmt, ap) < 0)
        abort();
    va_end(ap);
    return out;
}

long long
eu_it_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
eu_it_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

const char *
it_env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);

    return v && *v ? v : fallback;
}

/* Writes s as a TOML basic string, escaping what TOML requires. */
static void
toml_put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static char *
read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = NULL;
    size_t len = 0, cap = 0, n;

    if (!f)
        return NULL;
    do {
        if (cap - len < 4096) {
            cap = cap ? cap * 2 : 8192;
            buf = realloc(buf, cap);
            if (!buf)
                abort();
        }
        n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
    } while (n > 0);
    buf[len] = '\0';
    fclose(f);
    return buf;
}

/* ---------------------------------------------------------- exit handler */

static void
live_add(struct eu_it_server *s)
{
    for (int i = 0; i < MAX_LIVE; i++) {
        if (!live[i]) {
            live[i] = s;
            return;
        }
    }
}

static void
live_remove(struct eu_it_server *s)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i] == s)
            live[i] = NULL;
}

static void
kill_and_reap(struct eu_it_server *s)
{
    if (!s->running)
        return;
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
    s->running = false;
}

static int
remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

/* The server's folder: its config, ready file, log, secrets.key, and the
 * default [admin] archive_dir and [media] root beside them. */
static void
remove_dir(struct eu_it_server *s)
{
    eu_it_remove_tree(s->dir);
}

void
eu_it_remove_tree(const char *dir)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * Runs when the forked test process exits, including through a failed
 * ck_assert. Services come back first because dropping databases needs
 * PostgreSQL.
 */
static void
on_exit_cleanup(void)
{
    for (int i = 0; i < MAX_PENDING; i++) {
        if (pending_start[i][0]) {
            fprintf(stderr, "harness: restarting service with %s\n", pending_start[i]);
            eu_it_try_sh(pending_start[i]);
            pending_start[i][0] = '\0';
        }
    }
    pending_save();
    for (int i = 0; i < MAX_LIVE; i++) {
        struct eu_it_server *s = live[i];
        if (!s)
            continue;
        if (s->running) {
            fprintf(stderr, "harness: server %s (pid %d) still running at exit; log:\n", s->name,
                    (int)s->pid);
            eu_it_server_print_log(s);
            kill_and_reap(s);
        }
        if (!s->keep_databases)
            eu_it_drop_databases(s->name);
        remove_dir(s);
        live[i] = NULL;
    }
}

static void
ensure_exit_handler(void)
{
    if (!exit_handler_set) {
        atexit(on_exit_cleanup);
        exit_handler_set = true;
    }
}

/* ---------------------------------------------------------------- server */

static void
write_config(struct eu_it_server *s, const struct eu_it_opts *o)
{
    FILE *f = fopen(s->config_path, "w");
    char *db_url = eu_it_pg_url(s->name);
    char tpl[80];

    ck_assert_msg(f != NULL, "cannot write '%s': %s", s->config_path, strerror(errno));
    /* The run's migrated template (EUNHA_TEST_PG_GOLDEN, made once by
     * scripts/test.sh or scripts/with-services.sh with `eunha migrate`) is
     * every server's template: the server finds it up to date and copies
     * its placement from it. A copy of its own for each server cost a
     * third of a server start's PostgreSQL time; the servers only read
     * it, and a copy waits for another server's brief migration check to
     * leave it. Without the variable each server migrates a template of
     * its own, as in production. */
    const char *golden = getenv("EUNHA_TEST_PG_GOLDEN");
    if (golden && *golden)
        snprintf(tpl, sizeof(tpl), "%s", golden);
    else
        snprintf(tpl, sizeof(tpl), "%s_tpl", s->name);

    fprintf(f, "# generated by tests/integration/harness.c\n[server]\n");
    fprintf(f, "listen = \"127.0.0.1:0\"\nadmin_listen = \"127.0.0.1:0\"\n");
    fprintf(f, "scheme = \"http\"\ncpu_threads = %d\n",
            o->cpu_threads > 0 ? o->cpu_threads : EU_IT_CPU_THREADS);
    if (o->server_toml)
        fprintf(f, "%s\n", o->server_toml);
    fprintf(f, "\n[admin]\ntoken = ");
    toml_put_string(f, EU_IT_ADMIN_TOKEN);
    fprintf(f, "\n\n[database]\nurl = ");
    toml_put_string(f, db_url);
    fprintf(f, "\ntemplate = ");
    toml_put_string(f, tpl);
    /* A server start copies two small databases: copied as files, they
     * cost PostgreSQL about half the CPU of WAL-logging every block, and
     * database creation was the largest share of the suites' CPU. */
    fprintf(f, "\ncreate_strategy = \"file_copy\"");
    if (o->placement_connections)
        fprintf(f, "\nplacement_connections = %d", o->placement_connections);
    if (o->database_toml)
        fprintf(f, "\n%s", o->database_toml);
    if (o->pool_max || o->pool_min || o->acquire_timeout || o->idle_timeout) {
        fprintf(f, "\n\n[database_pool]\n");
        if (o->pool_max)
            fprintf(f, "max_connections = %d\n", o->pool_max);
        fprintf(f, "min_connections = %d\n", o->pool_min);
        if (o->acquire_timeout)
            fprintf(f, "acquire_timeout_seconds = %d\n", o->acquire_timeout);
        if (o->idle_timeout)
            fprintf(f, "idle_timeout_seconds = %d\n", o->idle_timeout);
    }
    fprintf(f, "\n\n[redis]\nurl = ");
    toml_put_string(f, it_env_or("EUNHA_TEST_REDIS_URL", DEFAULT_REDIS_URL));
    fprintf(f, "\nprefix = ");
    toml_put_string(f, s->name);
    fprintf(f, "\n\n[log]\nlevel = \"debug\"\n");
    if (o->extra_toml)
        fprintf(f, "\n%s\n", o->extra_toml);
    fclose(f);
    free(db_url);
}

/* Parses "public=H:P\nadmin=H:P\npid=N\n"; false until all three are there. */
static bool
parse_ready(struct eu_it_server *s, const char *text, long *pid)
{
    char *copy = it_xstrdup(text), *save = NULL;
    int got = 0;

    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *colon = strrchr(line, ':');
        if (strncmp(line, "public=", 7) == 0 && colon) {
            s->public_port = atoi(colon + 1);
            got |= s->public_port > 0 ? 1 : 0;
        } else if (strncmp(line, "admin=", 6) == 0 && colon) {
            s->admin_port = atoi(colon + 1);
            got |= s->admin_port > 0 ? 2 : 0;
        } else if (strncmp(line, "pid=", 4) == 0) {
            *pid = strtol(line + 4, NULL, 10);
            got |= *pid > 0 ? 4 : 0;
        }
    }
    free(copy);
    return got == 7;
}

/* Forks and execs the server, then waits for its ready file. */
static bool
spawn(struct eu_it_server *s)
{
    const char *bin = getenv("EUNHA_BIN");
    char tmp[320];
    pid_t parent = getpid();
    long long deadline;

    ck_assert_msg(bin && *bin, "EUNHA_BIN is not set (path to the eunha binary)");
    snprintf(tmp, sizeof(tmp), "%s.tmp", s->ready_path);
    unlink(s->ready_path);
    unlink(tmp);
    fflush(NULL);

    s->pid = fork();
    ck_assert_msg(s->pid >= 0, "fork: %s", strerror(errno));
    if (s->pid == 0) {
        int log = open(s->log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        int null = open("/dev/null", O_RDONLY);
        /* Die with the test process, so a crashed test leaves no server. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        if (log < 0 || null < 0)
            _exit(127);
        dup2(null, 0);
        dup2(log, 1);
        dup2(log, 2);
        /* The config file must win over anything in the caller's environment. */
        unsetenv("EUNHA_CPU_THREADS");
        unsetenv("EUNHA_ADMIN_TOKEN");
        unsetenv("EUNHA_DATABASE_URL");
        unsetenv("EUNHA_REDIS_URL");
        execl(bin, bin, "serve", "-c", s->config_path, "--ready-file", s->ready_path, (char *)NULL);
        fprintf(stderr, "harness: cannot exec '%s': %s\n", bin, strerror(errno));
        _exit(127);
    }
    s->running = true;
    s->public_port = s->admin_port = 0;

    deadline = eu_it_now_ms() + READY_TIMEOUT_MS;
    while (eu_it_now_ms() < deadline) {
        char *text = read_file(s->ready_path);
        if (text) {
            long pid = 0;
            bool ok = parse_ready(s, text, &pid);
            free(text);
            if (ok) {
                if (pid != (long)s->pid) {
                    fprintf(stderr, "harness: ready file pid %ld is not the child %d\n", pid,
                            (int)s->pid);
                    kill_and_reap(s);
                    return false;
                }
                return true;
            }
        }
        if (!eu_it_server_is_alive(s)) {
            fprintf(stderr, "harness: server %s exited before it was ready; log:\n", s->name);
            eu_it_server_print_log(s);
            return false;
        }
        eu_it_sleep_ms(50);
    }
    fprintf(stderr, "harness: server %s not ready after %d s; log:\n", s->name,
            READY_TIMEOUT_MS / 1000);
    eu_it_server_print_log(s);
    kill_and_reap(s);
    return false;
}

struct eu_it_server *
eu_it_server_start(const char *extra_toml)
{
    struct eu_it_opts o = {.extra_toml = extra_toml};

    return eu_it_server_start_opts(&o);
}

struct eu_it_server *
eu_it_server_start_opts(const struct eu_it_opts *opts)
{
    static const struct eu_it_opts none;
    struct eu_it_server *s = calloc(1, sizeof(*s));
    const char *tmpdir = it_env_or("TMPDIR", "/tmp");

    if (!s)
        abort();
    if (!opts)
        opts = &none;
    ensure_exit_handler();
    pthread_once(&curl_once, init_curl);
    if (opts->name) {
        snprintf(s->name, sizeof(s->name), "%s", opts->name);
    } else {
        it_drop_stale_databases();
        snprintf(s->name, sizeof(s->name), "eunha_it_%d_%u", (int)getpid(), ++server_counter);
    }
    snprintf(s->dir, sizeof(s->dir), "%s/%s_XXXXXX", tmpdir, s->name);
    ck_assert_msg(mkdtemp(s->dir) != NULL, "mkdtemp: %s", strerror(errno));
    snprintf(s->config_path, sizeof(s->config_path), "%s/eunha.toml", s->dir);
    snprintf(s->ready_path, sizeof(s->ready_path), "%s/ready", s->dir);
    snprintf(s->log_path, sizeof(s->log_path), "%s/server.log", s->dir);
    write_config(s, opts);
    live_add(s);

    ck_assert_msg(spawn(s), "server %s did not start (see log above)", s->name);
    return s;
}

bool
eu_it_server_is_alive(struct eu_it_server *s)
{
    int status;

    if (!s->running)
        return false;
    if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
        s->running = false;
        fprintf(stderr, "harness: server %s exited unexpectedly (status 0x%x)\n", s->name,
                (unsigned)status);
        return false;
    }
    return true;
}

int
eu_it_server_stop(struct eu_it_server *s)
{
    long long deadline = eu_it_now_ms() + STOP_TIMEOUT_MS;
    int status, rc;

    if (!s->running)
        return -1;
    kill(s->pid, SIGTERM);
    for (;;) {
        pid_t w = waitpid(s->pid, &status, WNOHANG);
        if (w == s->pid)
            break;
        if (w < 0 && errno != EINTR) {
            s->running = false;
            return -1;
        }
        if (eu_it_now_ms() >= deadline) {
            fprintf(stderr, "harness: server %s ignored SIGTERM for %d s; killing; log:\n", s->name,
                    STOP_TIMEOUT_MS / 1000);
            eu_it_server_print_log(s);
            kill_and_reap(s);
            return -1;
        }
        eu_it_sleep_ms(50);
    }
    s->running = false;
    rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (rc != 0) {
        fprintf(stderr, "harness: server %s stopped with status %d; log:\n", s->name, rc);
        eu_it_server_print_log(s);
    }
    return rc;
}

void
eu_it_server_signal(struct eu_it_server *s, int sig)
{
    ck_assert_msg(eu_it_server_is_alive(s), "server %s is not running", s->name);
    ck_assert_msg(kill(s->pid, sig) == 0, "kill(%d, %d): %s", (int)s->pid, sig, strerror(errno));
}

void
eu_it_server_restart(struct eu_it_server *s)
{
    int rc = eu_it_server_stop(s);

    ck_assert_msg(rc == 0, "server %s exited with %d on SIGTERM", s->name, rc);
    ck_assert_msg(spawn(s), "server %s did not restart (see log above)", s->name);
}

void
eu_it_server_print_log(const struct eu_it_server *s)
{
    char *text = read_file(s->log_path);

    if (!text) {
        fprintf(stderr, "  (no log at %s)\n", s->log_path);
        return;
    }
    /* A sanitizer's report is what explains a failed stop, and its first
     * lines (the direct leaks, the bad access) matter most: show it from
     * its start, with what the server logged just before. */
    size_t len = strlen(text), from = len > LOG_TAIL_BYTES ? len - LOG_TAIL_BYTES : 0;
    const char *report = strstr(text, "==ERROR: ");
    if (!report)
        report = strstr(text, "runtime error: ");
    if (report) {
        size_t at = (size_t)(report - text);
        from = at > 2048 ? at - 2048 : 0;
        if (len - from > 4 * LOG_TAIL_BYTES)
            text[from + 4 * LOG_TAIL_BYTES] = '\0';
    }
    fprintf(stderr, "----- %s -----\n%s\n----- end of log -----\n", s->log_path, text + from);
    free(text);
}

void
eu_it_server_free(struct eu_it_server *s)
{
    if (!s)
        return;
    if (s->running) {
        fprintf(stderr, "harness: freeing running server %s; log:\n", s->name);
        eu_it_server_print_log(s);
        kill_and_reap(s);
    }
    if (!s->keep_databases)
        eu_it_drop_databases(s->name);
    remove_dir(s);
    live_remove(s);
    free(s);
}

/* ------------------------------------------------------------------ HTTP */

struct buf {
    char *data;
    size_t len;
};

static void
buf_append(struct buf *b, const char *p, size_t n)
{
    b->data = realloc(b->data, b->len + n + 1);
    if (!b->data)
        abort();
    memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
    buf_append(arg, p, size * n);
    return size * n;
}

static size_t
on_header(char *p, size_t size, size_t n, void *arg)
{
    struct buf *b = arg;

    /* Keep only the last response's block (e.g. after "100 Continue"). */
    if (size * n >= 5 && strncmp(p, "HTTP/", 5) == 0)
        b->len = 0;
    buf_append(b, p, size * n);
    return size * n;
}

static void
parse_headers(struct eu_it_resp *r)
{
    char *copy = it_xstrdup(r->headers), *save = NULL;

    for (char *line = strtok_r(copy, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
        char *colon = strchr(line, ':');
        char *v;
        if (!colon || strncmp(line, "HTTP/", 5) == 0)
            continue;
        *colon = '\0';
        for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
            ;
        r->hdrs = realloc(r->hdrs, (r->nhdrs + 1) * sizeof(*r->hdrs));
        if (!r->hdrs)
            abort();
        r->hdrs[r->nhdrs].name = it_xstrdup(line);
        r->hdrs[r->nhdrs].value = it_xstrdup(v);
        r->nhdrs++;
    }
    free(copy);
}

void
eu_it_resp_free(struct eu_it_resp *r)
{
    free(r->body);
    free(r->headers);
    if (r->json)
        json_decref(r->json);
    for (size_t i = 0; i < r->nhdrs; i++) {
        free(r->hdrs[i].name);
        free(r->hdrs[i].value);
    }
    free(r->hdrs);
    memset(r, 0, sizeof(*r));
}

void
eu_it_callf(struct eu_it_server *s, struct eu_it_resp *r, const char *host, const char *method,
            const char *bearer, const char *json_body, const char *fmt, ...)
{
    char path[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof(path), fmt, ap);
    va_end(ap);
    int rc = eu_it_http(r, method, s->public_port, host, path, bearer, json_body);
    ck_assert_msg(rc == 0, "%s %s: %s", method, path, r->error);
}

int
eu_it_http(struct eu_it_resp *r, const char *method, int port, const char *host_header,
           const char *path, const char *bearer, const char *json_body)
{
    struct buf body = {0}, head = {0};
    struct curl_slist *hl = NULL;
    char url[1024], line[1024], errbuf[CURL_ERROR_SIZE] = "";
    long long start;
    CURLcode rc;
    CURL *c;

    pthread_once(&curl_once, init_curl);
    eu_it_resp_free(r);
    c = curl_easy_init();
    if (!c)
        abort();
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, HTTP_TIMEOUT_S);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &head);
    /* Each request on its own connection, like independent clients. */
    curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);

    if (host_header) {
        snprintf(line, sizeof(line), "Host: %s", host_header);
        hl = curl_slist_append(hl, line);
    }
    if (bearer) {
        snprintf(line, sizeof(line), "Authorization: Bearer %s", bearer);
        hl = curl_slist_append(hl, line);
    }
    hl = curl_slist_append(hl, "Expect:");
    hl = curl_slist_append(hl, "Accept: application/json");
    if (json_body) {
        hl = curl_slist_append(hl, "Content-Type: application/json");
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, json_body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(json_body));
    } else if (strcmp(method, "POST") == 0) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, 0L);
    }
    if (strcmp(method, "HEAD") == 0)
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    else if (strcmp(method, "GET") != 0 || json_body)
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);

    start = eu_it_now_ms();
    rc = curl_easy_perform(c);
    r->seconds = (double)(eu_it_now_ms() - start) / 1000.0;
    if (rc == CURLE_OK) {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    } else {
        r->status = 0;
        snprintf(r->error, sizeof(r->error), "%.10s %.100s: %.120s", method, url,
                 errbuf[0] ? errbuf : curl_easy_strerror(rc));
    }
    curl_slist_free_all(hl);
    curl_easy_cleanup(c);

    r->body = body.data ? body.data : it_xstrdup("");
    r->body_len = body.len;
    r->headers = head.data ? head.data : it_xstrdup("");
    parse_headers(r);
    if (r->body_len > 0)
        r->json = json_loadb(r->body, r->body_len, 0, NULL);
    return rc == CURLE_OK ? 0 : -1;
}

const char *
eu_it_resp_header(const struct eu_it_resp *r, const char *name)
{
    const char *found = NULL;

    for (size_t i = 0; i < r->nhdrs; i++)
        if (strcasecmp(r->hdrs[i].name, name) == 0)
            found = r->hdrs[i].value;
    return found;
}

void
eu_it_admin(struct eu_it_server *s, const char *method, const char *path, const char *json_body,
            struct eu_it_resp *r)
{
    int rc = eu_it_http(r, method, s->admin_port, NULL, path, EU_IT_ADMIN_TOKEN, json_body);

    ck_assert_msg(rc == 0, "admin request failed: %s", r->error);
}

void
eu_it_public(struct eu_it_server *s, const char *method, const char *host, const char *path,
             struct eu_it_resp *r)
{
    int rc = eu_it_http(r, method, s->public_port, host, path, NULL, NULL);

    ck_assert_msg(rc == 0, "public request failed: %s", r->error);
}

const char *
eu_it_json_str(const struct eu_it_resp *r, const char *key)
{
    json_t *v = json_is_object(r->json) ? json_object_get(r->json, key) : NULL;

    return json_is_string(v) ? json_string_value(v) : NULL;
}

json_t *
eu_it_tenant_create(struct eu_it_server *s, const char *domain, const char *title)
{
    struct eu_it_resp r = {0};
    json_t *req = json_pack("{s:s, s:s}", "domain", domain, "title", title);
    char *body = json_dumps(req, JSON_COMPACT);
    json_t *out;

    eu_it_admin(s, "POST", "/admin/v1/tenants", body, &r);
    ck_assert_msg(r.status == 201, "create tenant %s: status %ld body %s", domain, r.status,
                  r.body);
    ck_assert_msg(json_is_object(r.json), "create tenant %s: body is not an object: %s", domain,
                  r.body);
    out = json_incref(r.json);
    eu_it_resp_free(&r);
    free(body);
    json_decref(req);
    return out;
}

void
eu_it_tenant_patch(struct eu_it_server *s, const char *domain, const char *json_body)
{
    struct eu_it_resp r = {0};
    char path[512];

    snprintf(path, sizeof(path), "/admin/v1/tenants/%s", domain);
    eu_it_admin(s, "PATCH", path, json_body, &r);
    ck_assert_msg(r.status == 200, "patch tenant %s with %s: status %ld body %s", domain, json_body,
                  r.status, r.body);
    eu_it_resp_free(&r);
}

/* The admin API's string field key of tenant DOMAIN; caller frees. */
static char *
tenant_field(struct eu_it_server *s, const char *domain, const char *key)
{
    struct eu_it_resp r = {0};
    char path[512];

    snprintf(path, sizeof(path), "/admin/v1/tenants/%s", domain);
    eu_it_admin(s, "GET", path, NULL, &r);
    ck_assert_msg(r.status == 200, "get tenant %s: status %ld body %s", domain, r.status, r.body);
    ck_assert_msg(eu_it_json_str(&r, key) != NULL, "tenant %s has no %s: %s", domain, key, r.body);
    char *v = it_xstrdup(eu_it_json_str(&r, key));
    eu_it_resp_free(&r);
    return v;
}

char *
eu_it_tenant_id(struct eu_it_server *s, const char *domain)
{
    return tenant_field(s, domain, "id");
}

char *
eu_it_tenant_database(struct eu_it_server *s, const char *domain)
{
    return tenant_field(s, domain, "database");
}

void
eu_it_account_create(struct eu_it_server *s, const char *domain, const char *username)
{
    struct eu_it_resp r = {0};
    char path[512], email[512];
    json_t *req;
    char *body;

    snprintf(path, sizeof(path), "/admin/v1/tenants/%s/accounts", domain);
    snprintf(email, sizeof(email), "%s@%s", username, domain);
    req = json_pack("{s:s, s:s, s:s, s:s}", "username", username, "email", email, "password",
                    EU_IT_PASSWORD, "role", "user");
    body = json_dumps(req, JSON_COMPACT);
    eu_it_admin(s, "POST", path, body, &r);
    ck_assert_msg(r.status == 201, "create account %s on %s: status %ld body %s", username, domain,
                  r.status, r.body);
    eu_it_resp_free(&r);
    free(body);
    json_decref(req);
}

json_t *
eu_it_jpath(json_t *root, const char *path)
{
    char *copy = it_xstrdup(path), *save = NULL;
    json_t *cur = root;

    for (char *key = strtok_r(copy, ".", &save); key && cur; key = strtok_r(NULL, ".", &save)) {
        if (json_is_array(cur)) {
            char *end;
            long i = strtol(key, &end, 10);
            cur = *end == '\0' && i >= 0 ? json_array_get(cur, (size_t)i) : NULL;
        } else {
            cur = json_object_get(cur, key);
        }
    }
    free(copy);
    return cur;
}

int
eu_it_run_suite(Suite *suite)
{
    SRunner *sr = srunner_create(suite);
    int failed;

    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}

bool
eu_it_metric_value(const char *text, const char *name, double *out)
{
    size_t n = strlen(name);

    for (const char *line = text; line && *line;) {
        const char *next = strchr(line, '\n');
        if (*line != '#' && strncmp(line, name, n) == 0 && (line[n] == ' ' || line[n] == '\t')) {
            char *end;
            *out = strtod(line + n, &end);
            return end != line + n;
        }
        line = next ? next + 1 : NULL;
    }
    return false;
}

long
eu_it_proc_threads(pid_t pid)
{
    char path[64], *text, *p;
    long n = -1;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    text = read_file(path);
    if (!text)
        return -1;
    p = strstr(text, "\nThreads:");
    if (p)
        n = strtol(p + strlen("\nThreads:"), NULL, 10);
    free(text);
    return n;
}

/* ----------------------------------------------------------- environment */

/* Remembers that envvar's undoing counterpart ("*_STOP" and "*_KILL" ->
 * "*_START", "*_PAUSE" -> "*_RESUME") must run at exit. */
static void
note_stop(const char *envvar)
{
    size_t n = strlen(envvar);
    char start[64];

    if (n > 5 && n < sizeof(start) && strcmp(envvar + n - 5, "_STOP") == 0)
        snprintf(start, sizeof(start), "%.*s_START", (int)(n - 5), envvar);
    else if (n > 5 && n < sizeof(start) && strcmp(envvar + n - 5, "_KILL") == 0)
        snprintf(start, sizeof(start), "%.*s_START", (int)(n - 5), envvar);
    else if (n > 6 && n < sizeof(start) && strcmp(envvar + n - 6, "_PAUSE") == 0)
        snprintf(start, sizeof(start), "%.*s_RESUME", (int)(n - 6), envvar);
    else
        return;
    for (int i = 0; i < MAX_PENDING; i++)
        if (strcmp(pending_start[i], start) == 0)
            return;
    for (int i = 0; i < MAX_PENDING; i++) {
        if (!pending_start[i][0]) {
            snprintf(pending_start[i], sizeof(pending_start[i]), "%s", start);
            return;
        }
    }
}

static void
note_started(const char *envvar)
{
    for (int i = 0; i < MAX_PENDING; i++)
        if (strcmp(pending_start[i], envvar) == 0)
            pending_start[i][0] = '\0';
}

static void
pending_path(char *buf, size_t size, pid_t runner)
{
    snprintf(buf, size, "%s/eunha_it_pending_%d", it_env_or("TMPDIR", "/tmp"), (int)runner);
}

/*
 * A failed ck_assert leaves the forked test with _exit(), so neither atexit
 * nor teardown runs there. The pending "*_START" list is therefore mirrored
 * to a file named after the runner (our parent), which eu_it_after_test()
 * reads in the runner once the test process is gone.
 */
static void
pending_save(void)
{
    char path[300];
    FILE *f = NULL;

    pending_path(path, sizeof(path), getppid());
    for (int i = 0; i < MAX_PENDING; i++) {
        if (!pending_start[i][0])
            continue;
        if (!f)
            f = fopen(path, "w");
        if (f)
            fprintf(f, "%s\n", pending_start[i]);
    }
    if (f)
        fclose(f);
    else
        unlink(path);
}

int
eu_it_try_sh(const char *envvar)
{
    const char *cmd = getenv(envvar);
    int status;
    pid_t pid;

    if (!cmd || !*cmd)
        return -1;
    fflush(NULL);
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        /* A new session: Check kills the test's whole process group when the
         * test ends, which would take a daemon started here (PostgreSQL,
         * Redis) down with it. */
        setsid();
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR)
            return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void
eu_it_sh(const char *envvar)
{
    const char *cmd = getenv(envvar);
    int rc;

    ck_assert_msg(cmd && *cmd, "%s is not set (scripts/test.sh exports it)", envvar);
    ensure_exit_handler();
    /* Record before running: a half-done stop still needs the start at exit. */
    note_stop(envvar);
    pending_save();
    rc = eu_it_try_sh(envvar);
    ck_assert_msg(rc == 0, "%s (%s) exited with %d", envvar, cmd, rc);
    note_started(envvar);
    pending_save();
}

/* Removes a harness temp dir left by a dead test, printing the server log in it. */
static void
sweep_dir(const char *dir)
{
    struct eu_it_server tmp;

    memset(&tmp, 0, sizeof(tmp));
    snprintf(tmp.dir, sizeof(tmp.dir), "%s", dir);
    snprintf(tmp.config_path, sizeof(tmp.config_path), "%s/eunha.toml", tmp.dir);
    snprintf(tmp.ready_path, sizeof(tmp.ready_path), "%s/ready", tmp.dir);
    snprintf(tmp.log_path, sizeof(tmp.log_path), "%s/server.log", tmp.dir);
    if (access(tmp.log_path, R_OK) == 0) {
        fprintf(stderr, "harness: a test ended without freeing its server; its log:\n");
        eu_it_server_print_log(&tmp);
    }
    remove_dir(&tmp);
}

void
eu_it_after_test(void)
{
    const char *tmpdir = it_env_or("TMPDIR", "/tmp");
    char path[300], line[128];
    FILE *f;
    DIR *d;
    struct dirent *e;

    pending_path(path, sizeof(path), getpid());
    f = fopen(path, "r");
    if (f) {
        while (fgets(line, sizeof(line), f)) {
            line[strcspn(line, "\n")] = '\0';
            if (!line[0])
                continue;
            fprintf(stderr, "harness: restarting service with %s\n", line);
            eu_it_try_sh(line);
        }
        fclose(f);
        unlink(path);
    }

    d = opendir(tmpdir);
    while (d && (e = readdir(d)) != NULL) {
        long pid;
        if (strncmp(e->d_name, "eunha_it_", 9) != 0)
            continue;
        pid = strtol(e->d_name + 9, NULL, 10);
        if (pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
            char dir[256];
            snprintf(dir, sizeof(dir), "%.120s/%.120s", tmpdir, e->d_name);
            sweep_dir(dir);
        }
    }
    if (d)
        closedir(d);
    it_drop_stale_databases();
}

/* ------------------------------------------------ oauth: raw requests */

int
eu_it_http_raw(struct eu_it_resp *r, const char *method, int port, const char *host_header,
               const char *path, const char *const *headers, const char *body)
{
    struct buf rbody = {0}, head = {0};
    struct curl_slist *hl = NULL;
    char url[2048], line[1024], errbuf[CURL_ERROR_SIZE] = "";
    long long start;
    CURLcode rc;
    CURL *c;

    pthread_once(&curl_once, init_curl);
    eu_it_resp_free(r);
    c = curl_easy_init();
    if (!c)
        abort();
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, HTTP_TIMEOUT_S);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &rbody);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &head);
    curl_easy_setopt(c, CURLOPT_FORBID_REUSE, 1L);
    if (host_header) {
        snprintf(line, sizeof(line), "Host: %s", host_header);
        hl = curl_slist_append(hl, line);
    }
    hl = curl_slist_append(hl, "Expect:");
    hl = curl_slist_append(hl, "Accept:");
    for (size_t i = 0; headers && headers[i]; i++)
        hl = curl_slist_append(hl, headers[i]);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    }
    if (strcmp(method, "HEAD") == 0)
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    else if (strcmp(method, "GET") != 0 || body)
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);

    start = eu_it_now_ms();
    rc = curl_easy_perform(c);
    r->seconds = (double)(eu_it_now_ms() - start) / 1000.0;
    if (rc == CURLE_OK) {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    } else {
        r->status = 0;
        snprintf(r->error, sizeof(r->error), "%.10s %.100s: %.120s", method, url,
                 errbuf[0] ? errbuf : curl_easy_strerror(rc));
    }
    curl_slist_free_all(hl);
    curl_easy_cleanup(c);
    r->body = rbody.data ? rbody.data : it_xstrdup("");
    r->body_len = rbody.len;
    r->headers = head.data ? head.data : it_xstrdup("");
    parse_headers(r);
    if (r->body_len > 0)
        r->json = json_loadb(r->body, r->body_len, 0, NULL);
    return rc == CURLE_OK ? 0 : -1;
}

char *
eu_it_urlencode(const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out = malloc(strlen(s) * 3 + 1), *o = out;
    if (!out)
        abort();
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (isalnum(*p) || *p == '-' || *p == '_' || *p == '.' || *p == '~') {
            *o++ = (char)*p;
        } else {
            *o++ = '%';
            *o++ = hex[*p >> 4];
            *o++ = hex[*p & 15];
        }
    }
    *o = '\0';
    return out;
}

long
eu_it_tenant_rows(const char *db, const char *id)
{
    char sql[1024];
    snprintf(sql, sizeof(sql),
             "SELECT coalesce(sum((xpath('/row/c/text()', query_to_xml(format("
             "'SELECT count(*) AS c FROM %%I WHERE tenant_id = %s', c.relname), false, true,"
             " '')))[1]::text::bigint), 0) FROM pg_class c JOIN pg_attribute a"
             " ON a.attrelid = c.oid AND a.attname = 'tenant_id' JOIN pg_namespace n"
             " ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND n.nspname = 'public'",
             id);
    return eu_it_pg_exec_long(db, sql);
}

double
eu_it_metric(struct eu_it_server *s, const char *name)
{
    struct eu_it_resp r = {0};
    double v = -1;
    eu_it_admin(s, "GET", "/metrics", NULL, &r);
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(eu_it_metric_value(r.body, name, &v), "no %s in:\n%s", name, r.body);
    eu_it_resp_free(&r);
    return v;
}

/* ------------------------------------ federation and media: shared helpers */

void
eu_it_wait_get(struct eu_it_server *s, struct eu_it_resp *r, const char *host, const char *tok,
               long ms, eu_it_pred_fn pred, const void *arg, const char *what, const char *fmt, ...)
{
    char path[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof(path), fmt, ap);
    va_end(ap);
    long long deadline = eu_it_now_ms() + ms;
    for (;;) {
        eu_it_callf(s, r, host, "GET", tok, NULL, "%s", path);
        if (pred(r, arg))
            return;
        if (eu_it_now_ms() > deadline)
            break;
        eu_it_sleep_ms(100);
    }
    ck_abort_msg("%s: not seen in %ld ms; last GET %s on %s: %ld %.1500s", what, ms, path, host,
                 r->status, r->body);
}

json_t *
eu_it_find(json_t *arr, const char *path, const char *want)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        json_t *s = eu_it_jpath(v, path);
        if (json_is_string(s) && strcmp(json_string_value(s), want) == 0)
            return v;
    }
    return NULL;
}

bool
eu_it_has_acct(const struct eu_it_resp *r, const void *arg)
{
    return r->status == 200 && json_is_array(r->json) &&
           (eu_it_find(r->json, "account.acct", arg) || eu_it_find(r->json, "acct", arg));
}

char *
eu_it_pg_execf(const char *dbname, const char *fmt, ...)
{
    char q[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(q, sizeof(q), fmt, ap);
    va_end(ap);
    ck_assert_msg(n >= 0 && (size_t)n < sizeof(q), "statement too long: %.200s", q);
    return eu_it_pg_exec(dbname, q);
}

long
eu_it_pg_execf_long(const char *dbname, const char *fmt, ...)
{
    char q[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(q, sizeof(q), fmt, ap);
    va_end(ap);
    ck_assert_msg(n >= 0 && (size_t)n < sizeof(q), "statement too long: %.200s", q);
    return eu_it_pg_exec_long(dbname, q);
}

char *
eu_it_remote_account(const char *db, const char *tid, const char *uri, bool shared)
{
    const char *host = strstr(uri, "://");
    ck_assert_msg(host != NULL, "not an actor URI: %s", uri);
    host += 3;
    const char *users = strstr(host, "/users/");
    ck_assert_msg(users != NULL, "not an actor URI: %s", uri);
    char shared_inbox[512] = "NULL";
    if (shared)
        snprintf(shared_inbox, sizeof(shared_inbox), "'%.*s/inbox'", (int)(users - uri), uri);
    return eu_it_pg_execf(db,
                          "INSERT INTO accounts (tenant_id, username, domain, uri, inbox_url,"
                          " shared_inbox_url, followers_url, featured_url, public_key)"
                          " VALUES (%s, '%s', '%.*s', '%s', '%s/inbox', %s, '%s/followers',"
                          " '%s/collections/featured', '-----BEGIN PUBLIC KEY-----') RETURNING id",
                          tid, users + 7, (int)(users - host), host, uri, uri, shared_inbox, uri,
                          uri);
}

unsigned char *
eu_it_make_png(int width, int height, size_t *len)
{
    png_image img;
    memset(&img, 0, sizeof(img));
    img.version = PNG_IMAGE_VERSION;
    img.width = (png_uint_32)width;
    img.height = (png_uint_32)height;
    img.format = PNG_FORMAT_RGBA;
    unsigned char *px = malloc((size_t)width * height * 4);
    for (int i = 0; i < width * height; i++) {
        px[4 * i] = (unsigned char)(i * 7);
        px[4 * i + 1] = (unsigned char)(i * 3);
        px[4 * i + 2] = 200;
        px[4 * i + 3] = (unsigned char)(i % 2 ? 255 : 64); /* alpha */
    }
    png_alloc_size_t n = 0;
    ck_assert(png_image_write_to_memory(&img, NULL, &n, 0, px, 0, NULL));
    unsigned char *out = malloc(n);
    ck_assert(png_image_write_to_memory(&img, out, &n, 0, px, 0, NULL));
    free(px);
    *len = n;
    return out;
}
