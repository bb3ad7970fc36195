/*
 * The bracket rules of form parameters: what Mastodon clients send as
 * urlencoded forms must read the same as the JSON they send elsewhere.
 */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/params.h"

static json_t *
parse(const char *s)
{
    json_t *o = json_object();
    ck_assert_int_eq(eu_params_parse_urlencoded(o, s, strlen(s)), 0);
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
    /* A stray '%' is kept as text (as browsers send it); an unbalanced
     * bracket key is dropped rather than guessed at. */
    ck_assert_int_eq(eu_params_parse_urlencoded(o, "a=%zz", 5), 0);
    ck_assert_str_eq(json_string_value(json_object_get(o, "a")), "%zz");
    ck_assert_int_eq(eu_params_parse_urlencoded(o, "b[c=1", 5), 0);
    ck_assert_ptr_null(json_object_get(o, "b"));
    json_decref(o);
}
END_TEST

/* Found by fuzz/fuzz_params.c and fuzz/fuzz_multipart.c: a nested key whose
 * head is not UTF-8 made jansson free the new child object, which was then
 * written through. The parameter is dropped instead. */
START_TEST(test_key_not_utf8)
{
    json_t *o = json_object();
    static const char *const forms[] = {"%FF[a]=1&b=2", "%C3[]=1&%80[x][y]=2"};
    for (size_t i = 0; i < 2; i++)
        ck_assert_int_eq(eu_params_parse_urlencoded(o, forms[i], strlen(forms[i])), 0);
    ck_assert_uint_eq(json_object_size(o), 1);
    ck_assert_str_eq(json_string_value(json_object_get(o, "b")), "2");

    static const char body[] = "--xx\r\n"
                               "Content-Disposition: form-data; name=\"\xff[a][b]\"\r\n\r\n"
                               "v\r\n--xx\r\n"
                               "Content-Disposition: form-data; name=\"c\"\r\n\r\n"
                               "w\r\n--xx--\r\n";
    json_t *m = json_object();
    ck_assert_int_eq(
        eu_params_parse_multipart(m, "multipart/form-data; boundary=xx", body, sizeof(body) - 1),
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
    tcase_add_test(tc, test_key_not_utf8);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
