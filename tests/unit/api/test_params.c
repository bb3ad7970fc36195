/*
 * The bracket rules of form parameters: what Mastodon clients send as
 * urlencoded forms must read the same as the JSON they send elsewhere.
 */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/error.h"
#include "eunha/http.h"
#include "eunha/params.h"

static json_t *
parse(const char *s)
{
    json_t *o = json_object();
    size_t n = 0;
    struct eu_error err = {0};
    ck_assert_int_eq(eu_params_parse_urlencoded(o, s, strlen(s), &n, &err), 0);
    return o;
}

static void
expect_json(const char *form, const char *want)
{
    json_t *got = parse(form);
    json_t *exp = json_loads(want, 0, NULL);
    ck_assert_ptr_nonnull(exp);
    char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
    ck_assert_msg(json_equal(got, exp), "form '%s': got %s, want %s", form, g, want);
    free(g);
    json_decref(got);
    json_decref(exp);
}

START_TEST(test_plain_and_decoding)
{
    expect_json("status=hello+world%21&visibility=public",
                "{\"status\":\"hello world!\",\"visibility\":\"public\"}");
    expect_json("a=1&a=2", "{\"a\":\"2\"}");
    expect_json("empty=&flag", "{\"empty\":\"\",\"flag\":\"\"}");
    expect_json("", "{}");
    expect_json("&&x=%E2%9C%93", "{\"x\":\"\\u2713\"}");
}
END_TEST

START_TEST(test_arrays_and_nesting)
{
    expect_json("types[]=follow&types[]=mention", "{\"types\":[\"follow\",\"mention\"]}");
    expect_json("poll[options][]=a&poll[options][]=b&poll[expires_in]=300",
                "{\"poll\":{\"options\":[\"a\",\"b\"],\"expires_in\":\"300\"}}");
    expect_json("source[privacy]=private&source[sensitive]=true",
                "{\"source\":{\"privacy\":\"private\",\"sensitive\":\"true\"}}");
    expect_json("fields_attributes[0][name]=a&fields_attributes[0][value]=b",
                "{\"fields_attributes\":{\"0\":{\"name\":\"a\",\"value\":\"b\"}}}");
    /* Arrays of objects as Rack reads them: a key the last object already
     * has starts the next one. */
    expect_json("m[][id]=1&m[][description]=x&m[][id]=2&m[][focus]=0,0&m[][description]=y",
                "{\"m\":[{\"id\":\"1\",\"description\":\"x\"},"
                "{\"id\":\"2\",\"focus\":\"0,0\",\"description\":\"y\"}]}");
    expect_json("m[][a][b]=1&m[][a][c]=2&m[][a][b]=3",
                "{\"m\":[{\"a\":{\"b\":\"1\",\"c\":\"2\"}},{\"a\":{\"b\":\"3\"}}]}");
    expect_json("m[][t][]=1&m[][t][]=2", "{\"m\":[{\"t\":[\"1\",\"2\"]}]}");
    /* Mixed with plain appends, the objects start after the strings. */
    expect_json("m[]=s&m[][id]=1", "{\"m\":[\"s\",{\"id\":\"1\"}]}");
    /* "[][]" says nothing Rack or we can read: dropped. */
    expect_json("m[][]=1", "{\"m\":[]}");
}
END_TEST

START_TEST(test_typed_readers)
{
    json_t *o = parse("t=true&f=0&n=42&bad=maybe&id[]=1&id[]=2&one=7");
    bool b;
    long long n;
    ck_assert_int_eq(eu_param_bool(o, "t", &b), 1);
    ck_assert(b);
    ck_assert_int_eq(eu_param_bool(o, "f", &b), 1);
    ck_assert(!b);
    ck_assert_int_eq(eu_param_bool(o, "bad", &b), -1);
    ck_assert_int_eq(eu_param_bool(o, "absent", &b), 0);
    ck_assert_int_eq(eu_param_int(o, "n", &n), 1);
    ck_assert_int_eq(n, 42);
    ck_assert_int_eq(eu_param_int(o, "bad", &n), -1);
    json_t *arr = eu_param_array(o, "id");
    ck_assert_int_eq(json_array_size(arr), 2);
    json_decref(arr);
    arr = eu_param_array(o, "one");
    ck_assert_int_eq(json_array_size(arr), 1);
    ck_assert_str_eq(json_string_value(json_array_get(arr, 0)), "7");
    json_decref(arr);
    json_object_set_new(o, "num", json_integer(9));
    ck_assert_str_eq(eu_param_str(o, "num"), "9");
    json_decref(o);
}
END_TEST

START_TEST(test_malformed)
{
    json_t *o = json_object();
    size_t n = 0;
    struct eu_error err = {0};
    /* A stray '%' is kept as text (as browsers send it); an unbalanced
     * bracket key is dropped rather than guessed at. */
    ck_assert_int_eq(eu_params_parse_urlencoded(o, "a=%zz", 5, &n, &err), 0);
    ck_assert_str_eq(json_string_value(json_object_get(o, "a")), "%zz");
    ck_assert_int_eq(eu_params_parse_urlencoded(o, "b[c=1", 5, &n, &err), 0);
    ck_assert_ptr_null(json_object_get(o, "b"));
    json_decref(o);
}
END_TEST

