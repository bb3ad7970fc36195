/* The per-host signature form table (sigform_internal.h). */
#include "sigform_internal.h"

#include <jansson.h>
#include <time.h>

/* host -> {"rfc9421": bool, "at": when learned}; loop thread only. */
static json_t *hosts;

bool
eu_ap_sigform_rfc9421_first(const char *host)
{
    json_t *e = hosts ? json_object_get(hosts, host) : NULL;
    return !e || json_is_true(json_object_get(e, "rfc9421"));
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
        json_int_t at = json_integer_value(json_object_get(v, "at"));
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
    if (!hosts)
        hosts = json_object();
    json_t *e = json_object_get(hosts, host);
    if (e && json_is_true(json_object_get(e, "rfc9421")) == rfc9421)
        return; /* nothing new: most calls, no allocation */
    if (!e && json_object_size(hosts) >= EU_AP_SIGFORM_HOSTS)
        evict_oldest();
    json_object_set_new(hosts, host,
                        json_pack("{s:b,s:I}", "rfc9421", rfc9421, "at", (json_int_t)time(NULL)));
}

void
eu_ap_sigform_forget(const char *host)
{
    if (hosts)
        json_object_del(hosts, host);
}
