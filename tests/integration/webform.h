/*
 * A browser as the server's HTML forms see it, without a browser: it keeps
 * the session cookie a reply sets and the CSRF token of the last form it
 * was shown, and posts urlencoded fields with that token. Suites that drive
 * the sign-in and settings pages over plain HTTP share it.
 */
#ifndef EUNHA_IT_WEBFORM_H
#define EUNHA_IT_WEBFORM_H

#include "harness.h"

struct eu_it_webform {
    struct eu_it_server *s;
    const char *host;
    char *cookie; /* "_eunha_session=..." or NULL; owned */
    char *csrf;   /* the last form's authenticity_token, or NULL; owned */
};

/* Frees the cookie and token and zeroes b. */
void eu_it_webform_free(struct eu_it_webform *b);

/* The value attribute of input name in r's body (caller frees), or NULL
 * when the page has no such input. */
char *eu_it_form_value(const struct eu_it_resp *r, const char *name);

/* A request from the browser (body urlencoded, or NULL): its cookie goes
 * with it; a cookie the reply sets (or clears) and the page's CSRF token,
 * if any, are kept. r is freed before and holds the reply after. */
void eu_it_webform_send(struct eu_it_webform *b, struct eu_it_resp *r, const char *method,
                        const char *path, const char *body);

/* The same with a body of content_type (a multipart form, say). */
void eu_it_webform_send_as(struct eu_it_webform *b, struct eu_it_resp *r, const char *method,
                           const char *path, const char *content_type, const char *body);

/* POST path with the browser's CSRF token followed by fields ("a=b&c=d",
 * urlencoded; may be ""). */
void eu_it_webform_post(struct eu_it_webform *b, struct eu_it_resp *r, const char *path,
                        const char *fields);

#endif
