/*
 * The catalogue of the pages' texts (web_text.h): a lookup of the page's
 * language in the translations of web_text_catalogue.c. A language the
 * catalogue lacks, and a text a translation lacks, read in English.
 *
 * The lookup scans the language's pairs: a few hundred short keys, most
 * differing in their first bytes, cost a page far less than building its
 * HTML, and the table stays a plain list a translator can edit.
 */
#include "web_text.h"

#include <stdio.h>
#include <string.h>

#include "eunha/entities.h"
#include "eunha/http.h"
#include "web_internal.h"

const char *
eu_web_text(const char *lang, const char *english)
{
    if (!lang || strcmp(lang, "en") == 0)
        return english;
    for (const struct eu_web_text_lang *l = eu_web_text_langs; l->lang; l++) {
        if (strcmp(l->lang, lang) != 0)
            continue;
        for (const struct eu_web_text_pair *p = l->pairs; p->en; p++)
            if (strcmp(p->en, english) == 0)
                return p->text;
        break;
    }
    return english;
}

const char *
eu_web_t(struct eu_req *req, const char *english)
{
    return eu_web_text(eu_web_lang(req), english);
}

const char *
eu_web_th(struct eu_req *req, const char *english)
{
    return eu_html_escape(req, eu_web_t(req, english));
}

/* The printf conversions of s ("%s%d"), at most n - 1 bytes, in out. */
static void
conversions(const char *s, char *out, size_t n)
{
    size_t k = 0;
    for (const char *p = s; *p; p++) {
        if (*p != '%')
            continue;
        p++;
        while (*p && strchr("0123456789.-+ #lz", *p))
            p++;
        if (!*p)
            break;
        if (k + 2 < n) {
            out[k++] = '%';
            out[k++] = *p;
        }
    }
    out[k] = '\0';
}

bool
eu_web_text_check(char *bad, size_t n)
{
    for (const struct eu_web_text_lang *l = eu_web_text_langs; l->lang; l++)
        for (const struct eu_web_text_pair *p = l->pairs; p->en; p++) {
            char a[64], b[64];
            conversions(p->en, a, sizeof(a));
            conversions(p->text, b, sizeof(b));
            if (strcmp(a, b) != 0) {
                snprintf(bad, n, "%s: %s", l->lang, p->en);
                return false;
            }
        }
    return true;
}
