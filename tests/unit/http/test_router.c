/*
 * Tests for the route trie: parameters, literal-over-parameter precedence and
 * backtracking, 404 and 405 with the Allow header, slashes, percent-decoding,
 * areas and the flags of a path, and rejection of malformed or duplicate
 * routes and areas.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/router.h"

static void
h_a(struct eu_req *req)
{
}

static void
h_b(struct eu_req *req)
{
}

static const struct eu_route routes[] = {
    {EU_HTTP_GET, "/", h_a, NULL, EU_ROUTE_NO_TENANT},
    {EU_HTTP_GET, "/api/v1/instance", h_a, NULL, 0},
    {EU_HTTP_GET, "/api/v1/accounts/lookup", h_a, "read:accounts", 0},
    {EU_HTTP_GET, "/api/v1/accounts/:id", h_b, "read:accounts", EU_ROUTE_AUTH_OPT},
    {EU_HTTP_POST, "/api/v1/accounts/:id/follow", h_a, "write:follows", EU_ROUTE_AUTH},
    {EU_HTTP_GET | EU_HTTP_POST, "/api/v1/statuses", h_a, NULL, 0},
    {EU_HTTP_DELETE, "/api/v1/statuses/:id", h_a, NULL, 0},
    {EU_HTTP_GET, "/api/v1/statuses/:id", h_b, NULL, 0},
    {EU_HTTP_PUT, "/api/v1/statuses/:id", h_a, NULL, 0},
    {EU_HTTP_OPTIONS | EU_HTTP_PATCH, "/api/v1/statuses/:id", h_a, NULL, 0},
    {EU_HTTP_GET, "/a/:x/:y", h_a, NULL, 0},
    {EU_HTTP_GET, "/b/lit/end", h_a, NULL, 0},
    {EU_HTTP_GET, "/b/:name/other", h_b, NULL, 0},
    {EU_HTTP_GET | EU_HTTP_HEAD, "/h", h_a, NULL, 0},
    {EU_HTTP_DELETE, "/admin/v1/tenants/:domain", h_a, NULL, EU_ROUTE_ADMIN},
};
#define N_ROUTES (sizeof routes / sizeof routes[0])

static struct eu_router *router;
static struct eu_arena *arena;

static void
setup(void)
{
    char err[256] = "";
    router = eu_router_new(routes, N_ROUTES, err, sizeof err);
    ck_assert_msg(router != NULL, "%s", err);
    arena = eu_arena_new();
}

static void
teardown(void)
{
    eu_router_free(router);
    eu_arena_free(arena);
}

static enum eu_route_match
match(unsigned method, const char *path, const struct eu_route **rt, struct eu_route_params *params,
      char *allow)
{
    return eu_router_match(router, method, path, arena, rt, params, allow, 128);
}

START_TEST(test_literal)
{
    const struct eu_route *rt;
    struct eu_route_params params;
    char allow[128];
    ck_assert_int_eq(match(EU_HTTP_GET, "/api/v1/instance", &rt, &params, allow), EU_ROUTE_FOUND);
    ck_assert_ptr_eq(rt, &routes[1]);
    ck_assert_uint_eq(params.n, 0);
    ck_assert_int_eq(match(EU_HTTP_GET, "/", &rt, &params, allow), EU_ROUTE_FOUND);
    ck_assert_ptr_eq(rt, &routes[0]);
    ck_assert_int_eq(match(EU_HTTP_POST, "/api/v1/statuses", &rt, &params, allow), EU_ROUTE_FOUND);
    ck_assert_ptr_eq(rt, &routes[5]);
}
END_TEST

START_TEST(test_params)
{
    const struct eu_route *rt;
    struct eu_route_params params;
    char allow[128];
    ck_assert_int_eq(match(EU_HTTP_GET, "/api/v1/accounts/123", &rt, &params, allow),
                     EU_ROUTE_FOUND);
    ck_assert_ptr_eq(rt, &routes[3]);
    ck_assert_uint_eq(params.n, 1);
    ck_assert_str_eq(params.p[0].name, "id");
    ck_assert_str_eq(eu_route_params_get(&params, "id"), "123");
    ck_assert_ptr_null(eu_route_params_get(&params, "nope"));

    ck_assert_int_eq(match(EU_HTTP_POST, "/api/v1/accounts/9/follow", &rt, &params, allow),
                     EU_ROUTE_FOUND);
    ck_assert_ptr_eq(rt, &routes[4]);
    ck_assert_str_eq(eu_route_params_get(&params, "id"), "9");

    ck_assert_int_eq(match(EU_HTTP_GET, "/a/one/two", &rt, &params, allow), EU_ROUTE_FOUND);
    ck_assert_uint_eq(params.n, 2);
    ck_assert_str_eq(eu_route_params_get(&params, "x"), "one");
    ck_assert_str_eq(eu_route_params_get(&params, "y"), "two");
    ck_assert_str_eq(params.p[1].name, "y");

    /* Per-method routes on one node keep their own handlers. */
    ck_assert_int_eq(match(EU_HTTP_GET, "/api/v1/statuses/5", &rt, &params, allow), EU_ROUTE_FOUND);
    ck_assert_ptr_eq(rt, &routes[7]);
    ck_assert_int_eq(match(EU_HTTP_PATCH, "/api/v1/statuses/5", &rt, &params, allow),
                     EU_ROUTE_FOUND);
    ck_assert_ptr_eq(rt, &routes[9]);
}
END_TEST

