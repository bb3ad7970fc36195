/*
 * Tests for the TOML reader. Parsers are tested from tables: each valid row
 * is a document and one key it must contain; each invalid row is a document
 * and the exact error, line number included, that it must produce.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/toml.h"

enum kind { K_STR, K_INT, K_BOOL };

struct valid_case {
    const char *doc;
    const char *key;
    enum kind kind;
    const char *s;
    int64_t i;
    int line;
};

static const struct valid_case valid_cases[] = {
    /* keys and tables */
    {"a = 1\n", "a", K_INT, NULL, 1, 1},
    {"a = 1", "a", K_INT, NULL, 1, 1}, /* no final newline */
    {"\n\n[server]\nlisten = \"x\"\n", "server.listen", K_STR, "x", 0, 4},
    {"[a.b]\nc = 1\n", "a.b.c", K_INT, NULL, 1, 2},
    {"[ a . b ]\nc = 1\n", "a.b.c", K_INT, NULL, 1, 2},
    {"[a]\nb.c.d = 2\n", "a.b.c.d", K_INT, NULL, 2, 2},
    {"a . b = 3\n", "a.b", K_INT, NULL, 3, 1},
    {"\"quoted key\" = 1\n", "quoted key", K_INT, NULL, 1, 1},
    {"'lit' = 1\n", "lit", K_INT, NULL, 1, 1},
    {"[\"q\".'r']\ns = 1\n", "q.r.s", K_INT, NULL, 1, 2},
    {"bare-key_1 = 1\n", "bare-key_1", K_INT, NULL, 1, 1},
    {"1234 = 5\n", "1234", K_INT, NULL, 5, 1},
    {"[a.b]\nx=1\n[a]\ny=2\n", "a.y", K_INT, NULL, 2, 4}, /* implicit table, then defined */
    {"[fruit]\napple.color = 1\n[fruit.apple.texture]\nsmooth = true\n",
     "fruit.apple.texture.smooth", K_BOOL, NULL, 1, 4},
    {"a = 1\r\nb = 2\r\n", "b", K_INT, NULL, 2, 2}, /* CRLF */
    /* comments */
    {"# top\na = 1 # trailing\n# end", "a", K_INT, NULL, 1, 2},
    {"[t] # comment\nk = 'v'\n", "t.k", K_STR, "v", 0, 2},
    {"s = \"a#b\" # c\n", "s", K_STR, "a#b", 0, 1},
    /* basic strings */
    {"s = \"plain\"\n", "s", K_STR, "plain", 0, 1},
    {"s = \"\"\n", "s", K_STR, "", 0, 1},
    {"s = \"tab\\tnl\\nq\\\"bs\\\\\"\n", "s", K_STR, "tab\tnl\nq\"bs\\", 0, 1},
    {"s = \"\\b\\f\\r\"\n", "s", K_STR, "\b\f\r", 0, 1},
    {"s = \"\\u00e9\\u4e2d\"\n", "s", K_STR, "\xc3\xa9\xe4\xb8\xad", 0, 1},
    {"s = \"\\U0001F600\"\n", "s", K_STR, "\xf0\x9f\x98\x80", 0, 1},
    {"s = \"caf\xc3\xa9\"\n", "s", K_STR, "caf\xc3\xa9", 0, 1},
    /* literal strings */
    {"s = 'C:\\path\\n'\n", "s", K_STR, "C:\\path\\n", 0, 1},
    {"s = '\"quoted\"'\n", "s", K_STR, "\"quoted\"", 0, 1},
    /* multi-line basic */
    {"s = \"\"\"\nline1\nline2\"\"\"\n", "s", K_STR, "line1\nline2", 0, 1},
    {"s = \"\"\"one \\\n    two \\\n\n  three\"\"\"\n", "s", K_STR, "one two three", 0, 1},
    {"s = \"\"\"a\\tb\"\"\"\n", "s", K_STR, "a\tb", 0, 1},
    {"s = \"\"\"q\"\"\"\"\"\n", "s", K_STR, "q\"\"", 0, 1},
    {"s = \"\"\"\r\nx\r\ny\"\"\"\n", "s", K_STR, "x\ny", 0, 1},
    {"x = 0\ns = \"\"\"\na\nb\n\"\"\"\ny = 5\n", "y", K_INT, NULL, 5, 6},
    /* multi-line literal */
    {"s = '''\nraw \\n\n'''\n", "s", K_STR, "raw \\n\n", 0, 1},
    {"s = '''it''s'''\n", "s", K_STR, "it''s", 0, 1},
    {"s = ''''x'''\n", "s", K_STR, "'x", 0, 1},
    /* integers */
    {"i = 0\n", "i", K_INT, NULL, 0, 1},
    {"i = +17\n", "i", K_INT, NULL, 17, 1},
    {"i = -17\n", "i", K_INT, NULL, -17, 1},
    {"i = 1_000_000\n", "i", K_INT, NULL, 1000000, 1},
    {"i = 0xDEAD_beef\n", "i", K_INT, NULL, 0xdeadbeef, 1},
    {"i = 0o755\n", "i", K_INT, NULL, 0755, 1},
    {"i = 0b1010\n", "i", K_INT, NULL, 10, 1},
    {"i = 9223372036854775807\n", "i", K_INT, NULL, INT64_MAX, 1},
    {"i = -9223372036854775808\n", "i", K_INT, NULL, INT64_MIN, 1},
    {"i = -0\n", "i", K_INT, NULL, 0, 1},
    /* booleans */
    {"b = true\n", "b", K_BOOL, NULL, 1, 1},
    {"b = false\n", "b", K_BOOL, NULL, 0, 1},
    /* inline tables, flattened */
    {"t = {a = 1, b = \"x\"}\n", "t.b", K_STR, "x", 0, 1},
    {"t = {a.b = 1}\n", "t.a.b", K_INT, NULL, 1, 1},
    {"t = {n = {m = true}}\n", "t.n.m", K_BOOL, NULL, 1, 1},
    {"[s]\nt = { a = 1 }\n", "s.t.a", K_INT, NULL, 1, 2},
    {"t = {a = [1, 2]}\n", "t.a", K_INT, NULL, 0, -1}, /* -1: just present */
};

