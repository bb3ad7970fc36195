/*
 * Tests for the process's routes (src/app/routes.c and the tables beside the
 * handlers): the router builds (no two routes collide), the number of
 * routes is the one expected (a table left out of the list would lower it),
 * every route is reached by a path written from its own pattern, and each
 * route's CORS and rate-limit flags are what Mastodon gives its path, so
 * moving the decision from path prefixes into the tables changed nothing.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/arena.h"
#include "eunha/router.h"
#include "eunha/routes.h"

/* Routes and areas in all tables. Change it with the tables, on purpose. */
#define EXPECTED_ROUTES 436
#define EXPECTED_AREAS 3

static struct eu_router *router;
static struct eu_arena *arena;

static void
setup(void)
{
    char err[256] = "";
    router = eu_routes_router_new(err, sizeof err);
    ck_assert_msg(router != NULL, "%s", err);
    arena = eu_arena_new();
}

static void
teardown(void)
{
    eu_router_free(router);
    eu_arena_free(arena);
}

static bool
is_area(const struct eu_route *rt)
{
    size_t n = strlen(rt->pattern);
    return n >= 2 && strcmp(rt->pattern + n - 2, "/*") == 0;
}

static bool
starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

START_TEST(test_count)
{
    size_t routes = 0, areas = 0;
    for (size_t t = 0; eu_route_tables[t]; t++)
        for (const struct eu_route *rt = eu_route_tables[t]; rt->pattern; rt++)
            is_area(rt) ? areas++ : routes++;
    ck_assert_uint_eq(routes, EXPECTED_ROUTES);
    ck_assert_uint_eq(areas, EXPECTED_AREAS);
}
END_TEST

