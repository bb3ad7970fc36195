/*
 * Fuzz target: Host and X-Forwarded-* handling (src/core/net.c and the
 * proxy-header readers of src/http/server.c). The input is one header value;
 * it goes through everything on_request() does with such a value:
 * normalisation into buffers of several sizes, the domain check, the
 * trusted-proxy match, X-Forwarded-For's right-to-left walk and the first
 * item of X-Forwarded-Host/-Proto. eu_hostport_split() (listen addresses
 * from the config) reads the same kind of text, so it runs too.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/config.h"
#include "eunha/net.h"
#include "http/server_internal.h"

static char *proxies[] = {"10.0.0.0/8",     "127.0.0.1",      "::1",   "fd00::/8",
                          "192.168.1.1/33", "2001:db8::/129", "bogus", NULL};

static void
check_normalized(const char *out, size_t outlen)
{
    size_t n = strlen(out);
    if (n == 0 || n >= outlen)
        abort();
    /* The result is a registry key: it must never hold upper case. */
    for (size_t i = 0; i < n; i++)
        if (isupper((unsigned char)out[i]))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* evhttp stops a header value at NUL, so one never holds one. */
    char *v = strndup((const char *)data, size);

    static const size_t sizes[] = {1, 2, 8, 64, 256};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        char out[256];
        if (eu_host_normalize(v, out, sizes[i]) == 0) {
            check_normalized(out, sizes[i]);
            /* Normalising twice changes nothing, or two spellings of one
             * host could name two tenants. */
            char again[256];
            if (sizes[i] == 256 && eu_host_normalize(out, again, sizeof(again)) == 0 &&
                strcmp(out, again) != 0 && strchr(out, ':') == NULL)
                abort();
        }
    }
    eu_domain_is_valid(v);
    eu_ip_in_list(v, proxies, sizeof(proxies) / sizeof(proxies[0]) - 1);
    /* The value as a list entry too: config and peer swap roles. */
    char *one[] = {v};
    eu_ip_in_list("10.1.2.3", one, 1);
    eu_ip_in_list("2001:db8::1", one, 1);

    char host[64];
    int port;
    eu_hostport_split(v, host, sizeof(host), &port);

    struct eu_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.trusted_proxies = proxies;
    cfg.n_trusted_proxies = sizeof(proxies) / sizeof(proxies[0]) - 1;
    struct eu_arena *a = eu_arena_new();
    const char *first = eu_http_list_first(a, v);
    if (strchr(first, ','))
        abort();
    const char *client = eu_http_forwarded_client(a, v, "127.0.0.1", &cfg);
    (void)strlen(client);
    eu_arena_free(a);
    free(v);
    return 0;
}
