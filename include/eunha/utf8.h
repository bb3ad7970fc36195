/*
 * Counting UTF-8 text as Mastodon's length limits do: in characters (code
 * points), not bytes. The text is valid UTF-8 already (jansson and the
 * form parser refuse anything else), so a character is a byte that does
 * not continue a sequence.
 */
#ifndef EUNHA_UTF8_H
#define EUNHA_UTF8_H

#include <stddef.h>

/* The characters of the NUL-terminated UTF-8 text s. */
static inline size_t
eu_utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

#endif
