/*
 * ISO 8601 times as Mastodon clients send them (scheduled statuses,
 * announcements' starts_at and ends_at). Pure functions, safe anywhere.
 */
#ifndef EUNHA_ISOTIME_H
#define EUNHA_ISOTIME_H

#include <stdbool.h>
#include <stdint.h>

/* Room for "2025-01-31T12:00:00.000Z" and its NUL, with a margin. */
#define EU_ISOTIME_SIZE 40

/*
 * Reads "2025-01-31T12:00:00.000Z", with or without seconds and fraction,
 * "T" or a space, "Z", "+01:00", "+0100" or no zone (UTC). Returns 0 with
 * the time in milliseconds since the epoch in *ms, or -1.
 */
int eu_time_parse_iso8601(const char *s, int64_t *ms);
/* Writes ms (since the epoch, not negative) as "2025-01-31T12:00:00.000Z". */
void eu_time_format_iso8601(int64_t ms, char out[EU_ISOTIME_SIZE]);

/* Whether s begins with a day "YYYY-MM-DD", its month 01 to 12 and its
 * day 01 to 31 (a 30 February passes: PostgreSQL refuses it later). */
bool eu_time_day_prefix(const char *s);

#endif
