/*
 * Tests for the address helpers: Host header normalisation, tenant domain
 * validity, trusted-proxy matching and listen address splitting.
 */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/net.h"

static const struct {
    const char *in;
    const char *out; /* NULL: must be rejected */
} host_cases[] = {
    {"a.example", "a.example"},
    {"A.Example:8080", "a.example"},
    {"a.example:", "a.example"},
    {"a.example.", "a.example"},
    {"a.example.:443", "a.example"},
    {"LOCALHOST", "localhost"},
    {"127.0.0.1:80", "127.0.0.1"},
    {"[::1]:80", "::1"},
    {"[::1]", "::1"},
    {"[2001:DB8::1]:8080", "2001:db8::1"},
    {"::1", "::1"},
    {"", NULL},
    {":80", NULL},
    {".", NULL},
    {"a.example:http", NULL},
    {"a.example:99999", NULL},
    {"a example", NULL},
    {"a/b", NULL},
    {"a.example\r\n", NULL},
    {"user@a.example", NULL},
    {"[::1", NULL},
    {"[::1]x", NULL},
    {"[zz::1]:80", NULL},
    {"[]:80", NULL},
    {"a:b:c", NULL},
    {"caf\xc3\xa9.example", NULL},
    /* Found by fuzz/fuzz_host.c: "aa.." became "aa.", which normalised
     * again to "aa". */
    {"aa..", NULL},
    {"a.example..:80", NULL},
    {"..", NULL},
};

START_TEST(test_host_normalize)
{
    char out[256];
    int rc = eu_host_normalize(host_cases[_i].in, out, sizeof out);
    if (host_cases[_i].out) {
        ck_assert_msg(rc == 0, "'%s' rejected", host_cases[_i].in);
        ck_assert_str_eq(out, host_cases[_i].out);
    } else {
        ck_assert_msg(rc == -1, "'%s' accepted as '%s'", host_cases[_i].in, out);
    }
}
END_TEST

START_TEST(test_host_normalize_too_long)
{
    char out[5];
    ck_assert_int_eq(eu_host_normalize("abcd", out, sizeof out), 0);
    ck_assert_int_eq(eu_host_normalize("abcde", out, sizeof out), -1);
    ck_assert_int_eq(eu_host_normalize(NULL, out, sizeof out), -1);
}
END_TEST

START_TEST(test_domain_is_valid)
{
    ck_assert(eu_domain_is_valid("a.example"));
    ck_assert(eu_domain_is_valid("localhost"));
    ck_assert(eu_domain_is_valid("x"));
    ck_assert(eu_domain_is_valid("a-b.c0.example"));
    ck_assert(eu_domain_is_valid("123.example"));
    ck_assert(!eu_domain_is_valid(""));
    ck_assert(!eu_domain_is_valid(NULL));
    ck_assert(!eu_domain_is_valid("A.example"));
    ck_assert(!eu_domain_is_valid("-a.example"));
    ck_assert(!eu_domain_is_valid("a-.example"));
    ck_assert(!eu_domain_is_valid("a..example"));
    ck_assert(!eu_domain_is_valid(".a.example"));
    ck_assert(!eu_domain_is_valid("a.example."));
    ck_assert(!eu_domain_is_valid("a_b.example"));
    ck_assert(!eu_domain_is_valid("a.example:80"));
    ck_assert(!eu_domain_is_valid("a example"));

    char label[80];
    memset(label, 'a', 63);
    strcpy(label + 63, ".x");
    ck_assert(eu_domain_is_valid(label));
    memset(label, 'a', 64);
    strcpy(label + 64, ".x");
    ck_assert(!eu_domain_is_valid(label));

    /* 253 characters in all is the limit: 63*4 + 3 dots = 255 is too long */
    char name[300];
    size_t n = 0;
    for (int i = 0; i < 4; i++) {
        memset(name + n, 'b', 63);
        n += 63;
        name[n++] = '.';
    }
    name[n - 1] = '\0'; /* 255 */
    ck_assert(!eu_domain_is_valid(name));
    name[253] = '\0'; /* ends in "bb", 253 chars */
    ck_assert(eu_domain_is_valid(name));
}
END_TEST