/* "key=v&key=v..." n times, with "%d" in key replaced by the index. */
static char *
repeat(const char *key, int n)
{
    size_t cap = (size_t)n * (strlen(key) + 16) + 1;
    char *s = malloc(cap), *o = s;
    for (int i = 0; i < n; i++) {
        if (i)
            *o++ = '&';
        /* key is a format with one %d; cppcheck cannot see the caller's. */
        // cppcheck-suppress wrongPrintfScanfArgNum
        o += sprintf(o, key, i);
        o += sprintf(o, "=v");
    }
    *o = '\0';
    return s;
}

/* Parses form into a fresh object; returns the parser's result, with the
 * error's status in *status. */
static int
parse_capped(const char *form, size_t *n, int *status)
{
    json_t *o = json_object();
    struct eu_error err = {0};
    int rc = eu_params_parse_urlencoded(o, form, strlen(form), n, &err);
    *status = err.status;
    if (rc < 0)
        ck_assert_ptr_nonnull(strstr(err.message, "Too many parameters"));
    json_decref(o);
    return rc;
}

START_TEST(test_caps)
{
    size_t n;
    int status;
    /* Arrays and objects hold EU_PARAMS_MAX_ENTRIES entries, not one more,
     * at the top level as well as nested. */
    const char *keys[] = {"id[]", "k%d", "a[%d]", "a[b][%d]"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        char *ok = repeat(keys[i], EU_PARAMS_MAX_ENTRIES);
        char *over = repeat(keys[i], EU_PARAMS_MAX_ENTRIES + 1);
        n = 0;
        ck_assert_msg(parse_capped(ok, &n, &status) == 0, "%s", keys[i]);
        n = 0;
        ck_assert_msg(parse_capped(over, &n, &status) == -1, "%s", keys[i]);
        ck_assert_int_eq(status, 400);
        free(ok);
        free(over);
    }
    /* Repeating a key replaces its value: no new entry, but each field
     * still counts toward EU_PARAMS_MAX_VALUES. */
    char *same = repeat("a", EU_PARAMS_MAX_VALUES);
    n = 0;
    ck_assert_int_eq(parse_capped(same, &n, &status), 0);
    ck_assert_uint_eq(n, EU_PARAMS_MAX_VALUES);
    ck_assert_int_eq(parse_capped("a=1", &n, &status), -1);
    ck_assert_int_eq(status, 400);
    free(same);
    /* The count carries over from the query to the body. */
    n = EU_PARAMS_MAX_VALUES - 1;
    ck_assert_int_eq(parse_capped("x=1", &n, &status), 0);
    ck_assert_int_eq(parse_capped("y=1", &n, &status), -1);
    /* Fields spread over arrays of 100 pass no per-array cap, only the
     * total one. */
    char *spread = malloc((size_t)(EU_PARAMS_MAX_VALUES + 1) * 16), *o = spread;
    for (int i = 0; i <= EU_PARAMS_MAX_VALUES; i++)
        o += sprintf(o, "%sa%d[]=v", i ? "&" : "", i / 100);
    n = 0;
    ck_assert_int_eq(parse_capped(spread, &n, &status), -1);
    ck_assert_uint_eq(n, EU_PARAMS_MAX_VALUES + 1);
    free(spread);
}
END_TEST

/* Found by fuzz/fuzz_params.c and fuzz/fuzz_multipart.c: a nested key whose
 * head is not UTF-8 made jansson free the new child object, which was then
 * written through. The parameter is dropped instead. */
START_TEST(test_key_not_utf8)
{
    json_t *o = json_object();
    size_t n = 0;
    struct eu_error err = {0};
    static const char *const forms[] = {"%FF[a]=1&b=2", "%C3[]=1&%80[x][y]=2"};
    for (size_t i = 0; i < 2; i++)
        ck_assert_int_eq(eu_params_parse_urlencoded(o, forms[i], strlen(forms[i]), &n, &err), 0);
    ck_assert_uint_eq(json_object_size(o), 1);
    ck_assert_str_eq(json_string_value(json_object_get(o, "b")), "2");

    static const char body[] = "--xx\r\n"
                               "Content-Disposition: form-data; name=\"\xff[a][b]\"\r\n\r\n"
                               "v\r\n--xx\r\n"
                               "Content-Disposition: form-data; name=\"c\"\r\n\r\n"
                               "w\r\n--xx--\r\n";
    json_t *m = json_object();
    n = 0;
    ck_assert_int_eq(eu_params_parse_multipart(m, "multipart/form-data; boundary=xx", body,
                                               sizeof(body) - 1, &n, &err),
                     0);
    ck_assert_uint_eq(json_object_size(m), 1);
    ck_assert_str_eq(json_string_value(json_object_get(m, "c")), "w");
    json_decref(m);
    json_decref(o);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("unit.api.params");
    TCase *tc = tcase_create("params");
    tcase_add_test(tc, test_plain_and_decoding);
    tcase_add_test(tc, test_arrays_and_nesting);
    tcase_add_test(tc, test_typed_readers);
    tcase_add_test(tc, test_malformed);
    tcase_add_test(tc, test_caps);
    tcase_add_test(tc, test_key_not_utf8);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
