/*
 * The pages' texts, in one catalogue so that translations can be added.
 * A page writes every text a person reads through eu_web_t() with the
 * English text as the key; the catalogue (web_text_catalogue.c) answers
 * the text in the language of the page (the tenant's first language, read
 * with the page's frame, web_page.c), or the English key when it has no
 * translation. A text with printf conversions keeps them, in the same
 * order, in every language.
 */
#ifndef EUNHA_API_WEB_TEXT_H
#define EUNHA_API_WEB_TEXT_H

#include <stdbool.h>
#include <stddef.h>

struct eu_req;

/* The text english in the page's language. The answer is either english
 * itself or a string of the catalogue, never memory to free; it is not
 * escaped (escape it as any other text). */
const char *eu_web_t(struct eu_req *req, const char *english);
/* The same, HTML-escaped, in the request's arena. */
const char *eu_web_th(struct eu_req *req, const char *english);

/* The text english in language lang ("en", "ko"), for callers without a
 * request (tests). */
const char *eu_web_text(const char *lang, const char *english);

/* One translation of a catalogue: pairs of English key and text, ending
 * with {NULL, NULL}. */
struct eu_web_text_pair {
    const char *en, *text;
};
struct eu_web_text_lang {
    const char *lang;
    const struct eu_web_text_pair *pairs;
};
/* The catalogue's languages, ending with {NULL, NULL}. */
extern const struct eu_web_text_lang eu_web_text_langs[];

/* Whether every translation keeps its key's printf conversions in order;
 * on failure the first bad key is written to bad (size n). */
bool eu_web_text_check(char *bad, size_t n);

#endif
