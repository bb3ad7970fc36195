/*
 * Message composition of the SMTP client (src/outbound/mail.c): the
 * headers RFC 5322 asks for, RFC 2047 encoding of non-ASCII subjects and
 * names, CRLF line ends throughout, both parts, and refusal of CR/LF in
 * any header value (header injection). Sending is covered end to end by
 * tests/integration/auth/test_mail.c.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/mail.h"

static const struct eu_mail_msg base = {
    .from_name = "Tenant \"A\"",
    .from_addr = "noreply@a.example",
    .reply_to = "admin@a.example",
    .to = "user@b.example",
    .subject = "Hello",
    .text = "line one\nline two\n",
    .html = "<p>hi</p>",
    .list_unsubscribe = "https://a.example/unsubscribe?t=1",
    .domain = "a.example",
};

START_TEST(test_headers)
{
    size_t len;
    char *m = eu_mail_compose(&base, &len);
    ck_assert_ptr_nonnull(m);
    ck_assert_uint_eq(strlen(m), len);
    ck_assert_ptr_nonnull(strstr(m, "\r\nFrom: \"Tenant \\\"A\\\"\" <noreply@a.example>\r\n"));
    ck_assert_ptr_nonnull(strstr(m, "\r\nReply-To: <admin@a.example>\r\n"));
    ck_assert_ptr_nonnull(strstr(m, "\r\nTo: <user@b.example>\r\n"));
    ck_assert_ptr_nonnull(strstr(m, "\r\nSubject: Hello\r\n"));
    ck_assert_ptr_nonnull(strstr(m, "\r\nMessage-ID: <"));
    ck_assert_ptr_nonnull(strstr(m, "@a.example>\r\n"));
    ck_assert(strncmp(m, "Date: ", 6) == 0);
    ck_assert_ptr_nonnull(
        strstr(m, "\r\nList-Unsubscribe: <https://a.example/unsubscribe?t=1>\r\n"));
    ck_assert_ptr_nonnull(strstr(m, "multipart/alternative"));
    ck_assert_ptr_nonnull(strstr(m, "text/plain; charset=utf-8"));
    ck_assert_ptr_nonnull(strstr(m, "text/html; charset=utf-8"));
    /* Every line ends in CRLF and none is longer than 998. */
    for (const char *p = m; *p;) {
        const char *nl = strchr(p, '\n');
        ck_assert_ptr_nonnull(nl);
        ck_assert(nl > p ? nl[-1] == '\r' : 0);
        ck_assert_int_le(nl - p, 998);
        p = nl + 1;
    }
    free(m);

    struct eu_mail_msg u = base;
    u.subject = "Bienvenue à bord, ünïcödé — a long subject that needs more than one word";
    u.from_name = "Tënant";
    u.list_unsubscribe = NULL;
    m = eu_mail_compose(&u, &len);
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(strstr(m, "\r\nSubject: =?UTF-8?B?"));
    ck_assert_ptr_nonnull(strstr(m, "?=\r\n =?UTF-8?B?")); /* folded into several words */
    ck_assert_ptr_nonnull(strstr(m, "\r\nFrom: =?UTF-8?B?"));
    ck_assert_ptr_null(strstr(m, "List-Unsubscribe"));
    free(m);
}
END_TEST

START_TEST(test_injection_refused)
{
    size_t len;
    const char *bad[] = {"x\r\nBcc: evil@c.example", "x\nBcc: evil@c.example", "x\rY"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct eu_mail_msg m = base;
        m.subject = bad[i];
        ck_assert_ptr_null(eu_mail_compose(&m, &len));
        m = base;
        m.from_name = bad[i];
        ck_assert_ptr_null(eu_mail_compose(&m, &len));
        m = base;
        m.list_unsubscribe = bad[i];
        ck_assert_ptr_null(eu_mail_compose(&m, &len));
        ck_assert(!eu_mail_header_ok(bad[i]));
    }
    struct eu_mail_msg m = base;
    m.to = "user@b.example>\r\nBcc: <evil@c.example";
    ck_assert_ptr_null(eu_mail_compose(&m, &len));
    m.to = "a@b.example, evil@c.example";
    ck_assert_ptr_null(eu_mail_compose(&m, &len));
    m.to = "no-at-sign";
    ck_assert_ptr_null(eu_mail_compose(&m, &len));
    m = base;
    m.reply_to = "x@y.example\nBcc: z@w.example";
    ck_assert_ptr_null(eu_mail_compose(&m, &len));
    ck_assert(eu_mail_header_ok("plain value"));
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("mail");
    TCase *tc = tcase_create("compose");
    tcase_add_test(tc, test_headers);
    tcase_add_test(tc, test_injection_refused);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
