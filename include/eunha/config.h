/*
 * The effective configuration: eunha.toml read over the defaults, then a few
 * environment variables for operators (EUNHA_CPU_THREADS, EUNHA_ADMIN_TOKEN,
 * EUNHA_DATABASE_URL, EUNHA_REDIS_URL).
 */
#ifndef EUNHA_CONFIG_H
#define EUNHA_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Longest [redis] prefix: with ":{t<19 digits>}:" it must fit a tenant's
 * key_prefix (tenant.h), so no two tenants' prefixes can be cut alike. */
#define EU_REDIS_PREFIX_MAX 32

struct eu_config {
    /* [server] */
    char *listen;            /* "127.0.0.1:8080" */
    char *admin_listen;      /* "127.0.0.1:9180" */
    int cpu_threads;         /* 2 */
    int cpu_jobs_per_tenant; /* 4: password checks one tenant may have queued or running */
    int cpu_queue_max;       /* 256: such jobs queued or running in all */
    char *scheme;            /* "https" or "http" */
    char **trusted_proxies;  /* NULL-terminated list of IPs or CIDRs; empty by default */
    size_t n_trusted_proxies;
    /* [admin] */
    char *admin_token; /* from token, token_file or EUNHA_ADMIN_TOKEN; may be NULL */
    char *archive_dir; /* "archives": tenant exports; relative to the config file's directory */
    /* [database] */
    char *database_url;      /* control database, "postgresql://..." */
    char *database_template; /* "eunha_template" */
    /* "wal_log" (PostgreSQL's default) or "file_copy": how CREATE DATABASE
     * copies its template; see eu_config_create_db_clause(). */
    char *database_create_strategy;
    int placement_connections; /* 4: connections each placement keeps open */
    int statement_timeout_ms;  /* 10000: a statement running longer is cancelled; 0 never */
    /* [database_pool] */
    int pool_max_connections;   /* 2 */
    int pool_min_connections;   /* 0 */
    int pool_acquire_timeout_s; /* 5 */
    int pool_idle_timeout_s;    /* 20 */
    int pool_max_total;         /* 0 (no cap): all tenant pools together */
    int pool_max_connecting;    /* 16: tenant connect attempts in flight at once */
    /* [redis] */
    char *redis_url;      /* "redis://127.0.0.1:6379/0" */
    char *redis_prefix;   /* "eunha" */
    int redis_timeout_ms; /* 1000: a command unanswered this long fails */
    /* [workers] */
    int queue_idle_poll_s;     /* 300 */
    int max_running_jobs;      /* 8: tenants running background work at once */
    int job_max_attempts;      /* 12: then a job is dead */
    int job_backoff_base_s;    /* 15: first retry delay, doubling */
    int job_backoff_max_s;     /* 21600: longest retry delay */
    int job_lock_s;            /* 60: a claimed job runs again after this unless renewed */
    int suspended_retention_s; /* 2592000 (30 days): suspended accounts are then purged */
    /* 3600: at most this long after a tenant's deletion, the Delete of its
     * actors goes out before its rows go (src/admin/purge.c) */
    int tenant_delete_grace_s;
    int scheduled_min_lead_s; /* 300: how far ahead scheduled_at must be (Mastodon's 5 min) */
    int poll_min_expires_s;   /* 300: shortest poll[expires_in] accepted */
    int trends_refresh_s;     /* 600: a tenant's trends rescored this long after new activity */
    int trends_min_accounts;  /* 5 (Mastodon's threshold): fewer accounts never trend */
    /* [limits] */
    size_t max_body_bytes;   /* 1 MiB: any route's body, unless the route takes uploads */
    size_t max_upload_bytes; /* 17 MiB: a body of a route flagged EU_ROUTE_UPLOAD */
    size_t max_header_bytes; /* 16 KiB */
    int request_timeout_s;  /* 30: a connection idle (or stalled mid-read/write) this long closes */
    int header_timeout_s;   /* 10: from accept (or a request's first byte) to the end of headers */
    int request_deadline_s; /* 30: from the end of headers to the answer; then 503 */
    int max_connections;    /* 0: three quarters of RLIMIT_NOFILE; public listener only */
    int max_connections_per_ip;     /* 256 (IPv6: per /64); 0 none; trusted proxies exempt */
    int json_max_depth;             /* 16 */
    size_t stream_max_output_bytes; /* 1 MiB: unsent to one stream, then it is closed */
    int max_streams;                /* 0: none beyond max_connections */
    int max_streams_per_tenant;     /* 1000 in this process; 0: none */
    int stream_heartbeat_s;         /* 15: WebSocket ping / SSE ":thump" */
    int stream_max_renders;         /* 4096: stream events rendered at once; more wait */
    int api_requests_per_5min;      /* 300 per token or IP; 0 turns the API limit off */
    int registrations_per_30min;    /* 5 per IP */
    /* Sign-in attempts (HTML form and password grant together), as Mastodon
     * allows; counted before the password is hashed. 0 turns one off. */
    int sign_ins_per_ip_per_5min;    /* 25 */
    int sign_ins_per_login_per_hour; /* 25 per e-mail address or username */
    /* [tenants] */
    int dormant_after_s;      /* 600: an unused tenant's runtime state is then released; 0 never */
    int render_cache_entries; /* 4096 rendered statuses and accounts kept, all tenants; 0 none */
    /* [log] */
    char *log_level; /* "info" */
    /* [media.s3]: the S3 file store (eunha/mediastore.h, struct eu_s3_config).
     * Strings NULL when unset; read only when [media] storage is "s3". */
    char *s3_endpoint; /* "https://s3.example.com", "http://127.0.0.1:9000" */
    char *s3_bucket;
    char *s3_region; /* "us-east-1" */
    char *s3_access_key;
    char *s3_secret_key; /* also EUNHA_S3_SECRET_KEY; masked by eu_config_print */
    char *s3_public_url; /* NULL: the bucket's own URL */
    bool s3_path_style;  /* false: bucket.endpoint/key; true: endpoint/bucket/key */
    /* [federation]: the outbound HTTP client (include/eunha/fetch.h) */
    bool fed_allow_private_addresses; /* false: refuse loopback, private, link-local... peers */
    bool fed_allow_http;              /* false: https only */
    int fed_max_requests;             /* 128 in flight for the whole process */
    int fed_max_requests_per_host;    /* 8 in flight to one remote host */
    int fed_max_queued_per_tenant;    /* 1000 waiting per tenant; past it, refused */
    int fed_connect_timeout_s;        /* 10 */
    int fed_request_timeout_s;        /* 30: the whole transfer, redirects included */
    size_t fed_max_response_bytes;    /* 1 MiB: a longer body is cut and the fetch fails */
    int fed_max_redirects;            /* 3: the most a request may ask to follow */
    int fed_host_unavailable_after_s; /* 604800 (7 days) failing: the host is unavailable */
    /* "name=address:port" (address an IP literal): fetches of URLs on name
     * connect there instead, as curl's --connect-to does (split DNS, tests
     * of two processes). NULL-terminated, empty by default; the count
     * follows the list, as KEY_LIST fields must. */
    char **fed_hosts;
    size_t n_fed_hosts;
    /* Inbox activities from one sending host queued and not yet processed,
     * per tenant; past it the inbox answers 429 (src/ap/inbox.c). 1000. */
    int fed_inbox_max_queued_per_host;
    /* The same for the whole process: accepted from one sending host and
     * not yet processed, whatever tenant they were for (src/ap/inbox.c).
     * 5000. */
    int fed_inbox_max_queued_per_host_process;
    /* Seconds a local poll's Update(Question) waits after a remote vote, so
     * a burst of votes goes out as one Update (Mastodon's 3 minutes). 180. */
    int fed_poll_update_delay_s;
    /* [media]: uploads (src/api/media.c) and where their files live
     * (include/eunha/mediastore.h). The size limits published in the
     * instance entities are these, cut to what max_upload_bytes lets
     * through (eu_media_limit()). */
    char *media_storage;             /* "local" or "s3" */
    char *media_root;                /* "media": local files; relative to the config's directory */
    size_t media_image_size_limit;   /* 16 MiB, as Mastodon */
    size_t media_video_size_limit;   /* 99 MiB, as Mastodon (video and audio) */
    size_t media_image_matrix_limit; /* 33177600 pixels (Mastodon's 7680x4320) */
    int media_preview_max_side;      /* 640: the WebP preview fits this square */
    int media_preview_quality;       /* 80: WebP quality of the preview */
    int media_original_quality;      /* 90: quality of a re-encoded original */
    int media_cpu_budget_ms;         /* 20000: one image's processing, then "too large"; 0 none */
    size_t
        media_process_inline_bytes;   /* 8 MiB: v2 images this small are processed in the request */
    size_t media_default_quota_bytes; /* 1 GiB per tenant unless its row says; 0 unlimited */
    int media_description_limit;      /* 1500 characters, as Mastodon */
    /* [mail]: the SMTP client (include/eunha/mail.h). Strings NULL when
     * unset; without smtp_url mail is written to the log instead. */
    char *mail_smtp_url; /* "smtp://host:587" or "smtps://host:465" */
    bool mail_starttls;  /* STARTTLS required on smtp:// (CURLOPT_USE_SSL) */
    char *mail_user;
    char *mail_password; /* also EUNHA_MAIL_PASSWORD; masked by eu_config_print */
    char *mail_from;     /* the sender address; NULL: notifications@<tenant domain> */
    /* Without smtp_url: "auto" confirms a sign-up at once (nobody could
     * open a link no mail carried), "operator" leaves it unconfirmed until
     * the link written to the log is opened or the operator confirms it
     * (POST /admin/v1/tenants/{domain}/accounts/{id}/confirm). */
    char *mail_confirm_without_mail;
    /* [secrets]: key_file, the host key that seals secrets at rest
     * (include/eunha/secrets.h); relative to the config file's directory,
     * made on first start. "secrets.key" by default. */
    char *secrets_key_file;
};

/* Fills cfg with the defaults. Release with eu_config_release(). */
void eu_config_init_defaults(struct eu_config *cfg);
/*
 * Reads the TOML file at path over cfg (which must hold defaults), applies the
 * environment overrides and validates. Returns 0, or -1 with a message in err
 * ("FILE:LINE: ..." for syntax errors, the key name for bad values).
 * Unknown keys are errors so typos do not pass silently.
 */
int eu_config_load(struct eu_config *cfg, const char *path, char *err, size_t errlen);
/* Writes the effective config as TOML with secrets (admin token, passwords in
 * URLs) masked as "********". */
void eu_config_print(const struct eu_config *cfg, FILE *out);
/* Frees every string the config owns. */
void eu_config_release(struct eu_config *cfg);
/* What CREATE DATABASE adds for database.create_strategy: "" for the
 * default, " STRATEGY FILE_COPY" for "file_copy" (PostgreSQL 15 or later),
 * which copies a small template's files at a fraction of the CPU of
 * WAL-logging every block, at the price of a checkpoint per copy: worth it
 * where databases are made often from a small template (tests, fleets of
 * dedicated tenants), not on a server with much unwritten data. Static. */
const char *eu_config_create_db_clause(const struct eu_config *cfg);

#endif