static const struct eu_toml_entry *
find_entry(const struct eu_toml_doc *doc, const char *key)
{
    for (size_t i = 0; i < doc->n; i++)
        if (strcmp(doc->entries[i].key, key) == 0)
            return &doc->entries[i];
    return NULL;
}

START_TEST(test_valid)
{
    const struct valid_case *c = &valid_cases[_i];
    struct eu_toml_doc *doc = NULL;
    char err[256];
    int rc = eu_toml_parse(c->doc, strlen(c->doc), &doc, err, sizeof err);
    ck_assert_msg(rc == 0, "case %d: %s", _i, err);
    ck_assert_ptr_nonnull(doc);
    const struct eu_toml_value *v = eu_toml_doc_get(doc, c->key);
    ck_assert_msg(v != NULL, "case %d: key '%s' missing", _i, c->key);
    ck_assert_ptr_eq(v, &find_entry(doc, c->key)->value);
    if (c->line >= 0) {
        ck_assert_int_eq(v->line, c->line);
        switch (c->kind) {
        case K_STR:
            ck_assert_int_eq(v->type, EU_TOML_STRING);
            ck_assert_str_eq(v->u.s, c->s);
            break;
        case K_INT:
            ck_assert_int_eq(v->type, EU_TOML_INTEGER);
            ck_assert_msg(v->u.i == c->i, "case %d: got %lld", _i, (long long)v->u.i);
            break;
        case K_BOOL:
            ck_assert_int_eq(v->type, EU_TOML_BOOLEAN);
            ck_assert_int_eq(v->u.b, c->i != 0);
            break;
        }
    }
    eu_toml_doc_free(doc);
}
END_TEST

struct invalid_case {
    const char *doc;
    const char *err;
};