START_TEST(test_literal_beats_param)
{
    const struct eu_route *rt;
    struct eu_route_params params;
    char allow[128];
    ck_assert_int_eq(match(EU_HTTP_GET, "/api/v1/accounts/lookup", &rt, &params, allow),
                     EU_ROUTE_FOUND);
    ck_assert_ptr_eq(rt, &routes[2]);
    ck_assert_uint_eq(params.n, 0);
    /* the literal branch dead-ends, so the parameter branch is tried */
    ck_assert_int_eq(match(EU_HTTP_GET, "/b/lit/other", &rt, &params, allow), EU_ROUTE_FOUND);
    ck_assert_ptr_eq(rt, &routes[12]);
    ck_assert_str_eq(eu_route_params_get(&params, "name"), "lit");
    ck_assert_int_eq(match(EU_HTTP_GET, "/b/lit/end", &rt, &params, allow), EU_ROUTE_FOUND);
    ck_assert_ptr_eq(rt, &routes[11]);
}
END_TEST

START_TEST(test_not_found)
{
    const struct eu_route *rt = &routes[0];
    struct eu_route_params params;
    char allow[128];
    static const char *const paths[] = {
        "/api/v1/nothing",    "/api/v1", "/api/v1/accounts/1/unfollow",
        "/api/v1/instance/x", "/a/one",  "/a/one/two/three",
        "/API/v1/instance",
    };
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        ck_assert_msg(match(EU_HTTP_GET, paths[i], &rt, &params, allow) == EU_ROUTE_NOT_FOUND, "%s",
                      paths[i]);
        ck_assert_ptr_null(rt);
        ck_assert_uint_eq(params.n, 0);
    }
    /* deeper than the router supports */
    char deep[256] = "";
    for (int i = 0; i < 40; i++)
        strcat(deep, "/x");
    ck_assert_int_eq(match(EU_HTTP_GET, deep, &rt, &params, allow), EU_ROUTE_NOT_FOUND);
}
END_TEST

