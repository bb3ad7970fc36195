/*
 * Loading eunha.toml. Every key the server knows is described once in
 * `keys[]` below (its type, where it lives in struct eu_config and the range
 * it must be in), so reading, validating and reporting errors are loops over
 * that table rather than a function per key. Unknown keys are errors: a typo
 * in an operator's file should stop the server, not be ignored.
 *
 * A load works on a copy of the config and only replaces the caller's on
 * success, so a bad file on SIGHUP leaves the running configuration intact.
 */
#include "eunha/config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/log.h"
#include "eunha/mem.h"
#include "eunha/net.h"
#include "eunha/toml.h"

/* eunha.toml is a few dozen lines; anything this big is the wrong file. */
#define CONFIG_MAX_FILE_BYTES (1024 * 1024)
#define MASK "********"

enum key_type {
    KEY_STRING,
    KEY_INT,    /* int field */
    KEY_SIZE,   /* size_t field */
    KEY_BOOL,   /* bool field */
    KEY_LIST,   /* char ** + count, NULL-terminated */
    KEY_SECRET, /* [admin] token / token_file: resolved after the loop */
};

/* Extra checks on string values; return a message fragment or NULL. */
typedef const char *(*check_string_cb)(const char *value);

struct key {
    const char *name;
    enum key_type type;
    size_t offset;
    int64_t min, max; /* KEY_INT, KEY_SIZE */
    check_string_cb check;
    const char *env; /* environment variable that overrides it, or NULL */
};

static const char *check_hostport(const char *v);
static const char *check_scheme(const char *v);
static const char *check_nonempty(const char *v);
static const char *check_create_strategy(const char *v);
static const char *check_redis_prefix(const char *v);
static const char *check_log_level(const char *v);
static const char *check_proxy(const char *v);
static const char *check_host_map(const char *v);
static const char *check_storage(const char *v);
static const char *check_s3_url(const char *v);
static const char *check_smtp_url(const char *v);
static const char *check_mail_from(const char *v);
static const char *check_confirm_without_mail(const char *v);

#define F(field) offsetof(struct eu_config, field)