START_TEST(test_ip_in_list_v4)
{
    char *list[] = {"10.0.0.0/8", "192.168.1.7", "172.16.0.0/12"};
    size_t n = 3;
    ck_assert(eu_ip_in_list("10.1.2.3", list, n));
    ck_assert(eu_ip_in_list("192.168.1.7", list, n));
    ck_assert(!eu_ip_in_list("192.168.1.8", list, n));
    ck_assert(eu_ip_in_list("172.31.255.255", list, n));
    ck_assert(!eu_ip_in_list("172.32.0.0", list, n));
    ck_assert(!eu_ip_in_list("11.0.0.1", list, n));
    /* what a dual-stack socket reports for an IPv4 peer */
    ck_assert(eu_ip_in_list("::ffff:10.9.9.9", list, n));
    ck_assert(!eu_ip_in_list("::1", list, n));
    ck_assert(!eu_ip_in_list("not an ip", list, n));
    ck_assert(!eu_ip_in_list(NULL, list, n));
    ck_assert(!eu_ip_in_list("10.0.0.1", list, 0));

    char *all[] = {"0.0.0.0/0"};
    ck_assert(eu_ip_in_list("8.8.8.8", all, 1));
    char *odd[] = {"192.168.1.128/25"};
    ck_assert(eu_ip_in_list("192.168.1.200", odd, 1));
    ck_assert(!eu_ip_in_list("192.168.1.127", odd, 1));
    char *bad[] = {"10.0.0.0/33", "10.0.0.0/", "10.0.0.0/-1", "garbage"};
    ck_assert(!eu_ip_in_list("10.0.0.1", bad, 4));
}
END_TEST

START_TEST(test_ip_in_list_v6)
{
    char *list[] = {"::1", "2001:db8::/32", "fd00::/8"};
    size_t n = 3;
    ck_assert(eu_ip_in_list("::1", list, n));
    ck_assert(eu_ip_in_list("2001:db8:ffff::1", list, n));
    ck_assert(eu_ip_in_list("2001:DB8::", list, n));
    ck_assert(!eu_ip_in_list("2001:db9::1", list, n));
    ck_assert(eu_ip_in_list("fdab::1", list, n));
    ck_assert(!eu_ip_in_list("fe80::1", list, n));
    ck_assert(!eu_ip_in_list("127.0.0.1", list, n));
    char *odd[] = {"2001:db8::/33"};
    ck_assert(eu_ip_in_list("2001:db8:7fff::1", odd, 1));
    ck_assert(!eu_ip_in_list("2001:db8:8000::1", odd, 1));
    char *bad[] = {"::1/129"};
    ck_assert(!eu_ip_in_list("::1", bad, 1));
}
END_TEST

START_TEST(test_hostport_split)
{
    char host[64];
    int port = -1;
    ck_assert_int_eq(eu_hostport_split("127.0.0.1:8080", host, sizeof host, &port), 0);
    ck_assert_str_eq(host, "127.0.0.1");
    ck_assert_int_eq(port, 8080);
    ck_assert_int_eq(eu_hostport_split("[::1]:0", host, sizeof host, &port), 0);
    ck_assert_str_eq(host, "::1");
    ck_assert_int_eq(port, 0);
    ck_assert_int_eq(eu_hostport_split("localhost:65535", host, sizeof host, &port), 0);
    ck_assert_str_eq(host, "localhost");
    ck_assert_int_eq(port, 65535);

    ck_assert_int_eq(eu_hostport_split("127.0.0.1", host, sizeof host, &port), -1);
    ck_assert_int_eq(eu_hostport_split("127.0.0.1:", host, sizeof host, &port), -1);
    ck_assert_int_eq(eu_hostport_split(":80", host, sizeof host, &port), -1);
    ck_assert_int_eq(eu_hostport_split("h:65536", host, sizeof host, &port), -1);
    ck_assert_int_eq(eu_hostport_split("h:+80", host, sizeof host, &port), -1);
    ck_assert_int_eq(eu_hostport_split("h:8o", host, sizeof host, &port), -1);
    ck_assert_int_eq(eu_hostport_split("::1:80", host, sizeof host, &port), -1);
    ck_assert_int_eq(eu_hostport_split("[::1]80", host, sizeof host, &port), -1);
    ck_assert_int_eq(eu_hostport_split("[nope]:80", host, sizeof host, &port), -1);
    ck_assert_int_eq(eu_hostport_split("averylonghostname:80", host, 5, &port), -1);
}
END_TEST