static const struct invalid_case invalid_cases[] = {
    {"a = 1\na = 2\n", "line 2: key 'a' is already defined"},
    {"[t]\na = 1\n\n[t]\n", "line 4: table 't' is defined twice"},
    {"[t]\nx=1\n[t.x]\n", "line 3: key 't.x' is already defined"},
    {"a = 1\na.b = 2\n", "line 2: key 'a' is already defined"},
    {"a.b = 1\n[a]\n", "line 2: table 'a' is already defined"},
    {"[a.b]\n[a]\nb.c = 1\n", "line 3: table 'a.b' is already defined"},
    {"t = {a = 1}\nt.b = 2\n", "line 2: cannot add keys to inline table 't'"},
    {"t = {a = 1}\n[t]\n", "line 2: table 't' is already defined"},
    {"t = {a = 1, a = 2}\n", "line 1: key 't.a' is already defined"},
    {"t = {a = 1,}\n", "line 1: trailing comma in inline table"},
    {"t = {a = 1\n}\n", "line 1: inline table must close on the same line"},
    {"x = 1\nf = 3.14\n", "line 2: floats are not supported"},
    {"f = 1e5\n", "line 1: floats are not supported"},
    {"f = inf\n", "line 1: floats are not supported"},
    {"\n\nd = 1979-05-27\n", "line 3: dates and times are not supported"},
    {"d = 07:32:00\n", "line 1: dates and times are not supported"},
    {"i = 9223372036854775808\n", "line 1: integer does not fit in 64 bits"},
    {"i = 0123\n", "line 1: leading zeros are not allowed in integers"},
    {"i = 1__0\n", "line 1: invalid underscore in integer"},
    {"i = _1\n", "line 1: expected a value"},
    {"i = 1_\n", "line 1: invalid underscore in integer"},
    {"i = -0x10\n", "line 1: hex, octal and binary integers cannot have a sign"},
    {"i = 0xZZ\n", "line 1: invalid integer"},
    {"s = \"open\nx = 1\n", "line 1: unterminated string"},
    {"a = 1\ns = '''never\nclosed\n", "line 2: unterminated string"},
    {"s = \"bad \\q\"\n", "line 1: invalid escape sequence in string"},
    {"s = \"\\u12\"\n", "line 1: \\u needs 4 hex digits"},
    {"s = \"\\uD800\"\n", "line 1: \\u escape is not a Unicode scalar value"},
    {"s = \"\\U00110000\"\n", "line 1: \\U escape is not a Unicode scalar value"},
    {"s = \"\\u0000\"\n", "line 1: NUL characters are not supported in strings"},
    {"s = \"a\x01\"\n", "line 1: control character in string"},
    {"a = [1, 2\nb = 3\n", "line 2: expected ',' or ']' in array"},
    {"a = [1,\n 2,\n", "line 1: unterminated array"},
    {"a = [1 2]\n", "line 1: expected ',' or ']' in array"},
    {"a = [{x = 1}]\n", "line 1: inline tables are not supported inside arrays"},
    {"[[products]]\n", "line 1: arrays of tables ([[...]]) are not supported"},
    {"[t\n", "line 1: expected ']' after table name"},
    {"[]\n", "line 1: expected a key"},
    {"a b = 1\n", "line 1: expected '=' after key"},
    {"= 1\n", "line 1: expected a key"},
    {"a =\n", "line 1: expected a value"},
    {"a = # nothing\n", "line 1: expected a value"},
    {"a = 1 b = 2\n", "line 1: expected a newline after the value"},
    {"[t] x = 1\n", "line 1: expected a newline after the table header"},
    {"a = truthy\n", "line 1: expected a value"},
    {"a = nope\n", "line 1: expected a value"},
    {"\"\"\"k\"\"\" = 1\n", "line 1: multi-line strings cannot be keys"},
    {"a = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
     "line 1: arrays nested too deeply"},
};

START_TEST(test_invalid)
{
    const struct invalid_case *c = &invalid_cases[_i];
    struct eu_toml_doc *doc = (struct eu_toml_doc *)1;
    char err[256] = "";
    int rc = eu_toml_parse(c->doc, strlen(c->doc), &doc, err, sizeof err);
    ck_assert_msg(rc == -1, "case %d: parsed", _i);
    ck_assert_ptr_null(doc);
    ck_assert_msg(strcmp(err, c->err) == 0, "case %d: got '%s', want '%s'", _i, err, c->err);
}
END_TEST

START_TEST(test_nul_byte)
{
    static const char doc_text[] = "a = 1\nb = \"x\0y\"\n";
    struct eu_toml_doc *doc;
    char err[128];
    ck_assert_int_eq(eu_toml_parse(doc_text, sizeof doc_text - 1, &doc, err, sizeof err), -1);
    ck_assert_str_eq(err, "line 2: NUL byte in document");
}
END_TEST

START_TEST(test_not_nul_terminated)
{
    /* Only len bytes are read: the "9" after them must not be seen. */
    const char text[] = "a = 12349";
    struct eu_toml_doc *doc;
    char err[128];
    ck_assert_int_eq(eu_toml_parse(text, 8, &doc, err, sizeof err), 0);
    ck_assert(eu_toml_doc_get(doc, "a")->u.i == 1234);
    eu_toml_doc_free(doc);
}
END_TEST