START_TEST(test_method_not_allowed)
{
    const struct eu_route *rt;
    struct eu_route_params params;
    char allow[128];
    ck_assert_int_eq(match(EU_HTTP_POST, "/api/v1/instance", &rt, &params, allow),
                     EU_ROUTE_METHOD_NOT_ALLOWED);
    ck_assert_str_eq(allow, "GET");
    ck_assert_ptr_null(rt);
    ck_assert_int_eq(match(EU_HTTP_DELETE, "/api/v1/statuses", &rt, &params, allow),
                     EU_ROUTE_METHOD_NOT_ALLOWED);
    ck_assert_str_eq(allow, "GET, POST");
    ck_assert_int_eq(match(EU_HTTP_POST, "/api/v1/statuses/1", &rt, &params, allow),
                     EU_ROUTE_METHOD_NOT_ALLOWED);
    ck_assert_str_eq(allow, "GET, PUT, PATCH, DELETE, OPTIONS");
    ck_assert_int_eq(match(EU_HTTP_POST, "/h", &rt, &params, allow), EU_ROUTE_METHOD_NOT_ALLOWED);
    ck_assert_str_eq(allow, "GET, HEAD");
    /* HEAD is only allowed where a route says so */
    ck_assert_int_eq(match(EU_HTTP_HEAD, "/api/v1/instance", &rt, &params, allow),
                     EU_ROUTE_METHOD_NOT_ALLOWED);
    ck_assert_int_eq(match(EU_HTTP_HEAD, "/h", &rt, &params, allow), EU_ROUTE_FOUND);
    /* literal wins for the Allow header too */
    ck_assert_int_eq(match(EU_HTTP_DELETE, "/api/v1/accounts/lookup", &rt, &params, allow),
                     EU_ROUTE_METHOD_NOT_ALLOWED);
    ck_assert_str_eq(allow, "GET");
    /* a short buffer is truncated, not overrun */
    char small[6];
    ck_assert_int_eq(eu_router_match(router, EU_HTTP_POST, "/api/v1/statuses/1", arena, &rt,
                                     &params, small, sizeof small),
                     EU_ROUTE_METHOD_NOT_ALLOWED);
    ck_assert_str_eq(small, "GET");
}
END_TEST

START_TEST(test_backtrack_to_param)
{
    /* The literal "lookup" has no "follow" child, so the :id branch is
     * tried and matches with id "lookup". */
    const struct eu_route *rt;
    struct eu_route_params params;
    char allow[128];
    ck_assert_int_eq(match(EU_HTTP_POST, "/api/v1/accounts/lookup/follow", &rt, &params, allow),
                     EU_ROUTE_FOUND);
    ck_assert_ptr_eq(rt, &routes[4]);
    ck_assert_str_eq(eu_route_params_get(&params, "id"), "lookup");
}
END_TEST

START_TEST(test_slashes)
{
    const struct eu_route *rt;
    struct eu_route_params params;
    char allow[128];
    ck_assert_int_eq(match(EU_HTTP_GET, "/api/v1/instance/", &rt, &params, allow), EU_ROUTE_FOUND);
    ck_assert_ptr_eq(rt, &routes[1]);
    ck_assert_int_eq(match(EU_HTTP_GET, "/api//v1///instance", &rt, &params, allow),
                     EU_ROUTE_FOUND);
    ck_assert_int_eq(match(EU_HTTP_GET, "//", &rt, &params, allow), EU_ROUTE_FOUND);
    ck_assert_ptr_eq(rt, &routes[0]);
    ck_assert_int_eq(match(EU_HTTP_GET, "/api/v1/accounts/7/", &rt, &params, allow),
                     EU_ROUTE_FOUND);
    ck_assert_str_eq(eu_route_params_get(&params, "id"), "7");
}
END_TEST

START_TEST(test_percent_decoding)
{
    const struct eu_route *rt;
    struct eu_route_params params;
    char allow[128];
    ck_assert_int_eq(match(EU_HTTP_DELETE, "/admin/v1/tenants/a%2Eexample", &rt, &params, allow),
                     EU_ROUTE_FOUND);
    ck_assert_str_eq(eu_route_params_get(&params, "domain"), "a.example");
    ck_assert_int_eq(match(EU_HTTP_GET, "/a/x%2Fy/caf%c3%a9%20+", &rt, &params, allow),
                     EU_ROUTE_FOUND);
    ck_assert_str_eq(eu_route_params_get(&params, "x"), "x/y");
    ck_assert_str_eq(eu_route_params_get(&params, "y"), "caf\xc3\xa9 +");
    /* malformed escapes and %00 match nothing */
    ck_assert_int_eq(match(EU_HTTP_GET, "/a/x/%zz", &rt, &params, allow), EU_ROUTE_NOT_FOUND);
    ck_assert_int_eq(match(EU_HTTP_GET, "/a/x/ab%2", &rt, &params, allow), EU_ROUTE_NOT_FOUND);
    ck_assert_int_eq(match(EU_HTTP_GET, "/a/x/%", &rt, &params, allow), EU_ROUTE_NOT_FOUND);
    ck_assert_int_eq(match(EU_HTTP_GET, "/a/x/1%00", &rt, &params, allow), EU_ROUTE_NOT_FOUND);
    ck_assert_uint_eq(params.n, 0);
}
END_TEST

