/*
 * ISO 8601 times as clients send them, shared by the API (scheduled
 * statuses) and the admin API (announcements).
 */
#include "eunha/isotime.h"

#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

static bool
read_digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (**p < '0' || **p > '9')
            return false;
        v = v * 10 + (**p - '0');
    }
    *out = v;
    return true;
}

int
eu_time_parse_iso8601(const char *s, int64_t *ms)
{
    int y, mo, d, h, mi, sec = 0, frac_ms = 0;
    const char *p = s;
    if (!read_digits(&p, 4, &y) || *p++ != '-' || !read_digits(&p, 2, &mo) || *p++ != '-' ||
        !read_digits(&p, 2, &d) || (*p != 'T' && *p != 't' && *p != ' '))
        return -1;
    p++;
    if (!read_digits(&p, 2, &h) || *p++ != ':' || !read_digits(&p, 2, &mi))
        return -1;
    if (*p == ':') {
        p++;
        if (!read_digits(&p, 2, &sec))
            return -1;
        if (*p == '.' || *p == ',') {
            p++;
            int scale = 100, digits = 0;
            for (; *p >= '0' && *p <= '9'; p++, digits++, scale /= 10)
                frac_ms += (*p - '0') * scale;
            if (!digits)
                return -1;
        }
    }
    int offset_min = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1, oh, om = 0;
        if (!read_digits(&p, 2, &oh))
            return -1;
        if (*p == ':')
            p++;
        if (*p && !read_digits(&p, 2, &om))
            return -1;
        offset_min = sign * (oh * 60 + om);
    }
    if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return -1;
    struct tm tm = {.tm_year = y - 1900,
                    .tm_mon = mo - 1,
                    .tm_mday = d,
                    .tm_hour = h,
                    .tm_min = mi,
                    .tm_sec = sec};
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return -1;
    *ms = ((int64_t)t - (int64_t)offset_min * 60) * 1000 + frac_ms;
    return 0;
}

void
eu_time_format_iso8601(int64_t ms, char out[EU_ISOTIME_SIZE])
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&t, &tm);
    char buf[32];
    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, EU_ISOTIME_SIZE, "%s.%03dZ", buf, (int)(ms % 1000));
}

bool
eu_time_day_prefix(const char *s)
{
    static const char shape[] = "dddd-dd-dd";
    if (!s)
        return false;
    for (size_t i = 0; shape[i]; i++)
        if (shape[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != shape[i])
            return false;
    int month = (s[5] - '0') * 10 + (s[6] - '0'), day = (s[8] - '0') * 10 + (s[9] - '0');
    return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}
