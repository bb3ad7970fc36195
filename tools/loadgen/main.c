/*
 * eunha-loadgen's command line: reads the options, the Host list and the
 * bearer tokens into a struct eu_lg_config, runs the load (run.c) and prints
 * the report (report.c). Only numeric addresses are accepted, so a typo can
 * never send benchmark traffic to a machine found through DNS.
 */
#include "loadgen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_MIX "home=30,public=20,notifications=20,verify=10,account=15,status=5"

static void
usage(FILE *o)
{
    fprintf(o,
            "usage: eunha-loadgen -p PORT [options]\n"
            "\n"
            "Target\n"
            "  -a, --addr ADDR        numeric server address (default 127.0.0.1)\n"
            "  -p, --port PORT        server port\n"
            "  -H, --host NAME        a Host header value; repeat for several\n"
            "      --hosts FILE       Host names, one a line\n"
            "      --tokens FILE      lines 'HOST TOKEN [ACCOUNT_ID]': bearer tokens, and the\n"
            "                         ids GET /api/v1/accounts/:id picks from; adds the hosts\n"
            "Load\n"
            "  -m, --mix SPEC         kind=weight,... (default " DEFAULT_MIX ")\n"
            "                         kinds: home public notifications verify account status\n"
            "                         instance tenant\n"
            "                         tenant: POST /admin/v1/tenants creating a tenant named\n"
            "                         by the Host (point -p at the admin listener); with\n"
            "                         -n equal to the number of hosts, each is made once\n"
            "      --admin-token-file FILE  admin bearer token for the tenant kind\n"
            "  -c, --concurrency N    closed loop: clients (default 8); open loop: most\n"
            "                         connections (default 64)\n"
            "  -r, --rate R           open loop at R requests/s in total (default: closed loop)\n"
            "      --poisson          exponential gaps between arrivals (default: even)\n"
            "  -d, --duration S       measured seconds (default 10; 0 = until --requests)\n"
            "  -w, --warmup S         seconds of load before measuring (default 0)\n"
            "  -n, --requests N       send N requests in all, then stop\n"
            "  -t, --timeout S        a request fails after S seconds without progress (10)\n"
            "      --retry-503 S      ask a 503 again after its Retry-After until S seconds\n"
            "                         after it was first due; latency counts from then\n"
            "      --max-backlog N    open loop: arrivals allowed to wait for a connection\n"
            "                         (default rate x timeout, at least 1000)\n"
            "      --post-format F    json (default) or form bodies for POST /api/v1/statuses\n"
            "      --visibility V     visibility of posted statuses (default public)\n"
            "      --seed N           random seed for the mix (default fixed)\n"
            "Report\n"
            "      --json FILE        also write the report as JSON\n"
            "      --log FILE         a line per measured request: 'DUE_MS LATENCY_MS STATUS\n"
            "                         KIND HOST ID', DUE_MS from the window's start, STATUS\n"
            "                         a code or an error name, ID the created status's or -\n"
            "      --label TEXT       name the run in the report\n"
            "  -q, --quiet            no text report\n"
            "\n"
            "Exit status: 0 when the run finished (errors are in the report), 2 on bad usage,\n"
            "1 when it could not run.\n");
}

static void *
xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p) {
        fprintf(stderr, "eunha-loadgen: out of memory\n");
        exit(1);
    }
    return p;
}

static char *
xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d) {
        fprintf(stderr, "eunha-loadgen: out of memory\n");
        exit(1);
    }
    return d;
}

/* The host named name, added if new. Linear search: a few thousand hosts at
 * most, read once at start. */
static struct eu_lg_host *
host_get(struct eu_lg_config *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->nhosts; i++)
        if (strcmp(cfg->hosts[i].name, name) == 0)
            return &cfg->hosts[i];
    cfg->hosts = xrealloc(cfg->hosts, (cfg->nhosts + 1) * sizeof(*cfg->hosts));
    struct eu_lg_host *h = &cfg->hosts[cfg->nhosts++];
    memset(h, 0, sizeof(*h));
    h->name = xstrdup(name);
    return h;
}

static void
push(char ***arr, size_t *n, const char *s)
{
    *arr = xrealloc(*arr, (*n + 1) * sizeof(**arr));
    (*arr)[(*n)++] = xstrdup(s);
}

/* Calls line_cb with the whitespace-separated fields of each line of path,
 * skipping blank lines and '#' comments. Returns 0, or -1 with a message. */