/* jansson cannot nest deeper than 2048 however it is configured. */
static const struct key keys[] = {
    {"server.listen", KEY_STRING, F(listen), 0, 0, check_hostport, NULL},
    {"server.admin_listen", KEY_STRING, F(admin_listen), 0, 0, check_hostport, NULL},
    {"server.cpu_threads", KEY_INT, F(cpu_threads), 1, 64, NULL, "EUNHA_CPU_THREADS"},
    {"server.cpu_jobs_per_tenant", KEY_INT, F(cpu_jobs_per_tenant), 1, 100000, NULL, NULL},
    {"server.cpu_queue_max", KEY_INT, F(cpu_queue_max), 1, 1000000, NULL, NULL},
    {"server.scheme", KEY_STRING, F(scheme), 0, 0, check_scheme, NULL},
    {"server.trusted_proxies", KEY_LIST, F(trusted_proxies), 0, 0, check_proxy, NULL},
    {"admin.token", KEY_SECRET, 0, 0, 0, NULL, "EUNHA_ADMIN_TOKEN"},
    {"admin.token_file", KEY_SECRET, 0, 0, 0, NULL, NULL},
    {"admin.archive_dir", KEY_STRING, F(archive_dir), 0, 0, check_nonempty, NULL},
    {"database.url", KEY_STRING, F(database_url), 0, 0, check_nonempty, "EUNHA_DATABASE_URL"},
    {"database.template", KEY_STRING, F(database_template), 0, 0, check_nonempty, NULL},
    {"database.create_strategy", KEY_STRING, F(database_create_strategy), 0, 0,
     check_create_strategy, NULL},
    {"database.placement_connections", KEY_INT, F(placement_connections), 1, 100, NULL, NULL},
    {"database.statement_timeout_ms", KEY_INT, F(statement_timeout_ms), 0, INT_MAX, NULL, NULL},
    {"database_pool.max_connections", KEY_INT, F(pool_max_connections), 1, 100, NULL, NULL},
    {"database_pool.min_connections", KEY_INT, F(pool_min_connections), 0, 100, NULL, NULL},
    {"database_pool.acquire_timeout_seconds", KEY_INT, F(pool_acquire_timeout_s), 1, INT_MAX, NULL,
     NULL},
    {"database_pool.idle_timeout_seconds", KEY_INT, F(pool_idle_timeout_s), 1, INT_MAX, NULL, NULL},
    {"database_pool.max_total_connections", KEY_INT, F(pool_max_total), 0, 1000000, NULL, NULL},
    {"database_pool.max_connecting", KEY_INT, F(pool_max_connecting), 0, 100000, NULL, NULL},
    {"redis.url", KEY_STRING, F(redis_url), 0, 0, check_nonempty, "EUNHA_REDIS_URL"},
    {"redis.prefix", KEY_STRING, F(redis_prefix), 0, 0, check_redis_prefix, NULL},
    {"redis.command_timeout_ms", KEY_INT, F(redis_timeout_ms), 10, 600000, NULL, NULL},
    {"workers.queue_idle_poll_seconds", KEY_INT, F(queue_idle_poll_s), 1, INT_MAX, NULL, NULL},
    {"workers.max_running_jobs", KEY_INT, F(max_running_jobs), 1, 1000, NULL, NULL},
    {"workers.job_max_attempts", KEY_INT, F(job_max_attempts), 1, 100, NULL, NULL},
    {"workers.job_backoff_base_seconds", KEY_INT, F(job_backoff_base_s), 1, INT_MAX, NULL, NULL},
    {"workers.job_backoff_max_seconds", KEY_INT, F(job_backoff_max_s), 1, INT_MAX, NULL, NULL},
    {"workers.job_lock_seconds", KEY_INT, F(job_lock_s), 1, INT_MAX, NULL, NULL},
    {"workers.suspended_retention_seconds", KEY_INT, F(suspended_retention_s), 0, INT_MAX, NULL,
     NULL},
    {"workers.tenant_delete_grace_seconds", KEY_INT, F(tenant_delete_grace_s), 0, INT_MAX, NULL,
     NULL},
    {"workers.scheduled_status_min_lead_seconds", KEY_INT, F(scheduled_min_lead_s), 0, INT_MAX,
     NULL, NULL},
    {"workers.poll_min_expires_in_seconds", KEY_INT, F(poll_min_expires_s), 1, 2629746, NULL, NULL},
    {"workers.trends_refresh_seconds", KEY_INT, F(trends_refresh_s), 1, 86400, NULL, NULL},
    {"workers.trends_min_accounts", KEY_INT, F(trends_min_accounts), 1, 1000000, NULL, NULL},
    {"limits.max_body_bytes", KEY_SIZE, F(max_body_bytes), 1, INT64_MAX, NULL, NULL},
    {"limits.max_upload_bytes", KEY_SIZE, F(max_upload_bytes), 1, INT64_MAX, NULL, NULL},
    {"limits.max_header_bytes", KEY_SIZE, F(max_header_bytes), 1, INT64_MAX, NULL, NULL},
    {"limits.request_timeout_seconds", KEY_INT, F(request_timeout_s), 1, INT_MAX, NULL, NULL},
    {"limits.header_timeout_seconds", KEY_INT, F(header_timeout_s), 1, 3600, NULL, NULL},
    {"limits.request_deadline_seconds", KEY_INT, F(request_deadline_s), 1, 86400, NULL, NULL},
    {"limits.max_connections", KEY_INT, F(max_connections), 0, 10000000, NULL, NULL},
    {"limits.max_connections_per_ip", KEY_INT, F(max_connections_per_ip), 0, 10000000, NULL, NULL},
    {"limits.json_max_depth", KEY_INT, F(json_max_depth), 1, 2048, NULL, NULL},
    {"limits.stream_max_output_bytes", KEY_SIZE, F(stream_max_output_bytes), 1024, INT64_MAX, NULL,
     NULL},
    {"limits.max_streams", KEY_INT, F(max_streams), 0, 10000000, NULL, NULL},
    {"limits.max_streams_per_tenant", KEY_INT, F(max_streams_per_tenant), 0, 10000000, NULL, NULL},
    {"limits.stream_heartbeat_seconds", KEY_INT, F(stream_heartbeat_s), 1, 3600, NULL, NULL},
    {"limits.stream_max_renders", KEY_INT, F(stream_max_renders), 1, 10000000, NULL, NULL},
    {"limits.api_requests_per_5min", KEY_INT, F(api_requests_per_5min), 0, INT_MAX, NULL, NULL},
    {"limits.registrations_per_30min", KEY_INT, F(registrations_per_30min), 0, INT_MAX, NULL, NULL},
    {"limits.sign_in_attempts_per_ip_per_5min", KEY_INT, F(sign_ins_per_ip_per_5min), 0, INT_MAX,
     NULL, NULL},
    {"limits.sign_in_attempts_per_login_per_hour", KEY_INT, F(sign_ins_per_login_per_hour), 0,
     INT_MAX, NULL, NULL},
    {"tenants.dormant_after_seconds", KEY_INT, F(dormant_after_s), 0, INT_MAX, NULL, NULL},
    {"tenants.render_cache_entries", KEY_INT, F(render_cache_entries), 0, 1000000, NULL, NULL},
    {"log.level", KEY_STRING, F(log_level), 0, 0, check_log_level, NULL},
    /* [media.s3]: the S3 file store (src/media/store_s3.c) */
    {"media.s3.endpoint", KEY_STRING, F(s3_endpoint), 0, 0, check_s3_url, NULL},
    {"media.s3.bucket", KEY_STRING, F(s3_bucket), 0, 0, NULL, NULL},
    {"media.s3.region", KEY_STRING, F(s3_region), 0, 0, NULL, NULL},
    {"media.s3.access_key", KEY_STRING, F(s3_access_key), 0, 0, NULL, NULL},
    {"media.s3.secret_key", KEY_STRING, F(s3_secret_key), 0, 0, NULL, "EUNHA_S3_SECRET_KEY"},
    {"media.s3.public_url", KEY_STRING, F(s3_public_url), 0, 0, check_s3_url, NULL},
    {"media.s3.path_style", KEY_BOOL, F(s3_path_style), 0, 0, NULL, NULL},
    /* [mail]: the SMTP client (src/outbound/mail.c) */
    {"mail.smtp_url", KEY_STRING, F(mail_smtp_url), 0, 0, check_smtp_url, NULL},
    {"mail.starttls", KEY_BOOL, F(mail_starttls), 0, 0, NULL, NULL},
    {"mail.user", KEY_STRING, F(mail_user), 0, 0, NULL, NULL},
    {"mail.password", KEY_STRING, F(mail_password), 0, 0, NULL, "EUNHA_MAIL_PASSWORD"},
    {"mail.from", KEY_STRING, F(mail_from), 0, 0, check_mail_from, NULL},
    {"mail.confirm_without_mail", KEY_STRING, F(mail_confirm_without_mail), 0, 0,
     check_confirm_without_mail, NULL},
    /* [secrets]: the key that seals secrets at rest (src/core/secrets.c) */
    {"secrets.key_file", KEY_STRING, F(secrets_key_file), 0, 0, check_nonempty, NULL},
    /* [federation]: the outbound HTTP client */
    {"federation.allow_private_addresses", KEY_BOOL, F(fed_allow_private_addresses), 0, 0, NULL,
     NULL},
    {"federation.allow_http", KEY_BOOL, F(fed_allow_http), 0, 0, NULL, NULL},
    {"federation.max_requests", KEY_INT, F(fed_max_requests), 1, 100000, NULL, NULL},
    {"federation.max_requests_per_host", KEY_INT, F(fed_max_requests_per_host), 1, 100000, NULL,
     NULL},
    {"federation.max_queued_per_tenant", KEY_INT, F(fed_max_queued_per_tenant), 1, 1000000, NULL,
     NULL},
    {"federation.connect_timeout_seconds", KEY_INT, F(fed_connect_timeout_s), 1, 3600, NULL, NULL},
    {"federation.request_timeout_seconds", KEY_INT, F(fed_request_timeout_s), 1, 86400, NULL, NULL},
    {"federation.max_response_bytes", KEY_SIZE, F(fed_max_response_bytes), 1024, 1073741824, NULL,
     NULL},
    {"federation.max_redirects", KEY_INT, F(fed_max_redirects), 0, 20, NULL, NULL},
    {"federation.host_unavailable_after_seconds", KEY_INT, F(fed_host_unavailable_after_s), 1,
     INT_MAX, NULL, NULL},
    {"federation.hosts", KEY_LIST, F(fed_hosts), 0, 0, check_host_map, NULL},
    {"federation.inbox_max_queued_per_host", KEY_INT, F(fed_inbox_max_queued_per_host), 1, 1000000,
     NULL, NULL},
    {"federation.inbox_max_queued_per_host_process", KEY_INT,
     F(fed_inbox_max_queued_per_host_process), 1, 10000000, NULL, NULL},
    {"federation.poll_update_delay_seconds", KEY_INT, F(fed_poll_update_delay_s), 0, 86400, NULL,
     NULL},
    /* [media] */
    {"media.storage", KEY_STRING, F(media_storage), 0, 0, check_storage, NULL},
    {"media.root", KEY_STRING, F(media_root), 0, 0, check_nonempty, NULL},
    {"media.image_size_limit", KEY_SIZE, F(media_image_size_limit), 1024, INT64_MAX, NULL, NULL},
    {"media.video_size_limit", KEY_SIZE, F(media_video_size_limit), 1024, INT64_MAX, NULL, NULL},
    {"media.image_matrix_limit", KEY_SIZE, F(media_image_matrix_limit), 1, 1000000000, NULL, NULL},
    {"media.preview_max_side", KEY_INT, F(media_preview_max_side), 16, 4096, NULL, NULL},
    {"media.preview_quality", KEY_INT, F(media_preview_quality), 1, 100, NULL, NULL},
    {"media.original_quality", KEY_INT, F(media_original_quality), 1, 100, NULL, NULL},
    {"media.cpu_budget_ms", KEY_INT, F(media_cpu_budget_ms), 0, INT_MAX, NULL, NULL},
    {"media.process_inline_bytes", KEY_SIZE, F(media_process_inline_bytes), 0, INT64_MAX, NULL,
     NULL},
    {"media.default_quota_bytes", KEY_SIZE, F(media_default_quota_bytes), 0, INT64_MAX, NULL, NULL},
    {"media.description_limit", KEY_INT, F(media_description_limit), 1, 100000, NULL, NULL},
};