static const struct {
    const char *ip;
    bool public;
} public_cases[] = {
    {"93.184.216.34", true},
    {"8.8.8.8", true},
    {"1.1.1.1", true},
    {"100.63.255.255", true},
    {"100.128.0.0", true},
    {"172.32.0.1", true},
    {"0.0.0.0", false},
    {"10.1.2.3", false},
    {"100.64.0.1", false},
    {"100.127.255.254", false},
    {"127.0.0.1", false},
    {"127.255.0.9", false},
    {"169.254.169.254", false},
    {"172.16.0.1", false},
    {"172.31.255.255", false},
    {"192.168.1.1", false},
    {"224.0.0.1", false},
    {"239.255.255.250", false},
    {"255.255.255.255", false},
    {"198.18.0.1", false},
    {"2606:4700::1111", true},
    {"2a01:4f8::1", true},
    {"::", false},
    {"::1", false},
    {"::ffff:127.0.0.1", false},
    {"::ffff:10.0.0.1", false},
    {"::ffff:8.8.8.8", true},
    {"::127.0.0.1", false},
    {"64:ff9b::7f00:1", false},
    {"64:ff9b::808:808", true},
    {"2002:7f00:1::", false},
    {"2002:0808:0808::1", true},
    {"fc00::1", false},
    {"fd12:3456::1", false},
    {"fe80::1", false},
    {"febf::1", false},
    {"fec0::1", false},
    {"ff02::1", false},
    {"2001:db8::1", false},
};

START_TEST(test_sockaddr_is_public)
{
    const char *ip = public_cases[_i].ip;
    struct sockaddr_in in = {.sin_family = AF_INET};
    struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
    bool got;
    if (inet_pton(AF_INET, ip, &in.sin_addr) == 1) {
        got = eu_sockaddr_is_public((struct sockaddr *)&in, sizeof in);
    } else {
        ck_assert_int_eq(inet_pton(AF_INET6, ip, &in6.sin6_addr), 1);
        got = eu_sockaddr_is_public((struct sockaddr *)&in6, sizeof in6);
    }
    ck_assert_msg(got == public_cases[_i].public, "%s: got %d", ip, got);
}
END_TEST

START_TEST(test_sockaddr_is_public_odd)
{
    struct sockaddr_in in = {.sin_family = AF_INET};
    inet_pton(AF_INET, "8.8.8.8", &in.sin_addr);
    ck_assert(!eu_sockaddr_is_public(NULL, 0));
    /* A short length or another family is never taken for public. */
    ck_assert(!eu_sockaddr_is_public((struct sockaddr *)&in, sizeof in - 1));
    in.sin_family = AF_UNIX;
    ck_assert(!eu_sockaddr_is_public((struct sockaddr *)&in, sizeof in));
}
END_TEST

static Suite *
net_suite(void)
{
    Suite *s = suite_create("net");
    TCase *tc = tcase_create("host");
    tcase_add_loop_test(tc, test_host_normalize, 0,
                        (int)(sizeof host_cases / sizeof host_cases[0]));
    tcase_add_test(tc, test_host_normalize_too_long);
    suite_add_tcase(s, tc);
    tc = tcase_create("domain");
    tcase_add_test(tc, test_domain_is_valid);
    suite_add_tcase(s, tc);
    tc = tcase_create("cidr");
    tcase_add_test(tc, test_ip_in_list_v4);
    tcase_add_test(tc, test_ip_in_list_v6);
    suite_add_tcase(s, tc);
    tc = tcase_create("hostport");
    tcase_add_test(tc, test_hostport_split);
    suite_add_tcase(s, tc);
    tc = tcase_create("public");
    tcase_add_loop_test(tc, test_sockaddr_is_public, 0,
                        (int)(sizeof public_cases / sizeof public_cases[0]));
    tcase_add_test(tc, test_sockaddr_is_public_odd);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(net_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
