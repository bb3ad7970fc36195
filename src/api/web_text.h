/*
 * The pages' texts, in one catalogue so that translations can be added.
 * A page writes every text a person reads through eu_web_t() with the
 * English text as the key; the catalogue (web_text.c) answers the text in
 * the language of the page, or the English key when it has no translation.
 */
#ifndef EUNHA_API_WEB_TEXT_H
#define EUNHA_API_WEB_TEXT_H

struct eu_req;

/* The text english in the page's language. The answer is either english
 * itself or a string of the catalogue, never memory to free; it is not
 * escaped (escape it as any other text). */
const char *eu_web_t(struct eu_req *req, const char *english);

#endif