static int
read_fields(const char *path, struct eu_lg_config *cfg,
            int (*line_cb)(struct eu_lg_config *, char **, int, const char *, int))
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "eunha-loadgen: cannot open '%s': %s\n", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, rc = 0;
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        char *fields[4];
        int n = 0;
        for (char *tok = strtok(line, " \t\r\n"); tok && n < 4; tok = strtok(NULL, " \t\r\n"))
            fields[n++] = tok;
        if (n == 0 || fields[0][0] == '#')
            continue;
        if (line_cb(cfg, fields, n, path, lineno) < 0) {
            rc = -1;
            break;
        }
    }
    free(line);
    fclose(f);
    return rc;
}

static int
on_host_line(struct eu_lg_config *cfg, char **f, int n, const char *path, int lineno)
{
    host_get(cfg, f[0]);
    return 0;
}

static int
on_token_line(struct eu_lg_config *cfg, char **f, int n, const char *path, int lineno)
{
    if (n < 2) {
        fprintf(stderr, "eunha-loadgen: %s:%d: want 'HOST TOKEN [ACCOUNT_ID]'\n", path, lineno);
        return -1;
    }
    struct eu_lg_host *h = host_get(cfg, f[0]);
    push(&h->tokens, &h->ntokens, f[1]);
    if (n >= 3)
        push(&h->account_ids, &h->naccounts, f[2]);
    return 0;
}

static int
parse_mix(struct eu_lg_config *cfg, const char *spec)
{
    memset(cfg->weights, 0, sizeof(cfg->weights));
    cfg->weight_total = 0;
    char *copy = xstrdup(spec), *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        unsigned long w = 1;
        if (eq) {
            *eq = '\0';
            char *end;
            w = strtoul(eq + 1, &end, 10);
            if (*end || w > 1000000) {
                fprintf(stderr, "eunha-loadgen: bad weight in --mix: '%s'\n", eq + 1);
                free(copy);
                return -1;
            }
        }
        int k;
        for (k = 0; k < EU_LG_KIND_COUNT; k++)
            if (strcmp(item, eu_lg_kinds[k].name) == 0)
                break;
        if (k == EU_LG_KIND_COUNT) {
            fprintf(stderr, "eunha-loadgen: unknown kind in --mix: '%s'\n", item);
            free(copy);
            return -1;
        }
        cfg->weights[k] += (unsigned)w;
        cfg->weight_total += (unsigned)w;
    }
    free(copy);
    if (cfg->weight_total == 0) {
        fprintf(stderr, "eunha-loadgen: --mix has no positive weight\n");
        return -1;
    }
    return 0;
}

/* The first line of path, without its line end: the admin token. */
static int
read_admin_token(struct eu_lg_config *cfg, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "eunha-loadgen: cannot open '%s': %s\n", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, f);
    fclose(f);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' '))
        line[--n] = '\0';
    if (n <= 0 || n > 900) {
        fprintf(stderr, "eunha-loadgen: '%s' holds no usable token on its first line\n", path);
        free(line);
        return -1;
    }
    free(cfg->admin_token);
    cfg->admin_token = line;
    return 0;
}