#define N_KEYS (sizeof keys / sizeof keys[0])

/* Where a key's value came from, for error messages. */
struct origin {
    int line;        /* >0: line in the file */
    const char *env; /* set when an environment variable overrode it */
};

struct load {
    const char *path;
    struct eu_config *cfg;
    struct origin origin[N_KEYS];
    char *err;
    size_t errlen;
};

static const char *
check_hostport(const char *v)
{
    char host[256];
    int port;
    return eu_hostport_split(v, host, sizeof host, &port) == 0
               ? NULL
               : "must be \"host:port\" (IPv6 in brackets)";
}

static const char *
check_scheme(const char *v)
{
    return strcmp(v, "http") == 0 || strcmp(v, "https") == 0 ? NULL
                                                             : "must be \"http\" or \"https\"";
}

static const char *
check_storage(const char *v)
{
    return strcmp(v, "local") == 0 || strcmp(v, "s3") == 0 ? NULL : "must be \"local\" or \"s3\"";
}

static const char *
check_nonempty(const char *v)
{
    return v[0] ? NULL : "must not be empty";
}

static const char *
check_create_strategy(const char *v)
{
    return strcmp(v, "wal_log") == 0 || strcmp(v, "file_copy") == 0
               ? NULL
               : "must be \"wal_log\" or \"file_copy\"";
}

const char *
eu_config_create_db_clause(const struct eu_config *cfg)
{
    /* No clause for the default: servers before PostgreSQL 15 know none. */
    return cfg->database_create_strategy && strcmp(cfg->database_create_strategy, "file_copy") == 0
               ? " STRATEGY FILE_COPY"
               : "";
}

/*
 * Every tenant's keys start "<prefix>:{t<ID>}:" in a fixed buffer
 * (tenant.h); a longer prefix used to be cut there, and past a point every
 * tenant got the same cut and so one namespace. The characters are held to
 * ones that are not glob syntax (purge scans and invalidation subscribe by
 * pattern) nor braces (the hash tag must stay the tenant's).
 */
