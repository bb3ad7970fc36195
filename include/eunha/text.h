/*
 * Status text to HTML as Mastodon's TextFormatter does it for local posts:
 * escaped text, paragraphs on blank lines and <br /> on single newlines,
 * http(s) URLs autolinked with Mastodon's invisible/ellipsis spans, @mentions
 * of known accounts (local, or remote ones the caller resolved) linked as
 * h-cards, #hashtags linked. Mentions of unknown accounts stay text. Pure functions of their input:
 * no I/O, safe anywhere.
 */
#ifndef EUNHA_TEXT_H
#define EUNHA_TEXT_H

#include <stddef.h>

struct eu_arena;

/* The HTML entity that stands for c in text and attribute values ("&amp;",
 * "&lt;", "&gt;", "&quot;", "&#39;"), or NULL when c stands for itself. The
 * one table every escaper here uses (a static string: do not free). */
const char *eu_html_entity(char c);

/* What a text refers to, found by eu_text_scan(). */
struct eu_text_scan {
    /* Usernames of local mentions ("@alice", or "@alice@<local_domain>"),
     * lower-cased, each once, in order of appearance. */
    char **mentions;
    size_t n_mentions;
    /* Mentions of other servers' accounts ("@bob@remote.example") as
     * "bob@remote.example", lower-cased, each once, in order of appearance. */
    char **remote;
    size_t n_remote;
    /* Hashtag names as first written (without '#'), each once
     * (case-insensitively), in order of appearance. */
    char **tags;
    size_t n_tags;
};

/* A local account a mention resolved to. */
struct eu_text_account {
    const char *username; /* as stored (its case is what the link shows) */
    const char *url;      /* profile URL, "https://example.com/@alice" */
    const char *domain;   /* NULL for a local account, else its server ("remote.example") */
};

/*
 * Fills out with the local mentions and hashtags of text. local_domain (may
 * be NULL) is the tenant's domain: "@user@<it>" counts as local. Everything
 * is allocated in a.
 */
void eu_text_scan(struct eu_arena *a, const char *text, const char *local_domain,
                  struct eu_text_scan *out);

/*
 * Returns text as Mastodon HTML, allocated in a ("" for blank text).
 * base_url ("https://example.com") prefixes hashtag links; accounts[0..n)
 * are the accounts mentions resolved to, matched by username and domain
 * (NULL: a mention without one, or of local_domain) without regard to
 * case; a mention of anyone else is left as text.
 */
const char *eu_text_format(struct eu_arena *a, const char *text, const char *local_domain,
                           const char *base_url, const struct eu_text_account *accounts, size_t n);

#endif