START_TEST(test_add_appends)
{
    static const struct eu_route more[] = {
        {EU_HTTP_GET, "/extra/:thing", h_a, NULL, 0},
        {EU_HTTP_POST, "/api/v1/instance", h_b, NULL, 0},
    };
    char err[256];
    ck_assert_int_eq(eu_router_add(router, more, 2, err, sizeof err), 0);
    const struct eu_route *rt;
    struct eu_route_params params;
    char allow[128];
    ck_assert_int_eq(match(EU_HTTP_GET, "/extra/1", &rt, &params, allow), EU_ROUTE_FOUND);
    ck_assert_ptr_eq(rt, &more[0]);
    ck_assert_int_eq(match(EU_HTTP_POST, "/api/v1/instance", &rt, &params, allow), EU_ROUTE_FOUND);
    ck_assert_ptr_eq(rt, &more[1]);
    ck_assert_int_eq(match(EU_HTTP_GET, "/api/v1/instance", &rt, &params, allow), EU_ROUTE_FOUND);
    ck_assert_ptr_eq(rt, &routes[1]);
}
END_TEST

START_TEST(test_duplicates)
{
    char err[256];
    static const struct eu_route dup_existing[] = {
        {EU_HTTP_GET, "/ok/new", h_a, NULL, 0},
        {EU_HTTP_GET | EU_HTTP_POST, "/api/v1/accounts/:other", h_a, NULL, 0},
    };
    ck_assert_int_eq(eu_router_add(router, dup_existing, 2, err, sizeof err), -1);
    ck_assert_str_eq(err, "duplicate route GET /api/v1/accounts/:other (already added as "
                          "/api/v1/accounts/:id)");
    /* all-or-nothing: the valid first route was not added */
    const struct eu_route *rt;
    struct eu_route_params params;
    char allow[128];
    ck_assert_int_eq(match(EU_HTTP_GET, "/ok/new", &rt, &params, allow), EU_ROUTE_NOT_FOUND);

    static const struct eu_route dup_within[] = {
        {EU_HTTP_PUT | EU_HTTP_DELETE, "/x/:a", h_a, NULL, 0},
        {EU_HTTP_DELETE, "/x/:b", h_a, NULL, 0},
    };
    ck_assert_ptr_null(eu_router_new(dup_within, 2, err, sizeof err));
    ck_assert_str_eq(err, "duplicate route DELETE /x/:b (already added as /x/:a)");

    /* same pattern, other methods: fine */
    static const struct eu_route ok[] = {
        {EU_HTTP_PUT, "/x/:a", h_a, NULL, 0},
        {EU_HTTP_DELETE, "/x/:a", h_a, NULL, 0},
        {EU_HTTP_GET, "/x/a", h_a, NULL, 0},
    };
    struct eu_router *r = eu_router_new(ok, 3, err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    eu_router_free(r);
}
END_TEST

static const struct {
    struct eu_route route;
    const char *err;
} malformed[] = {
    {{EU_HTTP_GET, "api", h_a, NULL, 0}, "route pattern 'api' must start with '/'"},
    {{EU_HTTP_GET, "/a//b", h_a, NULL, 0}, "route pattern '/a//b' has an empty segment"},
    {{EU_HTTP_GET, "/a/", h_a, NULL, 0}, "route pattern '/a/' ends with '/'"},
    {{EU_HTTP_GET, "/a/:", h_a, NULL, 0}, "route pattern '/a/:' has a parameter without a name"},
    {{EU_HTTP_GET, "/:id/:id", h_a, NULL, 0}, "route pattern '/:id/:id' repeats parameter ':id'"},
    {{EU_HTTP_GET, "/:a/:b/:c/:d/:e/:f/:g/:h/:i", h_a, NULL, 0},
     "route pattern '/:a/:b/:c/:d/:e/:f/:g/:h/:i' has more than 8 parameters"},
    {{0, "/a", h_a, NULL, 0}, "route '/a' has no valid methods"},
    {{1u << 9, "/a", h_a, NULL, 0}, "route '/a' has no valid methods"},
    {{EU_HTTP_GET, "/a", NULL, NULL, 0}, "route '/a' has no handler"},
};

START_TEST(test_malformed)
{
    char err[256] = "";
    ck_assert_ptr_null(eu_router_new(&malformed[_i].route, 1, err, sizeof err));
    ck_assert_str_eq(err, malformed[_i].err);
}
END_TEST

START_TEST(test_method_names)
{
    ck_assert_str_eq(eu_http_method_name(EU_HTTP_GET), "GET");
    ck_assert_str_eq(eu_http_method_name(EU_HTTP_OPTIONS), "OPTIONS");
    ck_assert_str_eq(eu_http_method_name(EU_HTTP_PATCH), "PATCH");
    ck_assert_str_eq(eu_http_method_name(EU_HTTP_GET | EU_HTTP_POST), "");
    ck_assert_str_eq(eu_http_method_name(0), "");
}
END_TEST

/* Areas: what paths no route takes get, here beside routes a web page's
 * "/:acct/:id" would otherwise catch. */
static const struct eu_route area_routes[] = {
    {EU_HTTP_GET, "/api/v1/instance", h_a, NULL, EU_ROUTE_CORS},
    {EU_HTTP_GET | EU_HTTP_POST, "/api/v1/statuses", h_a, NULL, EU_ROUTE_CORS | EU_ROUTE_AUTH},
    {EU_HTTP_GET, "/:acct", h_b, NULL, 0},
    {EU_HTTP_GET, "/:acct/:id", h_b, NULL, 0},
    {0, "/api/*", NULL, NULL, EU_ROUTE_CORS},
    {0, "/api/v2/*", NULL, NULL, EU_ROUTE_LIMIT_API},
};

START_TEST(test_areas)
{
    char err[256] = "";
    struct eu_router *r =
        eu_router_new(area_routes, sizeof area_routes / sizeof area_routes[0], err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    const struct eu_route *rt;
    struct eu_route_params params;
    char allow[128];
#define AMATCH(m, p) eu_router_match(r, m, p, arena, &rt, &params, allow, sizeof allow)
    ck_assert_int_eq(AMATCH(EU_HTTP_GET, "/api/v1/instance"), EU_ROUTE_FOUND);
    ck_assert_ptr_eq(rt, &area_routes[0]);
    ck_assert_uint_eq(eu_router_path_flags(r, "/api/v1/instance"), EU_ROUTE_CORS);

    /* under an area, nothing is found, but the area's flags apply */
    ck_assert_int_eq(AMATCH(EU_HTTP_GET, "/api/v1/nothing"), EU_ROUTE_NOT_FOUND);
    ck_assert_ptr_null(rt);
    ck_assert_uint_eq(eu_router_path_flags(r, "/api/v1/nothing"), EU_ROUTE_CORS);
    /* an area beats a parameter route higher up, as a literal would */
    ck_assert_int_eq(AMATCH(EU_HTTP_GET, "/api/foo"), EU_ROUTE_NOT_FOUND);
    ck_assert_uint_eq(eu_router_path_flags(r, "/api/foo"), EU_ROUTE_CORS);
    ck_assert_int_eq(AMATCH(EU_HTTP_GET, "/other/1"), EU_ROUTE_FOUND);
    ck_assert_ptr_eq(rt, &area_routes[3]);
    ck_assert_uint_eq(eu_router_path_flags(r, "/other/1"), 0);
    /* an area covers the paths below its prefix, not the prefix */
    ck_assert_int_eq(AMATCH(EU_HTTP_GET, "/api"), EU_ROUTE_FOUND);
    ck_assert_ptr_eq(rt, &area_routes[2]);
    ck_assert_uint_eq(eu_router_path_flags(r, "/api/"), 0);
    /* the deeper area wins */
    ck_assert_int_eq(AMATCH(EU_HTTP_GET, "/api/v2/x/y"), EU_ROUTE_NOT_FOUND);
    ck_assert_uint_eq(eu_router_path_flags(r, "/api/v2/x/y"), EU_ROUTE_LIMIT_API);
    /* a route there for another method still answers 405 */
    ck_assert_int_eq(AMATCH(EU_HTTP_PUT, "/api/v1/statuses"), EU_ROUTE_METHOD_NOT_ALLOWED);
    ck_assert_str_eq(allow, "GET, POST");
    ck_assert_uint_eq(eu_router_path_flags(r, "/api/v1/statuses"), EU_ROUTE_CORS | EU_ROUTE_AUTH);
    /* deeper than any route, still under the area */
    char deep[256] = "/api";
    for (int i = 0; i < 40; i++)
        strcat(deep, "/x");
    ck_assert_int_eq(AMATCH(EU_HTTP_GET, deep), EU_ROUTE_NOT_FOUND);
    ck_assert_uint_eq(eu_router_path_flags(r, deep), EU_ROUTE_CORS);
    ck_assert_uint_eq(eu_router_path_flags(r, deep + 4), 0);
    ck_assert_uint_eq(eu_router_path_flags(r, "/nope/a/b"), 0);
#undef AMATCH
    eu_router_free(r);
}
END_TEST

START_TEST(test_bad_areas)
{
    char err[256] = "";
    static const struct eu_route with_handler[] = {{0, "/api/*", h_a, NULL, 0}};
    ck_assert_ptr_null(eu_router_new(with_handler, 1, err, sizeof err));
    ck_assert_str_eq(err, "area '/api/*' takes no request: no methods, no handler");
    static const struct eu_route with_method[] = {{EU_HTTP_GET, "/api/*", NULL, NULL, 0}};
    ck_assert_ptr_null(eu_router_new(with_method, 1, err, sizeof err));
    ck_assert_str_eq(err, "area '/api/*' takes no request: no methods, no handler");
    static const struct eu_route star_inside[] = {{0, "/a/*/b", NULL, NULL, 0}};
    ck_assert_ptr_null(eu_router_new(star_inside, 1, err, sizeof err));
    ck_assert_str_eq(err, "route pattern '/a/*/b' has '*' before its end");
    static const struct eu_route twice[] = {
        {0, "/a/:x/*", NULL, NULL, 0},
        {0, "/a/:y/*", NULL, NULL, EU_ROUTE_CORS},
    };
    ck_assert_ptr_null(eu_router_new(twice, 2, err, sizeof err));
    ck_assert_str_eq(err, "duplicate area /a/:y/* (already added as /a/:x/*)");
    struct eu_router *r = eu_router_new(twice, 1, err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    ck_assert_int_eq(eu_router_add(r, twice + 1, 1, err, sizeof err), -1);
    ck_assert_str_eq(err, "duplicate area /a/:y/* (already added as /a/:x/*)");
    eu_router_free(r);
}
END_TEST

static Suite *
router_suite(void)
{
    Suite *s = suite_create("router");
    TCase *tc = tcase_create("match");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_literal);
    tcase_add_test(tc, test_params);
    tcase_add_test(tc, test_literal_beats_param);
    tcase_add_test(tc, test_not_found);
    tcase_add_test(tc, test_method_not_allowed);
    tcase_add_test(tc, test_backtrack_to_param);
    tcase_add_test(tc, test_slashes);
    tcase_add_test(tc, test_percent_decoding);
    suite_add_tcase(s, tc);
    tc = tcase_create("build");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_add_appends);
    tcase_add_test(tc, test_duplicates);
    tcase_add_loop_test(tc, test_malformed, 0, (int)(sizeof malformed / sizeof malformed[0]));
    tcase_add_test(tc, test_method_names);
    suite_add_tcase(s, tc);
    tc = tcase_create("areas");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_areas);
    tcase_add_test(tc, test_bad_areas);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(router_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