/* Writes the pattern with each ":name" replaced by "v<k>", k counting. */
static void
concrete_path(const char *pattern, char *out, size_t len)
{
    size_t o = 0;
    int k = 0;
    for (const char *p = pattern; *p && o + 8 < len;) {
        if (*p == ':') {
            o += (size_t)snprintf(out + o, len - o, "v%d", k++);
            p += strcspn(p, "/");
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = '\0';
}

START_TEST(test_every_route_reachable)
{
    size_t reached = 0;
    for (size_t t = 0; eu_route_tables[t]; t++) {
        for (const struct eu_route *rt = eu_route_tables[t]; rt->pattern; rt++) {
            if (is_area(rt))
                continue;
            char path[256];
            concrete_path(rt->pattern, path, sizeof path);
            for (unsigned m = 1; m <= EU_HTTP_OPTIONS; m <<= 1) {
                if (!(rt->methods & m))
                    continue;
                const struct eu_route *got = NULL;
                struct eu_route_params params;
                char allow[128];
                enum eu_route_match r =
                    eu_router_match(router, m, path, arena, &got, &params, allow, sizeof allow);
                ck_assert_msg(r == EU_ROUTE_FOUND && got == rt, "%s %s does not reach %s",
                              eu_http_method_name(m), path, rt->pattern);
                for (size_t i = 0; i < params.n; i++) {
                    char want[24];
                    snprintf(want, sizeof want, "v%zu", i);
                    ck_assert_str_eq(params.p[i].value, want);
                }
            }
            reached++;
        }
    }
    ck_assert_uint_eq(reached, EXPECTED_ROUTES);
}
END_TEST

/* Mastodon's rack-cors and rack-attack cover these paths; the server used to
 * test them on every request, and the tables must say the same. */
static bool
mastodon_cors(const char *path)
{
    return starts_with(path, "/api/") || starts_with(path, "/.well-known/") ||
           starts_with(path, "/nodeinfo/") || strcmp(path, "/oauth/token") == 0 ||
           strcmp(path, "/oauth/revoke") == 0;
}

static bool
mastodon_limited(const char *path)
{
    return starts_with(path, "/api/") || starts_with(path, "/oauth/") ||
           starts_with(path, "/auth/");
}

START_TEST(test_flags_match_mastodon)
{
    for (size_t t = 0; eu_route_tables[t]; t++) {
        for (const struct eu_route *rt = eu_route_tables[t]; rt->pattern; rt++) {
            if (is_area(rt))
                continue;
            const char *p = rt->pattern;
            bool admin = rt->flags & (EU_ROUTE_ADMIN | EU_ROUTE_ADMIN_OPEN);
            ck_assert_msg(!(rt->flags & EU_ROUTE_CORS) == (admin || !mastodon_cors(p)),
                          "CORS flag of %s", p);
            ck_assert_msg(!(rt->flags & EU_ROUTE_LIMIT_API) == (admin || !mastodon_limited(p)),
                          "rate-limit flag of %s", p);
            /* rack-attack's throttle_sign_up_attempts: the API's and the
             * sign-up form's POST (Mastodon's POST /auth). */
            bool signup = rt->methods == EU_HTTP_POST &&
                          (strcmp(p, "/api/v1/accounts") == 0 || strcmp(p, "/auth/sign_up") == 0);
            ck_assert_msg(!(rt->flags & EU_ROUTE_LIMIT_SIGNUP) == !signup, "sign-up flag of %s", p);
            bool upload = strcmp(p, "/api/v1/media") == 0 || strcmp(p, "/api/v2/media") == 0 ||
                          strcmp(p, "/api/v1/accounts/update_credentials") == 0 ||
                          (rt->methods == EU_HTTP_POST && strcmp(p, "/settings/imports") == 0) ||
                          strcmp(p, "/settings/profile") == 0 ||
                          (rt->methods == EU_HTTP_PUT &&
                           (strcmp(p, "/admin/v1/tenants/:domain/instance/thumbnail") == 0 ||
                            strcmp(p, "/api/v1/admin/instance/thumbnail") == 0));
            ck_assert_msg(!(rt->flags & EU_ROUTE_UPLOAD) == !upload, "upload flag of %s", p);
        }
    }
}
END_TEST

/* What a path no route takes gets: the area's CORS, and a 404. */
START_TEST(test_unknown_paths)
{
    static const struct {
        const char *path;
        bool cors;
    } cases[] = {
        {"/api/v1/nothing", true},
        {"/api/v3/instance", true},
        {"/api/foo", true},
        {"/.well-known/nothing", true},
        {"/nodeinfo/9.9", true},
        {"/oauth/nothing/here", false},
        {"/users/a/nothing/here", false},
        {"/a/b/c/d", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct eu_route *rt;
        struct eu_route_params params;
        char allow[128];
        ck_assert_msg(eu_router_match(router, EU_HTTP_GET, cases[i].path, arena, &rt, &params,
                                      allow, sizeof allow) == EU_ROUTE_NOT_FOUND,
                      "%s", cases[i].path);
        ck_assert_msg(!(eu_router_path_flags(router, cases[i].path) & EU_ROUTE_CORS) ==
                          !cases[i].cors,
                      "CORS of %s", cases[i].path);
    }
    /* a CORS route's path has CORS for every method, for the preflight */
    ck_assert(eu_router_path_flags(router, "/oauth/token") & EU_ROUTE_CORS);
    ck_assert(eu_router_path_flags(router, "/api/v1/statuses/1") & EU_ROUTE_CORS);
    ck_assert(!(eu_router_path_flags(router, "/oauth/authorize") & EU_ROUTE_CORS));
    ck_assert(!(eu_router_path_flags(router, "/users/alice") & EU_ROUTE_CORS));
}
END_TEST

static Suite *
routes_suite(void)
{
    Suite *s = suite_create("routes");
    TCase *tc = tcase_create("tables");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_count);
    tcase_add_test(tc, test_every_route_reachable);
    tcase_add_test(tc, test_flags_match_mastodon);
    tcase_add_test(tc, test_unknown_paths);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(routes_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
