/* The per-host signature form table (sigform_internal.h). */
#include "sigform_internal.h"

#include <jansson.h>
#include <time.h>

/* The hosts known to take RFC 9421: host -> when learned. Every other
 * host gets draft-cavage, so only these need a row. Loop thread only. */
static json_t *hosts;

bool
eu_ap_sigform_rfc9421_first(const char *host)
{
    return hosts && host && json_object_get(hosts, host) != NULL;
}

static void
evict_oldest(void)
{
    /* One scan, only when a new host is learned past the cap. */
    const char *oldest = NULL;
    json_int_t when = 0;
    const char *k;
    json_t *v;
    json_object_foreach(hosts, k, v)
    {
        json_int_t at = json_integer_value(v);
        if (!oldest || at < when) {
            oldest = k;
            when = at;
        }
    }
    if (oldest)
        json_object_del(hosts, oldest);
}

void
eu_ap_sigform_learn(const char *host, bool rfc9421)
{
    if (!host || !host[0])
        return;
    if (!rfc9421) {
        if (hosts)
            json_object_del(hosts, host);
        return;
    }
    if (!hosts)
        hosts = json_object();
    json_t *at = json_object_get(hosts, host);
    if (at) {
        /* Known already (most calls): freshened in place, no allocation. */
        json_integer_set(at, (json_int_t)time(NULL));
        return;
    }
    if (json_object_size(hosts) >= EU_AP_SIGFORM_HOSTS)
        evict_oldest();
    json_object_set_new(hosts, host, json_integer((json_int_t)time(NULL)));
}
