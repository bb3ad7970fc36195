/*
 * Pure helpers for addresses: turning a Host header into the tenant lookup
 * key, checking tenant domains, matching a peer against trusted proxies and
 * splitting listen addresses. No I/O and no allocation, so they are safe to
 * call from any callback.
 */
#include "eunha/net.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Ports are digits only: strtol would accept "+80", " 80" or "0x50". */
static int
parse_port(const char *s, size_t len, int *port)
{
    if (len == 0 || len > 5)
        return -1;
    int v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v > 65535)
        return -1;
    *port = v;
    return 0;
}

static bool
is_v6_literal(const char *s, size_t len)
{
    char buf[INET6_ADDRSTRLEN + 1];
    unsigned char addr[16];
    if (len == 0 || len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    return inet_pton(AF_INET6, buf, addr) == 1;
}

int
eu_host_normalize(const char *host, char *out, size_t outlen)
{
    if (!host || !out || outlen == 0)
        return -1;
    size_t len = strlen(host);
    const char *name = host;
    size_t namelen;

    if (len > 0 && host[0] == '[') {
        const char *close = memchr(host, ']', len);
        if (!close)
            return -1;
        name = host + 1;
        namelen = (size_t)(close - name);
        const char *rest = close + 1;
        int port;
        /* An empty port after ':' is allowed by RFC 3986, so is none. */
        if (*rest == ':' ? (rest[1] && parse_port(rest + 1, strlen(rest + 1), &port) < 0)
                         : *rest != '\0')
            return -1;
        if (!is_v6_literal(name, namelen))
            return -1;
    } else {
        const char *colon = strchr(host, ':');
        if (colon && strchr(colon + 1, ':')) {
            /* Several colons and no brackets: only a bare IPv6 literal fits. */
            if (!is_v6_literal(host, len))
                return -1;
            namelen = len;
        } else if (colon) {
            int port;
            namelen = (size_t)(colon - host);
            if (colon[1] && parse_port(colon + 1, strlen(colon + 1), &port) < 0)
                return -1;
        } else {
            namelen = len;
        }
        for (size_t i = 0; i < namelen; i++) {
            unsigned char c = (unsigned char)name[i];
            /* '_' is not valid in host names but shows up in real DNS
             * records; it cannot hurt a lookup key. */
            if (!isalnum(c) && c != '-' && c != '.' && c != '_' && c != ':')
                return -1;
        }
        if (namelen > 0 && name[namelen - 1] == '.')
            namelen--;
        /* "a.example.." would become the key "a.example.", which names
         * nothing and normalises again to something else. */
        if (namelen > 0 && name[namelen - 1] == '.')
            return -1;
    }

    if (namelen == 0 || namelen >= outlen)
        return -1;
    for (size_t i = 0; i < namelen; i++)
        out[i] = (char)tolower((unsigned char)name[i]);
    out[namelen] = '\0';
    return 0;
}

bool
eu_domain_is_valid(const char *domain)
{
    if (!domain)
        return false;
    size_t len = strlen(domain);
    if (len == 0 || len > 253)
        return false;
    size_t label = 0;
    for (size_t i = 0; i <= len; i++) {
        char c = domain[i];
        if (c == '.' || c == '\0') {
            if (label == 0 || label > 63)
                return false;
            if (domain[i - 1] == '-')
                return false;
            label = 0;
            continue;
        }
        bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
        if (!ok || (label == 0 && c == '-'))
            return false;
        label++;
    }
    return true;
}

/* A parsed address: IPv4 is kept as 4 bytes, and an IPv4-mapped IPv6 address
 * (::ffff:a.b.c.d, what a dual-stack socket reports) is turned into IPv4 so
 * it matches IPv4 entries. */
struct addr {
    int bytes; /* 4 or 16 */
    unsigned char a[16];
};

static bool
addr_parse(const char *s, size_t len, struct addr *out)
{
    char buf[INET6_ADDRSTRLEN + 1];
    if (len == 0 || len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (inet_pton(AF_INET, buf, out->a) == 1) {
        out->bytes = 4;
        return true;
    }
    if (inet_pton(AF_INET6, buf, out->a) == 1) {
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (memcmp(out->a, mapped, sizeof mapped) == 0) {
            memmove(out->a, out->a + 12, 4);
            out->bytes = 4;
        } else {
            out->bytes = 16;
        }
        return true;
    }
    return false;
}

static bool
prefix_equal(const unsigned char *x, const unsigned char *y, int bits)
{
    int whole = bits / 8;
    if (memcmp(x, y, (size_t)whole) != 0)
        return false;
    int rest = bits % 8;
    if (rest == 0)
        return true;
    unsigned char mask = (unsigned char)(0xff << (8 - rest));
    return (x[whole] & mask) == (y[whole] & mask);
}

bool
eu_ip_in_list(const char *ip, char *const *list, size_t n)
{
    struct addr peer;
    if (!ip || !addr_parse(ip, strlen(ip), &peer))
        return false;
    for (size_t i = 0; i < n; i++) {
        const char *entry = list[i];
        if (!entry)
            continue;
        const char *slash = strchr(entry, '/');
        size_t addrlen = slash ? (size_t)(slash - entry) : strlen(entry);
        struct addr net;
        if (!addr_parse(entry, addrlen, &net) || net.bytes != peer.bytes)
            continue;
        int bits = net.bytes * 8;
        if (slash) {
            int v;
            /* Reuse the port parser: digits only, no sign or spaces. */
            if (parse_port(slash + 1, strlen(slash + 1), &v) < 0 || v > bits)
                continue;
            bits = v;
        }
        if (prefix_equal(peer.a, net.a, bits))
            return true;
    }
    return false;
}

/* IPv4 ranges that are not the public internet (IANA special-purpose
 * registry, the ones a peer could use to reach inside our network). */
static bool
v4_is_public(const unsigned char *a)
{
    static const struct {
        unsigned char net[4];
        int bits;
    } denied[] = {
        {{0, 0, 0, 0}, 8},       /* "this network", 0.0.0.0 */
        {{10, 0, 0, 0}, 8},      /* private */
        {{100, 64, 0, 0}, 10},   /* carrier-grade NAT */
        {{127, 0, 0, 0}, 8},     /* loopback */
        {{169, 254, 0, 0}, 16},  /* link-local, cloud metadata endpoints */
        {{172, 16, 0, 0}, 12},   /* private */
        {{192, 0, 0, 0}, 24},    /* IETF protocol assignments */
        {{192, 0, 2, 0}, 24},    /* documentation */
        {{192, 88, 99, 0}, 24},  /* 6to4 relay anycast */
        {{192, 168, 0, 0}, 16},  /* private */
        {{198, 18, 0, 0}, 15},   /* benchmarking */
        {{198, 51, 100, 0}, 24}, /* documentation */
        {{203, 0, 113, 0}, 24},  /* documentation */
        {{224, 0, 0, 0}, 4},     /* multicast */
        {{240, 0, 0, 0}, 4},     /* reserved, broadcast */
    };
    for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++)
        if (prefix_equal(a, denied[i].net, denied[i].bits))
            return false;
    return true;
}

static bool
v6_is_public(const unsigned char *a)
{
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b};
    /* Forms that carry an IPv4 address are judged by it. */
    if (memcmp(a, mapped, 12) == 0 || memcmp(a, nat64, 12) == 0)
        return v4_is_public(a + 12);
    if (a[0] == 0x20 && a[1] == 0x02)
        return v4_is_public(a + 2);
    static const struct {
        unsigned char net[16];
        int bits;
    } denied[] = {
        {{0}, 96},                      /* ::, ::1, deprecated IPv4-compatible */
        {{0x01, 0x00}, 64},             /* discard-only */
        {{0x20, 0x01, 0x00, 0x00}, 23}, /* IETF protocol assignments, Teredo */
        {{0x20, 0x01, 0x0d, 0xb8}, 32}, /* documentation */
        {{0x3f, 0xff}, 20},             /* documentation (RFC 9637) */
        {{0x5f, 0x00}, 16},             /* segment routing SIDs */
        {{0xfc, 0x00}, 7},              /* unique-local */
        {{0xfe, 0x80}, 10},             /* link-local */
        {{0xfe, 0xc0}, 10},             /* site-local (deprecated) */
        {{0xff, 0x00}, 8},              /* multicast */
    };
    for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++)
        if (prefix_equal(a, denied[i].net, denied[i].bits))
            return false;
    return true;
}

bool
eu_sockaddr_is_public(const struct sockaddr *sa, size_t len)
{
    if (!sa)
        return false;
    if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        return v4_is_public((const unsigned char *)&in->sin_addr);
    }
    if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        return v6_is_public(in6->sin6_addr.s6_addr);
    }
    return false;
}

int
eu_hostport_split(const char *s, char *host, size_t hostlen, int *port)
{
    if (!s || !host || hostlen == 0 || !port)
        return -1;
    const char *h;
    size_t hlen;
    const char *colon;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close || close[1] != ':')
            return -1;
        h = s + 1;
        hlen = (size_t)(close - h);
        if (!is_v6_literal(h, hlen))
            return -1;
        colon = close + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon)
            return -1;
        h = s;
        hlen = (size_t)(colon - s);
        /* "::1:80" is ambiguous; IPv6 needs brackets. */
        if (memchr(h, ':', hlen))
            return -1;
    }
    if (hlen == 0 || hlen >= hostlen)
        return -1;
    if (parse_port(colon + 1, strlen(colon + 1), port) < 0)
        return -1;
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    return 0;
}
