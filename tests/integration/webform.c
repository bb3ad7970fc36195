/*
 * The form-driving browser of webform.h.
 */
#include "webform.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COOKIE_NAME "_eunha_session="

void
eu_it_webform_free(struct eu_it_webform *b)
{
    free(b->cookie);
    free(b->csrf);
    *b = (struct eu_it_webform){0};
}

char *
eu_it_form_value(const struct eu_it_resp *r, const char *name)
{
    char needle[128];
    snprintf(needle, sizeof(needle), "name=\"%s\" value=\"", name);
    const char *p = r->body ? strstr(r->body, needle) : NULL;
    if (!p)
        return NULL;
    p += strlen(needle);
    return strndup(p, strcspn(p, "\""));
}

void
eu_it_webform_send(struct eu_it_webform *b, struct eu_it_resp *r, const char *method,
                   const char *path, const char *body)
{
    eu_it_webform_send_as(b, r, method, path, "application/x-www-form-urlencoded", body);
}

void
eu_it_webform_send_as(struct eu_it_webform *b, struct eu_it_resp *r, const char *method,
                      const char *path, const char *content_type, const char *body)
{
    char cookie_line[512], type_line[256];
    snprintf(type_line, sizeof(type_line), "Content-Type: %s", content_type);
    const char *headers[4] = {type_line, "Accept: text/html", NULL, NULL};
    if (b->cookie) {
        snprintf(cookie_line, sizeof(cookie_line), "Cookie: %s", b->cookie);
        headers[2] = cookie_line;
    }
    eu_it_resp_free(r);
    int rc = eu_it_http_raw(r, method, b->s->public_port, b->host, path, headers, body);
    ck_assert_msg(rc == 0, "%s %s: %s", method, path, r->error);
    const char *set = eu_it_resp_header(r, "Set-Cookie");
    if (set) {
        size_t n = strlen(COOKIE_NAME);
        ck_assert_msg(strncmp(set, COOKIE_NAME, n) == 0, "cookie %s", set);
        free(b->cookie);
        /* An empty value is the server clearing it (sign-out). */
        b->cookie = set[n] == ';' || set[n] == '\0' ? NULL : strndup(set, strcspn(set, ";"));
    }
    char *t = eu_it_form_value(r, "authenticity_token");
    if (t) {
        free(b->csrf);
        b->csrf = t;
    }
}

void
eu_it_webform_post(struct eu_it_webform *b, struct eu_it_resp *r, const char *path,
                   const char *fields)
{
    char body[4096];
    int n = snprintf(body, sizeof(body), "authenticity_token=%s%s%s", b->csrf ? b->csrf : "",
                     *fields ? "&" : "", fields);
    ck_assert_msg(n > 0 && (size_t)n < sizeof(body), "form too long for %s", path);
    eu_it_webform_send(b, r, "POST", path, body);
}
