/*
 * Tests for config loading: defaults, values from the file, environment
 * overrides, the errors an operator sees for bad files, the admin token file
 * and secret masking in eu_config_print. Config files are written to mkstemp
 * files; CK_FORK keeps each test's environment changes to itself.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eunha/config.h"

static char paths[16][64];
static int n_paths;

/* Writes text to a new temp file and returns its path (static storage). */
static const char *
write_temp(const char *text)
{
    ck_assert_int_lt(n_paths, 16);
    char *path = paths[n_paths++];
    strcpy(path, "/tmp/eunha-config-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    size_t len = strlen(text);
    ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
    return path;
}

static void
remove_temps(void)
{
    for (int i = 0; i < n_paths; i++)
        unlink(paths[i]);
    n_paths = 0;
}

static void
clear_env(void)
{
    unsetenv("EUNHA_CPU_THREADS");
    unsetenv("EUNHA_ADMIN_TOKEN");
    unsetenv("EUNHA_DATABASE_URL");
    unsetenv("EUNHA_REDIS_URL");
}

/* Loads text over defaults; returns the rc and leaves the message in err. */
static int
load_text(struct eu_config *cfg, const char *text, char *err, size_t errlen)
{
    eu_config_init_defaults(cfg);
    const char *path = write_temp(text);
    return eu_config_load(cfg, path, err, errlen);
}

START_TEST(test_defaults)
{
    struct eu_config cfg;
    eu_config_init_defaults(&cfg);
    ck_assert_str_eq(cfg.listen, "127.0.0.1:8080");
    ck_assert_str_eq(cfg.admin_listen, "127.0.0.1:9180");
    ck_assert_int_eq(cfg.cpu_threads, 2);
    ck_assert_str_eq(cfg.scheme, "https");
    ck_assert_uint_eq(cfg.n_trusted_proxies, 0);
    ck_assert_ptr_nonnull(cfg.trusted_proxies);
    ck_assert_ptr_null(cfg.trusted_proxies[0]);
    ck_assert_ptr_null(cfg.admin_token);
    ck_assert_str_eq(cfg.archive_dir, "archives");
    ck_assert_str_eq(cfg.database_url, "postgresql://postgres@127.0.0.1:5432/eunha");
    ck_assert_str_eq(cfg.database_template, "eunha_template");
    ck_assert_str_eq(cfg.database_create_strategy, "wal_log");
    ck_assert_str_eq(eu_config_create_db_clause(&cfg), "");
    ck_assert_int_eq(cfg.pool_max_connections, 2);
    ck_assert_int_eq(cfg.pool_min_connections, 0);
    ck_assert_int_eq(cfg.pool_acquire_timeout_s, 5);
    ck_assert_int_eq(cfg.pool_idle_timeout_s, 20);
    ck_assert_str_eq(cfg.redis_url, "redis://127.0.0.1:6379/0");
    ck_assert_str_eq(cfg.redis_prefix, "eunha");
    ck_assert_int_eq(cfg.queue_idle_poll_s, 300);
    ck_assert_int_eq(cfg.max_running_jobs, 8);
    ck_assert_int_eq(cfg.job_max_attempts, 12);
    ck_assert_int_eq(cfg.job_backoff_base_s, 15);
    ck_assert_int_eq(cfg.job_backoff_max_s, 21600);
    ck_assert_int_eq(cfg.job_lock_s, 60);
    ck_assert_int_eq(cfg.suspended_retention_s, 2592000);
    ck_assert_int_eq(cfg.scheduled_min_lead_s, 300);
    ck_assert_int_eq(cfg.poll_min_expires_s, 300);
    ck_assert_uint_eq(cfg.max_body_bytes, 1048576);
    ck_assert_uint_eq(cfg.max_upload_bytes, 17825792);
    ck_assert_uint_eq(cfg.media_image_size_limit, 16777216);
    ck_assert_str_eq(cfg.media_storage, "local");
    ck_assert_uint_eq(cfg.max_header_bytes, 16384);
    ck_assert_int_eq(cfg.request_timeout_s, 30);
    ck_assert_int_eq(cfg.json_max_depth, 16);
    ck_assert_int_eq(cfg.api_requests_per_5min, 300);
    ck_assert_int_eq(cfg.registrations_per_30min, 5);
    ck_assert_int_eq(cfg.sign_ins_per_ip_per_5min, 25);
    ck_assert_int_eq(cfg.sign_ins_per_login_per_hour, 25);
    ck_assert_str_eq(cfg.log_level, "info");
    eu_config_release(&cfg);
}
END_TEST

START_TEST(test_federation)
{
    struct eu_config cfg;
    eu_config_init_defaults(&cfg);
    ck_assert(!cfg.fed_allow_private_addresses);
    ck_assert(!cfg.fed_allow_http);
    ck_assert_int_eq(cfg.fed_max_requests, 128);
    ck_assert_int_eq(cfg.fed_max_requests_per_host, 8);
    ck_assert_int_eq(cfg.fed_max_queued_per_tenant, 1000);
    ck_assert_int_eq(cfg.fed_connect_timeout_s, 10);
    ck_assert_int_eq(cfg.fed_request_timeout_s, 30);
    ck_assert_uint_eq(cfg.fed_max_response_bytes, 1048576);
    ck_assert_int_eq(cfg.fed_max_redirects, 3);
    ck_assert_int_eq(cfg.fed_host_unavailable_after_s, 604800);
    eu_config_release(&cfg);

    char err[256];
    const char *text = "[federation]\n"
                       "allow_private_addresses = true\n"
                       "allow_http = true\n"
                       "max_requests = 4\n"
                       "max_requests_per_host = 2\n"
                       "max_queued_per_tenant = 9\n"
                       "connect_timeout_seconds = 1\n"
                       "request_timeout_seconds = 2\n"
                       "max_response_bytes = 4096\n"
                       "max_redirects = 0\n"
                       "host_unavailable_after_seconds = 5\n";
    ck_assert_msg(load_text(&cfg, text, err, sizeof err) == 0, "%s", err);
    ck_assert(cfg.fed_allow_private_addresses);
    ck_assert(cfg.fed_allow_http);
    ck_assert_int_eq(cfg.fed_max_requests, 4);
    ck_assert_int_eq(cfg.fed_max_requests_per_host, 2);
    ck_assert_int_eq(cfg.fed_max_queued_per_tenant, 9);
    ck_assert_int_eq(cfg.fed_connect_timeout_s, 1);
    ck_assert_int_eq(cfg.fed_request_timeout_s, 2);
    ck_assert_uint_eq(cfg.fed_max_response_bytes, 4096);
    ck_assert_int_eq(cfg.fed_max_redirects, 0);
    ck_assert_int_eq(cfg.fed_host_unavailable_after_s, 5);
    eu_config_release(&cfg);
    remove_temps();
}
END_TEST

START_TEST(test_empty_file_keeps_defaults)
{
    struct eu_config cfg;
    char err[256];
    ck_assert_msg(load_text(&cfg, "# nothing\n", err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(cfg.cpu_threads, 2);
    ck_assert_str_eq(cfg.listen, "127.0.0.1:8080");
    eu_config_release(&cfg);
    remove_temps();
}
END_TEST

START_TEST(test_file_overrides)
{
    const char *text = "[server]\n"
                       "listen = \"0.0.0.0:80\"\n"
                       "admin_listen = \"[::1]:0\"\n"
                       "cpu_threads = 8\n"
                       "scheme = \"http\"\n"
                       "trusted_proxies = [\"10.0.0.0/8\", \"::1\"]\n"
                       "[database]\n"
                       "url = \"postgresql://u@db/x\"\n"
                       "template = \"tpl\"\n"
                       "create_strategy = \"file_copy\"\n"
                       "[database_pool]\n"
                       "max_connections = 10\n"
                       "min_connections = 10\n"
                       "acquire_timeout_seconds = 1\n"
                       "idle_timeout_seconds = 60\n"
                       "[redis]\n"
                       "url = \"redis://r:6380/2\"\n"
                       "prefix = \"p\"\n"
                       "[workers]\n"
                       "queue_idle_poll_seconds = 5\n"
                       "max_running_jobs = 3\n"
                       "job_max_attempts = 4\n"
                       "job_backoff_base_seconds = 2\n"
                       "job_backoff_max_seconds = 60\n"
                       "job_lock_seconds = 30\n"
                       "suspended_retention_seconds = 0\n"
                       "scheduled_status_min_lead_seconds = 2\n"
                       "poll_min_expires_in_seconds = 1\n"
                       "[limits]\n"
                       "max_body_bytes = 2_097_152\n"
                       "max_upload_bytes = 3_145_728\n"
                       "max_header_bytes = 8192\n"
                       "request_timeout_seconds = 10\n"
                       "json_max_depth = 24\n"
                       "api_requests_per_5min = 7\n"
                       "sign_in_attempts_per_ip_per_5min = 0\n"
                       "sign_in_attempts_per_login_per_hour = 3\n"
                       "[log]\n"
                       "level = \"debug\"\n";
    struct eu_config cfg;
    char err[256];
    ck_assert_msg(load_text(&cfg, text, err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq(cfg.listen, "0.0.0.0:80");
    ck_assert_str_eq(cfg.admin_listen, "[::1]:0");
    ck_assert_int_eq(cfg.cpu_threads, 8);
    ck_assert_str_eq(cfg.scheme, "http");
    ck_assert_uint_eq(cfg.n_trusted_proxies, 2);
    ck_assert_str_eq(cfg.trusted_proxies[0], "10.0.0.0/8");
    ck_assert_str_eq(cfg.trusted_proxies[1], "::1");
    ck_assert_ptr_null(cfg.trusted_proxies[2]);
    ck_assert_str_eq(cfg.database_url, "postgresql://u@db/x");
    ck_assert_str_eq(cfg.database_template, "tpl");
    ck_assert_str_eq(cfg.database_create_strategy, "file_copy");
    ck_assert_str_eq(eu_config_create_db_clause(&cfg), " STRATEGY FILE_COPY");
    ck_assert_int_eq(cfg.pool_max_connections, 10);
    ck_assert_int_eq(cfg.pool_min_connections, 10);
    ck_assert_int_eq(cfg.pool_acquire_timeout_s, 1);
    ck_assert_int_eq(cfg.pool_idle_timeout_s, 60);
    ck_assert_str_eq(cfg.redis_url, "redis://r:6380/2");
    ck_assert_str_eq(cfg.redis_prefix, "p");
    ck_assert_int_eq(cfg.queue_idle_poll_s, 5);
    ck_assert_int_eq(cfg.max_running_jobs, 3);
    ck_assert_int_eq(cfg.job_max_attempts, 4);
    ck_assert_int_eq(cfg.job_backoff_base_s, 2);
    ck_assert_int_eq(cfg.job_backoff_max_s, 60);
    ck_assert_int_eq(cfg.job_lock_s, 30);
    ck_assert_int_eq(cfg.suspended_retention_s, 0);
    ck_assert_int_eq(cfg.scheduled_min_lead_s, 2);
    ck_assert_int_eq(cfg.poll_min_expires_s, 1);
    ck_assert_uint_eq(cfg.max_body_bytes, 2097152);
    ck_assert_uint_eq(cfg.max_upload_bytes, 3145728);
    ck_assert_uint_eq(cfg.max_header_bytes, 8192);
    ck_assert_int_eq(cfg.request_timeout_s, 10);
    ck_assert_int_eq(cfg.json_max_depth, 24);
    ck_assert_int_eq(cfg.api_requests_per_5min, 7);
    ck_assert_int_eq(cfg.sign_ins_per_ip_per_5min, 0);
    ck_assert_int_eq(cfg.sign_ins_per_login_per_hour, 3);
    ck_assert_str_eq(cfg.log_level, "debug");
    eu_config_release(&cfg);
    remove_temps();
}
END_TEST

START_TEST(test_env_overrides)
{
    setenv("EUNHA_CPU_THREADS", "7", 1);
    setenv("EUNHA_ADMIN_TOKEN", "from-env", 1);
    setenv("EUNHA_DATABASE_URL", "postgresql://env@h/db", 1);
    setenv("EUNHA_REDIS_URL", "redis://env:1/0", 1);
    struct eu_config cfg;
    char err[256];
    int rc =
        load_text(&cfg, "[server]\ncpu_threads = 3\n[admin]\ntoken = \"file\"\n", err, sizeof err);
    ck_assert_msg(rc == 0, "%s", err);
    ck_assert_int_eq(cfg.cpu_threads, 7);
    ck_assert_str_eq(cfg.admin_token, "from-env");
    ck_assert_str_eq(cfg.database_url, "postgresql://env@h/db");
    ck_assert_str_eq(cfg.redis_url, "redis://env:1/0");
    eu_config_release(&cfg);

    setenv("EUNHA_CPU_THREADS", "lots", 1);
    ck_assert_int_eq(load_text(&cfg, "", err, sizeof err), -1);
    ck_assert_str_eq(err, "EUNHA_CPU_THREADS: key 'server.cpu_threads' must be an integer");
    eu_config_release(&cfg);
    setenv("EUNHA_CPU_THREADS", "65", 1);
    ck_assert_int_eq(load_text(&cfg, "", err, sizeof err), -1);
    ck_assert_str_eq(err, "EUNHA_CPU_THREADS: key 'server.cpu_threads' must be between 1 and 64");
    eu_config_release(&cfg);

    /* empty means unset */
    setenv("EUNHA_CPU_THREADS", "", 1);
    ck_assert_int_eq(load_text(&cfg, "", err, sizeof err), 0);
    ck_assert_int_eq(cfg.cpu_threads, 2);
    eu_config_release(&cfg);
    clear_env();
    remove_temps();
}
END_TEST

struct bad_case {
    const char *text;
    const char *err; /* after "PATH:" */
};

static const struct bad_case bad_cases[] = {
    {"[server]\nlisten = \"x:1\"\nlistne = \"y\"\n", "3: unknown key 'server.listne'"},
    {"[sever]\ncpu_threads = 1\n", "2: unknown key 'sever.cpu_threads'"},
    {"\n[server]\ncpu_threads = \"4\"\n", "3: key 'server.cpu_threads' must be an integer"},
    {"[server]\ncpu_threads = 0\n", "2: key 'server.cpu_threads' must be between 1 and 64"},
    {"[server]\ncpu_threads = 65\n", "2: key 'server.cpu_threads' must be between 1 and 64"},
    {"[server]\nlisten = 8080\n", "2: key 'server.listen' must be a string"},
    {"[server]\nlisten = \"8080\"\n",
     "2: key 'server.listen' must be \"host:port\" (IPv6 in brackets)"},
    {"[server]\nadmin_listen = \"h:99999\"\n",
     "2: key 'server.admin_listen' must be \"host:port\" (IPv6 in brackets)"},
    {"[server]\nscheme = \"ftp\"\n", "2: key 'server.scheme' must be \"http\" or \"https\""},
    {"[database]\ncreate_strategy = \"fast\"\n",
     "2: key 'database.create_strategy' must be \"wal_log\" or \"file_copy\""},
    {"[server]\ntrusted_proxies = \"10.0.0.1\"\n",
     "2: key 'server.trusted_proxies' must be an array of strings"},
    {"[server]\ntrusted_proxies = [1]\n",
     "2: key 'server.trusted_proxies' must be an array of strings"},
    {"[server]\ntrusted_proxies = [\"10.0.0.1\", \"10.0.0.0/40\"]\n",
     "2: key 'server.trusted_proxies' must hold IP addresses or CIDR ranges: '10.0.0.0/40'"},
    {"[server]\ntrusted_proxies = [\"proxy.example\"]\n",
     "2: key 'server.trusted_proxies' must hold IP addresses or CIDR ranges: 'proxy.example'"},
    {"[database_pool]\nmax_connections = 101\n",
     "2: key 'database_pool.max_connections' must be between 1 and 100"},
    {"[database_pool]\nmax_connections = 0\n",
     "2: key 'database_pool.max_connections' must be between 1 and 100"},
    {"[database_pool]\nmin_connections = -1\n",
     "2: key 'database_pool.min_connections' must be between 0 and 100"},
    {"[database_pool]\nmin_connections = 3\n",
     "2: key 'database_pool.min_connections' (3) must not exceed "
     "'database_pool.max_connections' (2)"},
    {"[database_pool]\nacquire_timeout_seconds = 0\n",
     "2: key 'database_pool.acquire_timeout_seconds' must be at least 1"},
    {"[database_pool]\nidle_timeout_seconds = 0\n",
     "2: key 'database_pool.idle_timeout_seconds' must be at least 1"},
    {"[limits]\nrequest_timeout_seconds = -5\n",
     "2: key 'limits.request_timeout_seconds' must be at least 1"},
    {"[limits]\nmax_body_bytes = 0\n", "2: key 'limits.max_body_bytes' must be at least 1"},
    {"[workers]\nqueue_idle_poll_seconds = 0\n",
     "2: key 'workers.queue_idle_poll_seconds' must be at least 1"},
    {"[workers]\nmax_running_jobs = 0\n",
     "2: key 'workers.max_running_jobs' must be between 1 and 1000"},
    {"[workers]\nsuspended_retention_seconds = -1\n",
     "2: key 'workers.suspended_retention_seconds' must be at least 0"},
    {"[workers]\npoll_min_expires_in_seconds = 0\n",
     "2: key 'workers.poll_min_expires_in_seconds' must be between 1 and 2629746"},
    {"[log]\nlevel = \"verbose\"\n",
     "2: key 'log.level' must be one of \"debug\", \"info\", \"warn\", \"error\""},
    {"[database]\nurl = \"\"\n", "2: key 'database.url' must not be empty"},
    /* 33 characters: the tenant key buffers are sized for 32. */
    {"[redis]\nprefix = \"eunha-production-cluster-number-7\"\n",
     "2: key 'redis.prefix' must be 1 to 32 characters long"},
    {"[redis]\nprefix = \"\"\n", "2: key 'redis.prefix' must be 1 to 32 characters long"},
    {"[redis]\nprefix = \"eu*\"\n",
     "2: key 'redis.prefix' may hold only letters, digits, '_', '.', '-' and ':'"},
    {"[redis]\nprefix = \"a{b}\"\n",
     "2: key 'redis.prefix' may hold only letters, digits, '_', '.', '-' and ':'"},
    {"[admin]\ntoken = \"\"\n", "2: key 'admin.token' must not be empty"},
    {"[admin]\ntoken = \"a\"\ntoken_file = \"/x\"\n",
     "3: set either 'admin.token' or 'admin.token_file', not both"},
    {"[admin]\ntoken = 5\n", "2: key 'admin.token' must be a string"},
    {"[federation]\nallow_http = \"yes\"\n",
     "2: key 'federation.allow_http' must be true or false"},
    {"[federation]\nallow_private_addresses = 1\n",
     "2: key 'federation.allow_private_addresses' must be true or false"},
    {"[federation]\nmax_requests = 0\n",
     "2: key 'federation.max_requests' must be between 1 and 100000"},
    {"[federation]\nmax_response_bytes = 100\n",
     "2: key 'federation.max_response_bytes' must be between 1024 and 1073741824"},
    {"[federation]\nmax_redirects = 21\n",
     "2: key 'federation.max_redirects' must be between 0 and 20"},
    {"[server]\ncpu_threads = 1.5\n", "2: floats are not supported"},
    {"[server]\n[server]\n", "2: table 'server' is defined twice"},
    {"[server]\nlisten = \"a:1\"\nlisten = \"b:2\"\n", "3: key 'server.listen' is already defined"},
};

START_TEST(test_bad)
{
    struct eu_config cfg;
    char err[256];
    eu_config_init_defaults(&cfg);
    const char *path = write_temp(bad_cases[_i].text);
    ck_assert_int_eq(eu_config_load(&cfg, path, err, sizeof err), -1);
    char want[512];
    snprintf(want, sizeof want, "%s:%s", path, bad_cases[_i].err);
    ck_assert_str_eq(err, want);
    /* a failed load leaves the config as it was */
    ck_assert_int_eq(cfg.cpu_threads, 2);
    ck_assert_str_eq(cfg.listen, "127.0.0.1:8080");
    ck_assert_int_eq(cfg.pool_min_connections, 0);
    eu_config_release(&cfg);
    remove_temps();
}
END_TEST

START_TEST(test_missing_file)
{
    struct eu_config cfg;
    char err[256];
    eu_config_init_defaults(&cfg);
    ck_assert_int_eq(eu_config_load(&cfg, "/nonexistent/eunha.toml", err, sizeof err), -1);
    ck_assert_str_eq(err, "/nonexistent/eunha.toml: cannot read config: No such file or "
                          "directory");
    eu_config_release(&cfg);
}
END_TEST

START_TEST(test_token)
{
    struct eu_config cfg;
    char err[256];
    ck_assert_msg(load_text(&cfg, "[admin]\ntoken = \"s3cret\"\n", err, sizeof err) == 0, "%s",
                  err);
    ck_assert_str_eq(cfg.admin_token, "s3cret");
    eu_config_release(&cfg);
    remove_temps();
}
END_TEST

START_TEST(test_token_file)
{
    struct eu_config cfg;
    char err[512];
    const char *token_path = write_temp("tok-from-file\r\n");
    char text[256];
    snprintf(text, sizeof text, "[admin]\ntoken_file = \"%s\"\n", token_path);
    ck_assert_msg(load_text(&cfg, text, err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq(cfg.admin_token, "tok-from-file");
    eu_config_release(&cfg);

    /* relative to the config file's directory: both are in /tmp */
    snprintf(text, sizeof text, "[admin]\ntoken_file = \"%s\"\n", token_path + 5);
    ck_assert_msg(load_text(&cfg, text, err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq(cfg.admin_token, "tok-from-file");
    eu_config_release(&cfg);

    const char *empty = write_temp("\n");
    snprintf(text, sizeof text, "\n[admin]\ntoken_file = \"%s\"\n", empty);
    ck_assert_int_eq(load_text(&cfg, text, err, sizeof err), -1);
    char want[512];
    snprintf(want, sizeof want, "%s:3: admin.token_file '%s' holds no usable token",
             paths[n_paths - 1], empty);
    ck_assert_str_eq(err, want);
    eu_config_release(&cfg);

    ck_assert_int_eq(
        load_text(&cfg, "[admin]\ntoken_file = \"/nonexistent/tok\"\n", err, sizeof err), -1);
    snprintf(want, sizeof want,
             "%s:2: cannot read admin.token_file '/nonexistent/tok': No such file or directory",
             paths[n_paths - 1]);
    ck_assert_str_eq(err, want);
    eu_config_release(&cfg);
    remove_temps();
}
END_TEST

/* A relative archive_dir, the default one too, is taken from the config
 * file's directory; an absolute one is kept. */
START_TEST(test_archive_dir)
{
    struct eu_config cfg;
    char err[256];
    ck_assert_msg(load_text(&cfg, "# defaults\n", err, sizeof err) == 0, "%s", err);
    ck_assert_str_eq(cfg.archive_dir, "/tmp/archives");
    eu_config_release(&cfg);
    ck_assert_msg(load_text(&cfg, "[admin]\narchive_dir = \"x/y\"\n", err, sizeof err) == 0, "%s",
                  err);
    ck_assert_str_eq(cfg.archive_dir, "/tmp/x/y");
    eu_config_release(&cfg);
    ck_assert_msg(load_text(&cfg, "[admin]\narchive_dir = \"/srv/a\"\n", err, sizeof err) == 0,
                  "%s", err);
    ck_assert_str_eq(cfg.archive_dir, "/srv/a");
    eu_config_release(&cfg);
    ck_assert_int_eq(load_text(&cfg, "[admin]\narchive_dir = \"\"\n", err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "key 'admin.archive_dir' must not be empty"));
    eu_config_release(&cfg); /* a failed load leaves the defaults */
    remove_temps();
}
END_TEST

/* Returns what eu_config_print writes, in a buffer the caller frees. */
static char *
print_to_string(const struct eu_config *cfg)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    eu_config_print(cfg, f);
    fclose(f);
    return buf;
}

START_TEST(test_print_masks_secrets)
{
    struct eu_config cfg;
    char err[256];
    const char *text = "[admin]\ntoken = \"TOPSECRET\"\n"
                       "[database]\nurl = \"postgresql://eunha:pa55word@db:5432/eunha\"\n"
                       "[redis]\nurl = \"redis://:redispass@r:6379/0\"\n"
                       "[server]\ntrusted_proxies = [\"10.0.0.0/8\"]\n";
    ck_assert_msg(load_text(&cfg, text, err, sizeof err) == 0, "%s", err);
    char *out = print_to_string(&cfg);
    ck_assert_ptr_null(strstr(out, "TOPSECRET"));
    ck_assert_ptr_null(strstr(out, "pa55word"));
    ck_assert_ptr_null(strstr(out, "redispass"));
    ck_assert_ptr_nonnull(strstr(out, "token = \"********\"\n"));
    ck_assert_ptr_nonnull(strstr(out, "url = \"postgresql://eunha:********@db:5432/eunha\"\n"));
    ck_assert_ptr_nonnull(strstr(out, "url = \"redis://:********@r:6379/0\"\n"));
    ck_assert_ptr_nonnull(strstr(out, "trusted_proxies = [\"10.0.0.0/8\"]\n"));
    ck_assert_ptr_nonnull(strstr(out, "[database_pool]\nmax_connections = 2\n"));
    ck_assert_ptr_nonnull(strstr(out, "max_body_bytes = 1048576\nmax_upload_bytes = 17825792\n"));
    ck_assert_ptr_nonnull(strstr(out, "[log]\nlevel = \"info\"\n"));
    ck_assert_ptr_nonnull(strstr(out, "archive_dir = \"/tmp/archives\"\n"));
    free(out);
    eu_config_release(&cfg);
    remove_temps();
}
END_TEST

START_TEST(test_print_masks_query_password)
{
    struct eu_config cfg;
    eu_config_init_defaults(&cfg);
    free(cfg.database_url);
    cfg.database_url = strdup("postgresql://db/eunha?user=u&password=hunter2&sslmode=require");
    free(cfg.redis_url);
    cfg.redis_url = strdup("redis://user:p@ss@r:6379/0");
    char *out = print_to_string(&cfg);
    ck_assert_ptr_null(strstr(out, "hunter2"));
    ck_assert_ptr_nonnull(
        strstr(out, "postgresql://db/eunha?user=u&password=********&sslmode=require"));
    ck_assert_ptr_nonnull(strstr(out, "redis://user:********@r:6379/0"));
    ck_assert_ptr_nonnull(strstr(out, "# token is not set"));
    free(out);
    eu_config_release(&cfg);
}
END_TEST

START_TEST(test_print_round_trips)
{
    /* check-config output is itself a valid config (with the mask as token). */
    struct eu_config cfg;
    char err[256];
    eu_config_init_defaults(&cfg);
    char *out = print_to_string(&cfg);
    eu_config_release(&cfg);
    ck_assert_msg(load_text(&cfg, out, err, sizeof err) == 0, "%s", err);
    free(out);
    eu_config_release(&cfg);
    remove_temps();
}
END_TEST

static Suite *
config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("load");
    tcase_add_checked_fixture(tc, clear_env, NULL);
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_empty_file_keeps_defaults);
    tcase_add_test(tc, test_federation);
    tcase_add_test(tc, test_file_overrides);
    tcase_add_test(tc, test_env_overrides);
    tcase_add_test(tc, test_missing_file);
    tcase_add_test(tc, test_archive_dir);
    suite_add_tcase(s, tc);
    tc = tcase_create("errors");
    tcase_add_checked_fixture(tc, clear_env, NULL);
    tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof bad_cases / sizeof bad_cases[0]));
    suite_add_tcase(s, tc);
    tc = tcase_create("token");
    tcase_add_checked_fixture(tc, clear_env, NULL);
    tcase_add_test(tc, test_token);
    tcase_add_test(tc, test_token_file);
    suite_add_tcase(s, tc);
    tc = tcase_create("print");
    tcase_add_checked_fixture(tc, clear_env, NULL);
    tcase_add_test(tc, test_print_masks_secrets);
    tcase_add_test(tc, test_print_masks_query_password);
    tcase_add_test(tc, test_print_round_trips);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(config_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
