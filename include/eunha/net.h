/*
 * Small pure helpers for addresses and Host headers.
 */
#ifndef EUNHA_NET_H
#define EUNHA_NET_H

#include <stdbool.h>
#include <stddef.h>

struct sockaddr;

/*
 * Normalises a Host header value into out: lower-cased, port dropped
 * ("a.example:8080" -> "a.example", "[::1]:80" -> "::1"), one trailing dot
 * dropped. Returns 0, or -1 if the value is empty, too long for out, ends in
 * two dots, or holds characters no host name or IP literal may hold. The
 * result normalises to itself.
 */
int eu_host_normalize(const char *host, char *out, size_t outlen);
/* True when domain is a valid DNS name for a tenant: lower-case labels of
 * [a-z0-9-] (no leading/trailing hyphen), at most 63 per label and 253 in all,
 * "localhost" and one-label names allowed. */
bool eu_domain_is_valid(const char *domain);
/* True when ip (textual IPv4 or IPv6) is inside any of the n entries of list,
 * each an address or CIDR ("10.0.0.0/8", "::1"). False for unparsable input. */
bool eu_ip_in_list(const char *ip, char *const *list, size_t n);
/*
 * True when sa (AF_INET or AF_INET6, len bytes) is an address on the public
 * internet: false for unspecified, loopback, private (RFC 1918), CGNAT
 * (100.64/10), link-local, unique-local, site-local, multicast, reserved,
 * documentation and benchmarking ranges, and for IPv6 forms that carry such
 * an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64 64:ff9b::/96, 6to4
 * 2002::/16). Outbound fetches call it on every resolved address before
 * connecting. Any other family is not public.
 */
bool eu_sockaddr_is_public(const struct sockaddr *sa, size_t len);
/* Splits "host:port" or "[v6]:port" into host and port. Returns 0 or -1. */
int eu_hostport_split(const char *s, char *host, size_t hostlen, int *port);

#endif