static int
parse_double(const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || v < 0) {
        fprintf(stderr, "eunha-loadgen: %s wants a non-negative number, not '%s'\n", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int
parse_u64(const char *opt, const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || s[0] == '-') {
        fprintf(stderr, "eunha-loadgen: %s wants a whole number, not '%s'\n", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

/* The mix must be sendable to every host, checked now rather than as a
 * stream of errors halfway through a benchmark. */
static int
check_hosts(const struct eu_lg_config *cfg)
{
    if (cfg->nhosts == 0) {
        fprintf(stderr, "eunha-loadgen: no hosts: give --host, --hosts or --tokens\n");
        return -1;
    }
    for (int k = 0; k < EU_LG_KIND_COUNT; k++) {
        if (cfg->weights[k] && eu_lg_kinds[k].admin && !cfg->admin_token) {
            fprintf(stderr, "eunha-loadgen: '%s' needs --admin-token-file\n", eu_lg_kinds[k].name);
            return -1;
        }
    }
    for (size_t i = 0; i < cfg->nhosts; i++) {
        const struct eu_lg_host *h = &cfg->hosts[i];
        for (int k = 0; k < EU_LG_KIND_COUNT; k++) {
            if (!cfg->weights[k])
                continue;
            if (eu_lg_kinds[k].needs_token && !h->ntokens) {
                fprintf(stderr, "eunha-loadgen: host '%s' has no token, and '%s' needs one\n",
                        h->name, eu_lg_kinds[k].name);
                return -1;
            }
            if (eu_lg_kinds[k].admin) {
                /* The Host name goes into a JSON body unescaped. */
                for (const char *c = h->name; *c; c++) {
                    if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) {
                        fprintf(stderr, "eunha-loadgen: host '%s' cannot be a tenant's domain\n",
                                h->name);
                        return -1;
                    }
                }
                if (strlen(h->name) > 253) {
                    fprintf(stderr, "eunha-loadgen: host '%s' is too long for a domain\n", h->name);
                    return -1;
                }
            }
            if (eu_lg_kinds[k].needs_account && !h->naccounts) {
                fprintf(stderr,
                        "eunha-loadgen: host '%s' has no account ids (third column of "
                        "--tokens), and '%s' needs them\n",
                        h->name, eu_lg_kinds[k].name);
                return -1;
            }
        }
    }
    return 0;
}

int
main(int argc, char **argv)
{
    struct eu_lg_config cfg = {
        .addr = "127.0.0.1",
        .duration = 10,
        .timeout = 10,
        .visibility = "public",
    };
    const char *mix = DEFAULT_MIX;
    bool duration_set = false;
    uint64_t u;
    enum {
        OPT_HOSTS = 256,
        OPT_TOKENS,
        OPT_POISSON,
        OPT_BACKLOG,
        OPT_POST_FORMAT,
        OPT_VISIBILITY,
        OPT_SEED,
        OPT_JSON,
        OPT_LABEL,
        OPT_RETRY,
        OPT_ADMIN_TOKEN,
        OPT_LOG
    };
    static const struct option opts[] = {
        {"addr", required_argument, NULL, 'a'},
        {"port", required_argument, NULL, 'p'},
        {"host", required_argument, NULL, 'H'},
        {"hosts", required_argument, NULL, OPT_HOSTS},
        {"tokens", required_argument, NULL, OPT_TOKENS},
        {"mix", required_argument, NULL, 'm'},
        {"concurrency", required_argument, NULL, 'c'},
        {"rate", required_argument, NULL, 'r'},
        {"poisson", no_argument, NULL, OPT_POISSON},
        {"duration", required_argument, NULL, 'd'},
        {"warmup", required_argument, NULL, 'w'},
        {"requests", required_argument, NULL, 'n'},
        {"timeout", required_argument, NULL, 't'},
        {"max-backlog", required_argument, NULL, OPT_BACKLOG},
        {"retry-503", required_argument, NULL, OPT_RETRY},
        {"post-format", required_argument, NULL, OPT_POST_FORMAT},
        {"visibility", required_argument, NULL, OPT_VISIBILITY},
        {"seed", required_argument, NULL, OPT_SEED},
        {"json", required_argument, NULL, OPT_JSON},
        {"label", required_argument, NULL, OPT_LABEL},
        {"admin-token-file", required_argument, NULL, OPT_ADMIN_TOKEN},
        {"log", required_argument, NULL, OPT_LOG},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    const char *log_path = NULL; /* --log */
    while ((c = getopt_long(argc, argv, "a:p:H:m:c:r:d:w:n:t:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'a':
            cfg.addr = optarg;
            break;
        case 'p':
            if (parse_u64("--port", optarg, &u) < 0 || u == 0 || u > 65535)
                return 2;
            cfg.port = (unsigned)u;
            break;
        case 'H':
            host_get(&cfg, optarg);
            break;
        case OPT_HOSTS:
            if (read_fields(optarg, &cfg, on_host_line) < 0)
                return 2;
            break;
        case OPT_TOKENS:
            if (read_fields(optarg, &cfg, on_token_line) < 0)
                return 2;
            break;
        case 'm':
            mix = optarg;
            break;
        case 'c':
            if (parse_u64("--concurrency", optarg, &u) < 0 || u == 0 || u > 100000)
                return 2;
            cfg.concurrency = (unsigned)u;
            break;
        case 'r':
            if (parse_double("--rate", optarg, &cfg.rate) < 0)
                return 2;
            break;
        case OPT_POISSON:
            cfg.poisson = true;
            break;
        case 'd':
            if (parse_double("--duration", optarg, &cfg.duration) < 0)
                return 2;
            duration_set = true;
            break;
        case 'w':
            if (parse_double("--warmup", optarg, &cfg.warmup) < 0)
                return 2;
            break;
        case 'n':
            if (parse_u64("--requests", optarg, &cfg.max_requests) < 0)
                return 2;
            break;
        case 't':
            if (parse_double("--timeout", optarg, &cfg.timeout) < 0 || cfg.timeout <= 0)
                return 2;
            break;
        case OPT_RETRY:
            if (parse_double("--retry-503", optarg, &cfg.retry_503) < 0 || cfg.retry_503 < 0)
                return 2;
            break;
        case OPT_BACKLOG:
            if (parse_u64("--max-backlog", optarg, &u) < 0)
                return 2;
            cfg.max_backlog = (size_t)u;
            break;
        case OPT_POST_FORMAT:
            if (strcmp(optarg, "form") == 0) {
                cfg.post_form = true;
            } else if (strcmp(optarg, "json") == 0) {
                cfg.post_form = false;
            } else {
                fprintf(stderr, "eunha-loadgen: --post-format is json or form\n");
                return 2;
            }
            break;
        case OPT_VISIBILITY:
            cfg.visibility = optarg;
            break;
        case OPT_SEED:
            if (parse_u64("--seed", optarg, &cfg.seed) < 0)
                return 2;
            break;
        case OPT_JSON:
            cfg.json_out = optarg;
            break;
        case OPT_LABEL:
            cfg.label = optarg;
            break;
        case OPT_ADMIN_TOKEN:
            if (read_admin_token(&cfg, optarg) < 0)
                return 2;
            break;
        case OPT_LOG:
            log_path = optarg; /* opened once the options are all good */
            break;
        case 'q':
            cfg.quiet = true;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "eunha-loadgen: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (!cfg.port) {
        fprintf(stderr, "eunha-loadgen: --port is required\n");
        usage(stderr);
        return 2;
    }
    unsigned char buf[16];
    if (inet_pton(AF_INET, cfg.addr, buf) != 1 && inet_pton(AF_INET6, cfg.addr, buf) != 1) {
        fprintf(stderr, "eunha-loadgen: --addr must be a numeric address, not '%s'\n", cfg.addr);
        return 2;
    }
    if (parse_mix(&cfg, mix) < 0 || check_hosts(&cfg) < 0)
        return 2;
    if (!cfg.concurrency)
        cfg.concurrency = cfg.rate > 0 ? 64 : 8;
    /* With a request count and no explicit duration, the count alone ends it. */
    if (cfg.max_requests && !duration_set)
        cfg.duration = 0;
    if (cfg.duration <= 0 && !cfg.max_requests) {
        fprintf(stderr, "eunha-loadgen: --duration 0 needs --requests\n");
        return 2;
    }
    if (!cfg.max_backlog) {
        double b = cfg.rate * cfg.timeout;
        cfg.max_backlog = b > 1000 ? (size_t)b : 1000;
    }

    if (log_path && !(cfg.log = fopen(log_path, "w"))) {
        fprintf(stderr, "eunha-loadgen: cannot write '%s': %s\n", log_path, strerror(errno));
        return 2;
    }
    struct eu_lg_stats *st = malloc(sizeof(*st));
    if (!st) {
        fprintf(stderr, "eunha-loadgen: out of memory\n");
        if (cfg.log)
            fclose(cfg.log);
        return 1;
    }
    if (eu_lg_run(&cfg, st) < 0) {
        free(st);
        if (cfg.log)
            fclose(cfg.log);
        return 1;
    }
    if (!cfg.quiet)
        eu_lg_report_text(&cfg, st);
    int rc = 0;
    if (cfg.json_out && eu_lg_report_json(&cfg, st, cfg.json_out) < 0)
        rc = 1;
    free(st);
    for (size_t i = 0; i < cfg.nhosts; i++) {
        struct eu_lg_host *h = &cfg.hosts[i];
        for (size_t j = 0; j < h->ntokens; j++)
            free(h->tokens[j]);
        for (size_t j = 0; j < h->naccounts; j++)
            free(h->account_ids[j]);
        free(h->tokens);
        free(h->account_ids);
        free(h->name);
    }
    free(cfg.hosts);
    free(cfg.admin_token);
    if (cfg.log && fclose(cfg.log) != 0) {
        fprintf(stderr, "eunha-loadgen: writing the --log file failed\n");
        rc = 1;
    }
    return rc;
}