START_TEST(test_arrays)
{
    const char *text = "a = [\n"
                       "  1, # one\n"
                       "  # a comment line\n"
                       "  2,\n"
                       "  \"three\",\n"
                       "  [true, [false]],\n"
                       "  [],\n"
                       "]\n"
                       "e = []\n";
    struct eu_toml_doc *doc;
    char err[128];
    ck_assert_msg(eu_toml_parse(text, strlen(text), &doc, err, sizeof err) == 0, "%s", err);
    const struct eu_toml_value *a = eu_toml_doc_get(doc, "a");
    ck_assert_int_eq(a->type, EU_TOML_ARRAY);
    ck_assert_int_eq(a->line, 1);
    ck_assert_uint_eq(a->u.array.n, 5);
    ck_assert(a->u.array.items[0].u.i == 1);
    ck_assert_int_eq(a->u.array.items[1].line, 4);
    ck_assert_str_eq(a->u.array.items[2].u.s, "three");
    const struct eu_toml_value *nested = &a->u.array.items[3];
    ck_assert_int_eq(nested->type, EU_TOML_ARRAY);
    ck_assert_uint_eq(nested->u.array.n, 2);
    ck_assert_int_eq(nested->u.array.items[0].u.b, true);
    ck_assert_uint_eq(nested->u.array.items[1].u.array.n, 1);
    ck_assert_uint_eq(a->u.array.items[4].u.array.n, 0);
    ck_assert_uint_eq(eu_toml_doc_get(doc, "e")->u.array.n, 0);
    eu_toml_doc_free(doc);
}
END_TEST

START_TEST(test_order_and_lookup)
{
    const char *text = "top = 1\n[b]\nx = 1\n[a]\ny = {p = 1, q = 2}\n";
    struct eu_toml_doc *doc;
    char err[128];
    ck_assert_msg(eu_toml_parse(text, strlen(text), &doc, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(doc->n, 4);
    ck_assert_str_eq(doc->entries[0].key, "top");
    ck_assert_str_eq(doc->entries[1].key, "b.x");
    ck_assert_str_eq(doc->entries[2].key, "a.y.p");
    ck_assert_str_eq(doc->entries[3].key, "a.y.q");
    ck_assert_ptr_null(eu_toml_doc_get(doc, "a"));
    ck_assert_ptr_null(eu_toml_doc_get(doc, "a.y"));
    ck_assert_ptr_null(eu_toml_doc_get(doc, "missing"));
    eu_toml_doc_free(doc);
}
END_TEST

START_TEST(test_empty)
{
    struct eu_toml_doc *doc;
    char err[128];
    ck_assert_int_eq(eu_toml_parse("", 0, &doc, err, sizeof err), 0);
    ck_assert_uint_eq(doc->n, 0);
    eu_toml_doc_free(doc);
    ck_assert_int_eq(eu_toml_parse("# only\n\n  \n", 11, &doc, err, sizeof err), 0);
    ck_assert_uint_eq(doc->n, 0);
    eu_toml_doc_free(doc);
    eu_toml_doc_free(NULL);
}
END_TEST

START_TEST(test_small_err_buffer)
{
    struct eu_toml_doc *doc;
    char err[8];
    ck_assert_int_eq(eu_toml_parse("a = 1.5\n", 8, &doc, err, sizeof err), -1);
    ck_assert_str_eq(err, "line 1:");
}
END_TEST

static Suite *
toml_suite(void)
{
    Suite *s = suite_create("toml");
    TCase *tc = tcase_create("valid");
    tcase_add_loop_test(tc, test_valid, 0, (int)(sizeof valid_cases / sizeof valid_cases[0]));
    tcase_add_test(tc, test_arrays);
    tcase_add_test(tc, test_order_and_lookup);
    tcase_add_test(tc, test_empty);
    tcase_add_test(tc, test_not_nul_terminated);
    suite_add_tcase(s, tc);
    tc = tcase_create("invalid");
    tcase_add_loop_test(tc, test_invalid, 0, (int)(sizeof invalid_cases / sizeof invalid_cases[0]));
    tcase_add_test(tc, test_nul_byte);
    tcase_add_test(tc, test_small_err_buffer);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(toml_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