static const char *
check_redis_prefix(const char *v)
{
    size_t n = strlen(v);
    _Static_assert(EU_REDIS_PREFIX_MAX == 32, "the message below names the limit");
    if (n == 0 || n > EU_REDIS_PREFIX_MAX)
        return "must be 1 to 32 characters long";
    if (strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-:") != n)
        return "may hold only letters, digits, '_', '.', '-' and ':'";
    return NULL;
}

static const char *
check_log_level(const char *v)
{
    /* The logger has its own parser, but config must stand alone so that
     * check-config works before anything else is set up. */
    static const char *const levels[] = {"debug", "info", "warn", "error"};
    for (size_t i = 0; i < 4; i++)
        if (strcmp(v, levels[i]) == 0)
            return NULL;
    return "must be one of \"debug\", \"info\", \"warn\", \"error\"";
}

static const char *
check_proxy(const char *v)
{
    /* An address matches itself exactly when it is a valid entry. */
    const char *slash = strchr(v, '/');
    char addr[64];
    size_t n = slash ? (size_t)(slash - v) : strlen(v);
    if (n == 0 || n >= sizeof addr)
        return "must hold IP addresses or CIDR ranges";
    memcpy(addr, v, n);
    addr[n] = '\0';
    char *entry = (char *)v;
    if (!eu_ip_in_list(addr, &entry, 1))
        return "must hold IP addresses or CIDR ranges";
    return NULL;
}

/* [media.s3] URLs are optional; when set they are http(s) URLs. */
static const char *
check_s3_url(const char *v)
{
    if (!v || strncmp(v, "https://", 8) == 0 || strncmp(v, "http://", 7) == 0)
        return NULL;
    return "must be an http:// or https:// URL";
}

/* [mail] smtp_url: unset, or an smtp:// or smtps:// URL. */
static const char *
check_smtp_url(const char *v)
{
    if (!v || strncmp(v, "smtp://", 7) == 0 || strncmp(v, "smtps://", 8) == 0)
        return NULL;
    return "must be an smtp:// or smtps:// URL";
}

/* [mail] from: a bare address, no display name (the tenant's title is). */
static const char *
check_mail_from(const char *v)
{
    const char *at = v ? strchr(v, '@') : NULL;
    if (!v || (at && at != v && at[1] && !strpbrk(v, " \t\r\n<>\"(),;:\\[]")))
        return NULL;
    return "must be a bare e-mail address (user@example.com)";
}

/* [mail] confirm_without_mail: who confirms a sign-up when no mail goes. */
static const char *
check_confirm_without_mail(const char *v)
{
    return !v || strcmp(v, "auto") == 0 || strcmp(v, "operator") == 0
               ? NULL
               : "must be \"auto\" or \"operator\"";
}

/* "name=address:port" with an IP literal (no lookup when the client starts). */
static const char *
check_host_map(const char *v)
{
    const char *eq = strchr(v, '=');
    char host[64];
    int port;
    if (!eq || eq == v || strcspn(v, ":/@[]") < (size_t)(eq - v) ||
        eu_hostport_split(eq + 1, host, sizeof host, &port) < 0 || port <= 0 || port > 65535)
        return "must hold \"name=address:port\" entries";
    struct in6_addr a6;
    if (inet_pton(AF_INET, host, &a6) != 1 && inet_pton(AF_INET6, host, &a6) != 1)
        return "must map names to IP addresses";
    return NULL;
}

/* A KEY_LIST field: its list, and the count right after it. */
static char ***
field_list(struct eu_config *cfg, const struct key *k, size_t **count)
{
    char ***list = (char ***)((char *)cfg + k->offset);
    *count = (size_t *)(list + 1);
    return list;
}
_Static_assert(offsetof(struct eu_config, n_trusted_proxies) ==
                   offsetof(struct eu_config, trusted_proxies) + sizeof(char **),
               "a KEY_LIST count follows its list");
_Static_assert(offsetof(struct eu_config, n_fed_hosts) ==
                   offsetof(struct eu_config, fed_hosts) + sizeof(char **),
               "a KEY_LIST count follows its list");

/* Index of a key in keys[]; only called with names from the table. */
static size_t
key_index(const char *name)
{
    size_t i = 0;
    while (i < N_KEYS - 1 && strcmp(keys[i].name, name) != 0)
        i++;
    return i;
}

static char **
field_str(struct eu_config *cfg, const struct key *k)
{
    return (char **)((char *)cfg + k->offset);
}

/* Formats "PATH:LINE: " or "ENV: " or "PATH: " then the message; returns -1. */
static int __attribute__((format(printf, 3, 4)))
load_fail(struct load *l, const struct origin *o, const char *fmt, ...)
{
    int n;
    if (o && o->env)
        n = snprintf(l->err, l->errlen, "%s: ", o->env);
    else if (o && o->line > 0)
        n = snprintf(l->err, l->errlen, "%s:%d: ", l->path, o->line);
    else
        n = snprintf(l->err, l->errlen, "%s: ", l->path);
    if (n >= 0 && (size_t)n < l->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(l->err + n, l->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static void
list_free(char **list)
{
    if (!list)
        return;
    for (char **p = list; *p; p++)
        free(*p);
    free(list);
}

void
eu_config_init_defaults(struct eu_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->listen = eu_xstrdup("127.0.0.1:8080");
    cfg->admin_listen = eu_xstrdup("127.0.0.1:9180");
    cfg->cpu_threads = 2;
    cfg->cpu_jobs_per_tenant = 4;
    cfg->cpu_queue_max = 256;
    cfg->scheme = eu_xstrdup("https");
    /* An empty list still ends in NULL so callers can always iterate it. */
    cfg->trusted_proxies = eu_xcalloc(1, sizeof *cfg->trusted_proxies);
    cfg->n_trusted_proxies = 0;
    cfg->fed_hosts = eu_xcalloc(1, sizeof *cfg->fed_hosts);
    cfg->n_fed_hosts = 0;
    cfg->admin_token = NULL;
    cfg->archive_dir = eu_xstrdup("archives");
    cfg->database_url = eu_xstrdup("postgresql://postgres@127.0.0.1:5432/eunha");
    cfg->database_template = eu_xstrdup("eunha_template");
    cfg->database_create_strategy = eu_xstrdup("wal_log");
    cfg->pool_max_connections = 2;
    cfg->pool_min_connections = 0;
    cfg->placement_connections = 4;
    cfg->statement_timeout_ms = 10000;
    cfg->pool_acquire_timeout_s = 5;
    cfg->pool_idle_timeout_s = 20;
    cfg->pool_max_total = 0;
    cfg->pool_max_connecting = 16;
    cfg->redis_url = eu_xstrdup("redis://127.0.0.1:6379/0");
    cfg->redis_prefix = eu_xstrdup("eunha");
    cfg->redis_timeout_ms = 1000;
    cfg->queue_idle_poll_s = 300;
    cfg->max_running_jobs = 8;
    cfg->job_max_attempts = 12;
    cfg->job_backoff_base_s = 15;
    cfg->job_backoff_max_s = 6 * 3600;
    cfg->job_lock_s = 60;
    cfg->suspended_retention_s = 30 * 86400;
    cfg->tenant_delete_grace_s = 3600;
    cfg->scheduled_min_lead_s = 300;
    cfg->trends_refresh_s = 600;
    cfg->trends_min_accounts = 5;
    cfg->poll_min_expires_s = 300;
    /* Every Mastodon request without a file fits in a few KiB; a body is
     * held whole in memory before its handler runs, and parsed on the loop
     * thread, so the general limit stays small. */
    cfg->max_body_bytes = 1024 * 1024;
    /* An image at [media] image_size_limit (16 MiB) with room for the rest
     * of the form; also an avatar and a header in one update_credentials. */
    cfg->max_upload_bytes = 17 * 1024 * 1024;
    cfg->max_header_bytes = 16 * 1024;
    cfg->request_timeout_s = 30;
    cfg->header_timeout_s = 10;
    cfg->request_deadline_s = 30;
    cfg->max_connections = 0;
    cfg->max_connections_per_ip = 256;
    cfg->json_max_depth = 16;
    /* Streaming: a client that reads nothing is dropped once this much is
     * waiting for it; 0 streams caps mean the connection caps only. */
    cfg->stream_max_output_bytes = 1024 * 1024;
    cfg->stream_heartbeat_s = 15;
    /* One tenant's listeners cannot take every descriptor of the process. */
    cfg->max_streams_per_tenant = 1000;
    cfg->stream_max_renders = 4096;
    cfg->api_requests_per_5min = 300;
    cfg->registrations_per_30min = 5;
    cfg->sign_ins_per_ip_per_5min = 25;
    cfg->sign_ins_per_login_per_hour = 25;
    cfg->dormant_after_s = 600;
    cfg->render_cache_entries = 4096;
    cfg->log_level = eu_xstrdup("info");
    cfg->s3_region = eu_xstrdup("us-east-1");
    cfg->fed_allow_private_addresses = false;
    cfg->fed_allow_http = false;
    /* Enough for delivery fan-out without letting outbound sockets crowd
     * out the public listener's share of RLIMIT_NOFILE. */
    cfg->fed_max_requests = 128;
    /* A few in parallel per peer, as Mastodon's per-host pool; more is
     * rude to small servers and gains little over HTTP/2 multiplexing. */
    cfg->fed_max_requests_per_host = 8;
    cfg->fed_max_queued_per_tenant = 1000;
    cfg->fed_connect_timeout_s = 10;
    cfg->fed_request_timeout_s = 30;
    /* Actor and object documents are a few KiB; Mastodon stops at 1 MiB. */
    cfg->fed_max_response_bytes = 1024 * 1024;
    cfg->fed_max_redirects = 3;
    /* Mastodon marks a domain unavailable after a week of failures. */
    cfg->fed_host_unavailable_after_s = 7 * 86400;
    /* A peer catching up after downtime sends bursts; a thousand waiting
     * is a long backlog for one tenant, and the peer retries after 429. */
    cfg->fed_inbox_max_queued_per_host = 1000;
    /* Five tenants' worth: one host flooding every tenant of a process
     * must not queue a thousand times the tenants. */
    cfg->fed_inbox_max_queued_per_host_process = 5000;
    cfg->fed_poll_update_delay_s = 180;
    cfg->media_storage = eu_xstrdup("local");
    cfg->mail_confirm_without_mail = eu_xstrdup("auto");
    cfg->secrets_key_file = eu_xstrdup("secrets.key");
    cfg->media_root = eu_xstrdup("media");
    cfg->media_image_size_limit = 16 * 1024 * 1024;
    cfg->media_video_size_limit = 99 * 1024 * 1024;
    cfg->media_image_matrix_limit = 33177600;
    cfg->media_preview_max_side = 640;
    cfg->media_preview_quality = 80;
    cfg->media_original_quality = 90;
    /* A 12-megapixel JPEG takes about a second; a decoder stuck far past
     * that is a crafted file, and it holds a CPU-pool thread. */
    cfg->media_cpu_budget_ms = 20000;
    cfg->media_process_inline_bytes = 8 * 1024 * 1024;
    cfg->media_default_quota_bytes = (size_t)1024 * 1024 * 1024;
    cfg->media_description_limit = 1500;
}

void
eu_config_release(struct eu_config *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < N_KEYS; i++)
        if (keys[i].type == KEY_STRING)
            free(*field_str(cfg, &keys[i]));
    list_free(cfg->trusted_proxies);
    list_free(cfg->fed_hosts);
    free(cfg->admin_token);
    memset(cfg, 0, sizeof *cfg);
}

/* Deep copy of src into dst; dst is overwritten without being released. */
static void
config_copy(struct eu_config *dst, const struct eu_config *src)
{
    *dst = *src;
    for (size_t i = 0; i < N_KEYS; i++)
        if (keys[i].type == KEY_STRING)
            *field_str(dst, &keys[i]) = eu_xstrdup(*field_str((struct eu_config *)src, &keys[i]));
    dst->trusted_proxies = eu_xcalloc(src->n_trusted_proxies + 1, sizeof(char *));
    for (size_t i = 0; i < src->n_trusted_proxies; i++)
        dst->trusted_proxies[i] = eu_xstrdup(src->trusted_proxies[i]);
    dst->fed_hosts = eu_xcalloc(src->n_fed_hosts + 1, sizeof(char *));
    for (size_t i = 0; i < src->n_fed_hosts; i++)
        dst->fed_hosts[i] = eu_xstrdup(src->fed_hosts[i]);
    dst->admin_token = eu_xstrdup(src->admin_token);
}

/* Reads a whole file into a NUL-terminated buffer the caller frees. */
static char *
read_file(const char *path, size_t *len, char *why, size_t whylen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(why, whylen, "%s", strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = eu_xmalloc(cap);
    for (;;) {
        if (n + 1 >= cap) {
            if (cap > CONFIG_MAX_FILE_BYTES) {
                snprintf(why, whylen, "file is larger than %d bytes", CONFIG_MAX_FILE_BYTES);
                goto fail_read;
            }
            cap *= 2;
            buf = eu_xrealloc(buf, cap);
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) {
                snprintf(why, whylen, "%s", strerror(errno));
                goto fail_read;
            }
            break;
        }
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;

fail_read:
    fclose(f);
    free(buf);
    return NULL;
}

/* A relative token_file or archive_dir is taken from the config file's
 * directory, so a config and its files can move together whatever the
 * working directory. */
static char *
resolve_path(const char *config_path, const char *file)
{
    const char *slash = strrchr(config_path, '/');
    if (file[0] == '/' || !slash)
        return eu_xstrdup(file);
    return eu_xasprintf("%.*s/%s", (int)(slash - config_path), config_path, file);
}

static const char *
type_name(enum key_type t)
{
    switch (t) {
    case KEY_INT:
    case KEY_SIZE:
        return "an integer";
    case KEY_LIST:
        return "an array of strings";
    case KEY_BOOL:
        return "true or false";
    default:
        return "a string";
    }
}

/* Stores one TOML value into the config after checking its type and range. */
static int
apply_value(struct load *l, size_t idx, const struct eu_toml_value *v, const char **token,
            const char **token_file)
{
    const struct key *k = &keys[idx];
    const struct origin *o = &l->origin[idx];
    struct eu_config *cfg = l->cfg;
    bool ok;
    switch (k->type) {
    case KEY_INT:
    case KEY_SIZE:
        ok = v->type == EU_TOML_INTEGER;
        break;
    case KEY_BOOL:
        ok = v->type == EU_TOML_BOOLEAN;
        break;
    case KEY_LIST:
        ok = v->type == EU_TOML_ARRAY;
        for (size_t i = 0; ok && i < v->u.array.n; i++)
            ok = v->u.array.items[i].type == EU_TOML_STRING;
        break;
    default:
        ok = v->type == EU_TOML_STRING;
        break;
    }
    if (!ok)
        return load_fail(l, o, "key '%s' must be %s", k->name, type_name(k->type));

    switch (k->type) {
    case KEY_INT:
    case KEY_SIZE:
        if (v->u.i < k->min || v->u.i > k->max) {
            if (k->max == INT_MAX || k->max == INT64_MAX)
                return load_fail(l, o, "key '%s' must be at least %lld", k->name,
                                 (long long)k->min);
            return load_fail(l, o, "key '%s' must be between %lld and %lld", k->name,
                             (long long)k->min, (long long)k->max);
        }
        if (k->type == KEY_INT)
            *(int *)((char *)cfg + k->offset) = (int)v->u.i;
        else
            *(size_t *)((char *)cfg + k->offset) = (size_t)v->u.i;
        return 0;
    case KEY_STRING: {
        char **field = field_str(cfg, k);
        free(*field);
        *field = eu_xstrdup(v->u.s);
        return 0;
    }
    case KEY_BOOL:
        *(bool *)((char *)cfg + k->offset) = v->u.b;
        return 0;
    case KEY_LIST: {
        char **list = eu_xcalloc(v->u.array.n + 1, sizeof *list);
        for (size_t i = 0; i < v->u.array.n; i++)
            list[i] = eu_xstrdup(v->u.array.items[i].u.s);
        size_t *count;
        char ***field = field_list(cfg, k, &count);
        list_free(*field);
        *field = list;
        *count = v->u.array.n;
        return 0;
    }
    case KEY_SECRET:
        if (strcmp(k->name, "admin.token") == 0)
            *token = v->u.s;
        else
            *token_file = v->u.s;
        return 0;
    }
    return 0;
}

static int
read_token_file(struct load *l, const char *file)
{
    const struct origin *o = &l->origin[key_index("admin.token_file")];
    char *path = resolve_path(l->path, file);
    char why[128];
    size_t len;
    char *text = read_file(path, &len, why, sizeof why);
    if (!text) {
        load_fail(l, o, "cannot read admin.token_file '%s': %s", path, why);
        free(path);
        return -1;
    }
    /* Editors and `echo` add a final newline that is not part of the token. */
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
        text[--len] = '\0';
    if (len == 0 || strlen(text) != len) {
        load_fail(l, o, "admin.token_file '%s' holds no usable token", path);
        free(text);
        free(path);
        return -1;
    }
    free(path);
    free(l->cfg->admin_token);
    l->cfg->admin_token = text;
    return 0;
}

static int
apply_env(struct load *l)
{
    for (size_t i = 0; i < N_KEYS; i++) {
        const struct key *k = &keys[i];
        const char *v = k->env ? getenv(k->env) : NULL;
        /* An empty variable counts as unset, as `EUNHA_X= eunha serve` means. */
        if (!v || !v[0])
            continue;
        l->origin[i].env = k->env;
        l->origin[i].line = 0;
        if (k->type == KEY_INT) {
            char *end;
            errno = 0;
            long n = strtol(v, &end, 10);
            if (errno || *end || end == v || n < INT_MIN || n > INT_MAX)
                return load_fail(l, &l->origin[i], "key '%s' must be an integer", k->name);
            struct eu_toml_value tv = {.type = EU_TOML_INTEGER, .u.i = n};
            if (apply_value(l, i, &tv, NULL, NULL) < 0)
                return -1;
        } else if (k->type == KEY_SECRET) {
            free(l->cfg->admin_token);
            l->cfg->admin_token = eu_xstrdup(v);
        } else {
            char **field = field_str(l->cfg, k);
            free(*field);
            *field = eu_xstrdup(v);
        }
    }
    return 0;
}

/* Checks what the type and range checks in apply_value cannot see: string
 * contents, list entries and relations between keys. */
static int
validate(struct load *l)
{
    struct eu_config *cfg = l->cfg;
    for (size_t i = 0; i < N_KEYS; i++) {
        const struct key *k = &keys[i];
        if (!k->check)
            continue;
        if (k->type == KEY_STRING) {
            const char *why = k->check(*field_str(cfg, k));
            if (why)
                return load_fail(l, &l->origin[i], "key '%s' %s", k->name, why);
        } else if (k->type == KEY_LIST) {
            size_t *count;
            char **list = *field_list(cfg, k, &count);
            for (size_t j = 0; j < *count; j++) {
                const char *why = k->check(list[j]);
                if (why)
                    return load_fail(l, &l->origin[i], "key '%s' %s: '%s'", k->name, why, list[j]);
            }
        }
    }
    if (cfg->pool_min_connections > cfg->pool_max_connections) {
        /* Blame whichever of the two the file set, min first. */
        const struct origin *o = &l->origin[key_index("database_pool.min_connections")];
        if (o->line == 0)
            o = &l->origin[key_index("database_pool.max_connections")];
        return load_fail(l, o,
                         "key 'database_pool.min_connections' (%d) must not exceed "
                         "'database_pool.max_connections' (%d)",
                         cfg->pool_min_connections, cfg->pool_max_connections);
    }
    return 0;
}

int
eu_config_load(struct eu_config *cfg, const char *path, char *err, size_t errlen)
{
    char dummy[1];
    if (!err || errlen == 0) {
        err = dummy;
        errlen = sizeof dummy;
    }
    err[0] = '\0';

    struct eu_config tmp;
    config_copy(&tmp, cfg);
    struct load l = {.path = path, .cfg = &tmp, .err = err, .errlen = errlen};
    struct eu_toml_doc *doc = NULL;
    char why[256];
    size_t len;
    char *text = read_file(path, &len, why, sizeof why);
    if (!text) {
        snprintf(err, errlen, "%s: cannot read config: %s", path, why);
        goto fail_tmp;
    }
    if (eu_toml_parse(text, len, &doc, why, sizeof why) < 0) {
        /* The reader says "line N: ..."; editors and compilers say FILE:N:. */
        int line = 0, off = 0;
        if (sscanf(why, "line %d: %n", &line, &off) == 1 && off > 0)
            snprintf(err, errlen, "%s:%d: %s", path, line, why + off);
        else
            snprintf(err, errlen, "%s: %s", path, why);
        goto fail_text;
    }

    const char *token = NULL, *token_file = NULL;
    for (size_t e = 0; e < doc->n; e++) {
        const struct eu_toml_entry *ent = &doc->entries[e];
        size_t i;
        for (i = 0; i < N_KEYS; i++)
            if (strcmp(keys[i].name, ent->key) == 0)
                break;
        if (i == N_KEYS) {
            struct origin o = {.line = ent->value.line};
            load_fail(&l, &o, "unknown key '%s'", ent->key);
            goto fail_doc;
        }
        l.origin[i].line = ent->value.line;
        if (apply_value(&l, i, &ent->value, &token, &token_file) < 0)
            goto fail_doc;
    }

    if (token && token_file) {
        load_fail(&l, &l.origin[key_index("admin.token_file")],
                  "set either 'admin.token' or 'admin.token_file', not both");
        goto fail_doc;
    }
    if (token) {
        if (!token[0]) {
            load_fail(&l, &l.origin[key_index("admin.token")],
                      "key 'admin.token' must not be empty");
            goto fail_doc;
        }
        free(tmp.admin_token);
        tmp.admin_token = eu_xstrdup(token);
    } else if (token_file && read_token_file(&l, token_file) < 0) {
        goto fail_doc;
    }

    if (apply_env(&l) < 0 || validate(&l) < 0)
        goto fail_doc;
    if (tmp.archive_dir[0] != '/') {
        char *dir = resolve_path(path, tmp.archive_dir);
        free(tmp.archive_dir);
        tmp.archive_dir = dir;
    }
    if (tmp.media_root[0] != '/') {
        char *dir = resolve_path(path, tmp.media_root);
        free(tmp.media_root);
        tmp.media_root = dir;
    }
    if (tmp.secrets_key_file[0] != '/') {
        char *file = resolve_path(path, tmp.secrets_key_file);
        free(tmp.secrets_key_file);
        tmp.secrets_key_file = file;
    }

    eu_toml_doc_free(doc);
    free(text);
    eu_config_release(cfg);
    *cfg = tmp;
    return 0;

fail_doc:
    eu_toml_doc_free(doc);
fail_text:
    free(text);
fail_tmp:
    eu_config_release(&tmp);
    return -1;
}

/* --- printing --------------------------------------------------------------- */

static void
print_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c == '\n')
            fputs("\\n", out);
        else if (*c == '\t')
            fputs("\\t", out);
        else if (*c < 0x20 || *c == 0x7f)
            fprintf(out, "\\u%04x", *c);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

void
eu_config_print(const struct eu_config *cfg, FILE *out)
{
    char *db = eu_log_redact_url(cfg->database_url);
    char *redis = eu_log_redact_url(cfg->redis_url);

    fputs("[server]\nlisten = ", out);
    print_string(out, cfg->listen);
    fputs("\nadmin_listen = ", out);
    print_string(out, cfg->admin_listen);
    fprintf(out, "\ncpu_threads = %d\ncpu_jobs_per_tenant = %d\ncpu_queue_max = %d\nscheme = ",
            cfg->cpu_threads, cfg->cpu_jobs_per_tenant, cfg->cpu_queue_max);
    print_string(out, cfg->scheme);
    fputs("\ntrusted_proxies = [", out);
    for (size_t i = 0; i < cfg->n_trusted_proxies; i++) {
        if (i)
            fputs(", ", out);
        print_string(out, cfg->trusted_proxies[i]);
    }
    fputs("]\n\n[admin]\n", out);
    if (cfg->admin_token)
        fputs("token = \"" MASK "\"\n", out);
    else
        fputs("# token is not set: the admin API refuses every request\n", out);
    fputs("archive_dir = ", out);
    print_string(out, cfg->archive_dir);
    fputc('\n', out);

    fputs("\n[database]\nurl = ", out);
    print_string(out, db);
    fputs("\ntemplate = ", out);
    print_string(out, cfg->database_template);
    fputs("\ncreate_strategy = ", out);
    print_string(out, cfg->database_create_strategy);
    fprintf(out, "\nplacement_connections = %d", cfg->placement_connections);
    fprintf(out, "\nstatement_timeout_ms = %d", cfg->statement_timeout_ms);
    fprintf(out,
            "\n\n[database_pool]\nmax_connections = %d\nmin_connections = %d\n"
            "acquire_timeout_seconds = %d\nidle_timeout_seconds = %d\n"
            "max_total_connections = %d\nmax_connecting = %d\n",
            cfg->pool_max_connections, cfg->pool_min_connections, cfg->pool_acquire_timeout_s,
            cfg->pool_idle_timeout_s, cfg->pool_max_total, cfg->pool_max_connecting);

    fputs("\n[redis]\nurl = ", out);
    print_string(out, redis);
    fputs("\nprefix = ", out);
    print_string(out, cfg->redis_prefix);
    fprintf(out, "\ncommand_timeout_ms = %d", cfg->redis_timeout_ms);
    fprintf(out,
            "\n\n[workers]\nqueue_idle_poll_seconds = %d\nmax_running_jobs = %d\n"
            "job_max_attempts = %d\njob_backoff_base_seconds = %d\njob_backoff_max_seconds = %d\n"
            "job_lock_seconds = %d\nsuspended_retention_seconds = %d\n"
            "tenant_delete_grace_seconds = %d\nscheduled_status_min_lead_seconds = "
            "%d\npoll_min_expires_in_seconds = %d\n",
            cfg->queue_idle_poll_s, cfg->max_running_jobs, cfg->job_max_attempts,
            cfg->job_backoff_base_s, cfg->job_backoff_max_s, cfg->job_lock_s,
            cfg->suspended_retention_s, cfg->tenant_delete_grace_s, cfg->scheduled_min_lead_s,
            cfg->poll_min_expires_s);
    fprintf(out,
            "\n[limits]\nmax_body_bytes = %zu\nmax_upload_bytes = %zu\nmax_header_bytes = %zu\n"
            "request_timeout_seconds = %d\nheader_timeout_seconds = %d\n"
            "request_deadline_seconds = %d\nmax_connections = %d\nmax_connections_per_ip = %d\n"
            "json_max_depth = %d\napi_requests_per_5min = %d\nregistrations_per_30min = %d\n"
            "sign_in_attempts_per_ip_per_5min = %d\nsign_in_attempts_per_login_per_hour = %d\n",
            cfg->max_body_bytes, cfg->max_upload_bytes, cfg->max_header_bytes,
            cfg->request_timeout_s, cfg->header_timeout_s, cfg->request_deadline_s,
            cfg->max_connections, cfg->max_connections_per_ip, cfg->json_max_depth,
            cfg->api_requests_per_5min, cfg->registrations_per_30min, cfg->sign_ins_per_ip_per_5min,
            cfg->sign_ins_per_login_per_hour);
    fprintf(out,
            "stream_max_output_bytes = %zu\nmax_streams = %d\nmax_streams_per_tenant = %d\n"
            "stream_heartbeat_seconds = %d\nstream_max_renders = %d\n",
            cfg->stream_max_output_bytes, cfg->max_streams, cfg->max_streams_per_tenant,
            cfg->stream_heartbeat_s, cfg->stream_max_renders);
    fprintf(out, "\n[tenants]\ndormant_after_seconds = %d\nrender_cache_entries = %d\n",
            cfg->dormant_after_s, cfg->render_cache_entries);
    fputs("\n[log]\nlevel = ", out);
    print_string(out, cfg->log_level);
    fputc('\n', out);
    fprintf(out,
            "\n[federation]\nallow_private_addresses = %s\nallow_http = %s\nmax_requests = %d\n"
            "max_requests_per_host = %d\nmax_queued_per_tenant = %d\n"
            "connect_timeout_seconds = %d\nrequest_timeout_seconds = %d\n"
            "max_response_bytes = %zu\nmax_redirects = %d\n"
            "host_unavailable_after_seconds = %d\n",
            cfg->fed_allow_private_addresses ? "true" : "false",
            cfg->fed_allow_http ? "true" : "false", cfg->fed_max_requests,
            cfg->fed_max_requests_per_host, cfg->fed_max_queued_per_tenant,
            cfg->fed_connect_timeout_s, cfg->fed_request_timeout_s, cfg->fed_max_response_bytes,
            cfg->fed_max_redirects, cfg->fed_host_unavailable_after_s);
    fputs("hosts = [", out);
    for (size_t i = 0; i < cfg->n_fed_hosts; i++) {
        if (i)
            fputs(", ", out);
        print_string(out, cfg->fed_hosts[i]);
    }
    fputs("]\n", out);
    fprintf(out, "inbox_max_queued_per_host = %d\npoll_update_delay_seconds = %d\n",
            cfg->fed_inbox_max_queued_per_host, cfg->fed_poll_update_delay_s);
    fprintf(out, "inbox_max_queued_per_host_process = %d\n",
            cfg->fed_inbox_max_queued_per_host_process);
    fputs("\n[media]\nstorage = ", out);
    print_string(out, cfg->media_storage);
    fputs("\nroot = ", out);
    print_string(out, cfg->media_root);
    fprintf(out,
            "\nimage_size_limit = %zu\nvideo_size_limit = %zu\nimage_matrix_limit = %zu\n"
            "preview_max_side = %d\npreview_quality = %d\noriginal_quality = %d\n"
            "cpu_budget_ms = %d\nprocess_inline_bytes = %zu\ndefault_quota_bytes = %zu\n"
            "description_limit = %d\n",
            cfg->media_image_size_limit, cfg->media_video_size_limit, cfg->media_image_matrix_limit,
            cfg->media_preview_max_side, cfg->media_preview_quality, cfg->media_original_quality,
            cfg->media_cpu_budget_ms, cfg->media_process_inline_bytes,
            cfg->media_default_quota_bytes, cfg->media_description_limit);

    fputs("\n[media.s3]\n", out);
    const char *s3_keys[] = {"endpoint", "bucket", "region", "access_key", "public_url"};
    const char *s3_values[] = {cfg->s3_endpoint, cfg->s3_bucket, cfg->s3_region, cfg->s3_access_key,
                               cfg->s3_public_url};
    for (size_t i = 0; i < sizeof s3_keys / sizeof s3_keys[0]; i++) {
        if (!s3_values[i]) {
            fprintf(out, "# %s is not set\n", s3_keys[i]);
            continue;
        }
        fprintf(out, "%s = ", s3_keys[i]);
        print_string(out, s3_values[i]);
        fputc('\n', out);
    }
    fputs(cfg->s3_secret_key ? "secret_key = \"" MASK "\"\n" : "# secret_key is not set\n", out);
    fprintf(out, "path_style = %s\n", cfg->s3_path_style ? "true" : "false");

    fputs("\n[mail]\n", out);
    const char *mail_keys[] = {"smtp_url", "user", "from"};
    const char *mail_values[] = {cfg->mail_smtp_url, cfg->mail_user, cfg->mail_from};
    for (size_t i = 0; i < sizeof mail_keys / sizeof mail_keys[0]; i++) {
        if (!mail_values[i]) {
            fprintf(out, "# %s is not set\n", mail_keys[i]);
            continue;
        }
        fprintf(out, "%s = ", mail_keys[i]);
        print_string(out, mail_values[i]);
        fputc('\n', out);
    }
    fprintf(out, "starttls = %s\n", cfg->mail_starttls ? "true" : "false");
    fputs(cfg->mail_password ? "password = \"" MASK "\"\n" : "# password is not set\n", out);
    fputs("confirm_without_mail = ", out);
    print_string(out, cfg->mail_confirm_without_mail);
    fputc('\n', out);

    fputs("\n[secrets]\nkey_file = ", out);
    print_string(out, cfg->secrets_key_file);
    fputc('\n', out);

    free(db);
    free(redis);
}
