/*
 * Home feed storage in Redis (see feeds.h).
 */
#include "eunha/feeds.h"

#include <stdio.h>

#include "eunha/app.h"
#include "eunha/redis.h"
#include "eunha/tenant.h"

void
eu_feed_home_key(const struct eu_tenant *t, int64_t account_id, char *buf, size_t len)
{
    snprintf(buf, len, "%sfeed:home:%lld", t->key_prefix, (long long)account_id);
}

void
eu_feed_home_invalidate(struct eu_app *app, const struct eu_tenant *t, int64_t account_id)
{
    char key[160];
    eu_feed_home_key(t, account_id, key, sizeof(key));
    const char *argv[] = {"DEL", key};
    eu_redis_command(app->redis, NULL, NULL, 2, argv, NULL);
}
