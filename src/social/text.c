/*
 * The status formatter (see text.h). One tokenizer finds URLs, mentions and
 * hashtags with the boundary rules of Mastodon's regular expressions; the
 * scanner and the formatter both walk it, so what is indexed is exactly what
 * is linked. Non-ASCII bytes count as word characters: that keeps "#은하"
 * a hashtag without a Unicode table, at the price of treating non-ASCII
 * punctuation as part of a word.
 */
#include "eunha/text.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eunha/arena.h"
#include "eunha/mem.h"

enum kind { K_URL, K_MENTION, K_TAG };

struct entity {
    enum kind kind;
    size_t start, end;     /* the whole entity in the text */
    size_t a_start, a_end; /* mention username, tag name, or URL */
    size_t d_start, d_end; /* mention domain (empty when absent) */
};

/* A growable string; the formatter copies the result into the arena. */
struct buf {
    char *p;
    size_t len, cap;
};

static void
buf_add(struct buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->p = eu_xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void
buf_str(struct buf *b, const char *s)
{
    buf_add(b, s, strlen(s));
}

const char *
eu_html_entity(char c)
{
    switch (c) {
    case '&':
        return "&amp;";
    case '<':
        return "&lt;";
    case '>':
        return "&gt;";
    case '"':
        return "&quot;";
    case '\'':
        return "&#39;";
    default:
        return NULL;
    }
}

static void
buf_escaped(struct buf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *rep = eu_html_entity(s[i]);
        if (rep)
            buf_str(b, rep);
        else
            buf_add(b, s + i, 1);
    }
}

static bool
is_ascii_alnum(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool
is_word(unsigned char c)
{
    return is_ascii_alnum(c) || c == '_' || c >= 0x80;
}

static bool
is_user_char(unsigned char c)
{
    return is_ascii_alnum(c) || c == '_';
}

static bool
is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static size_t
count_char(const char *s, size_t from, size_t to, char c)
{
    size_t n = 0;
    for (size_t i = from; i < to; i++)
        n += s[i] == c;
    return n;
}

static bool
match_url(const char *t, size_t i, struct entity *e)
{
    if (i > 0 && (is_word((unsigned char)t[i - 1]) || t[i - 1] == '/' || t[i - 1] == '@'))
        return false;
    size_t p;
    if (strncasecmp(t + i, "https://", 8) == 0)
        p = i + 8;
    else if (strncasecmp(t + i, "http://", 7) == 0)
        p = i + 7;
    else
        return false;
    if (!is_word((unsigned char)t[p]) || t[p] == '_')
        return false;
    size_t j = p;
    while (t[j] && !is_space((unsigned char)t[j]) && (unsigned char)t[j] >= 0x20 && t[j] != '<' &&
           t[j] != '>' && t[j] != '"')
        j++;
    /* Trailing punctuation ends the sentence, not the URL; a closing bracket
     * stays when the URL opened one (Wikipedia links). */
    while (j > p) {
        char c = t[j - 1];
        if (strchr(".,:;!?'*", c))
            j--;
        else if (c == ')' && count_char(t, i, j, '(') < count_char(t, i, j, ')'))
            j--;
        else if (c == ']' && count_char(t, i, j, '[') < count_char(t, i, j, ']'))
            j--;
        else
            break;
    }
    if (j <= p)
        return false;
    *e = (struct entity){.kind = K_URL, .start = i, .end = j, .a_start = i, .a_end = j};
    return true;
}

static bool
match_mention(const char *t, size_t i, struct entity *e)
{
    if (t[i] != '@')
        return false;
    if (i > 0 && (is_word((unsigned char)t[i - 1]) || t[i - 1] == '=' || t[i - 1] == '/'))
        return false;
    size_t j = i + 1;
    while (is_user_char((unsigned char)t[j]))
        j++;
    if (j == i + 1)
        return false;
    /* Dots and dashes only between name characters: "@a.b" but not "@a." */
    for (;;) {
        size_t k = j;
        while (t[k] == '.' || t[k] == '-')
            k++;
        if (k == j || !is_user_char((unsigned char)t[k]))
            break;
        j = k;
        while (is_user_char((unsigned char)t[j]))
            j++;
    }
    *e = (struct entity){.kind = K_MENTION,
                         .start = i,
                         .end = j,
                         .a_start = i + 1,
                         .a_end = j,
                         .d_start = j,
                         .d_end = j};
    if (t[j] == '@') {
        size_t k = j + 1;
        while (is_word((unsigned char)t[k]) || t[k] == '.' || t[k] == '-')
            k++;
        while (k > j + 1 && !is_word((unsigned char)t[k - 1]))
            k--;
        if (k >= j + 3) {
            e->d_start = j + 1;
            e->d_end = k;
            e->end = k;
        }
    }
    return true;
}

static bool
match_tag(const char *t, size_t i, struct entity *e)
{
    if (t[i] != '#')
        return false;
    if (i > 0 && (is_word((unsigned char)t[i - 1]) || strchr("=/)", t[i - 1])))
        return false;
    size_t j = i + 1;
    bool letter = false;
    while (is_word((unsigned char)t[j])) {
        letter = letter || !(t[j] >= '0' && t[j] <= '9');
        j++;
    }
    if (!letter)
        return false;
    *e = (struct entity){.kind = K_TAG, .start = i, .end = j, .a_start = i + 1, .a_end = j};
    return true;
}

/* Finds the next entity at or after *pos; false when none is left. */
static bool
next_entity(const char *t, size_t pos, struct entity *e)
{
    for (size_t i = pos; t[i]; i++) {
        char c = t[i];
        if ((c == 'h' || c == 'H') && match_url(t, i, e))
            return true;
        if (c == '@' && match_mention(t, i, e))
            return true;
        if (c == '#' && match_tag(t, i, e))
            return true;
    }
    return false;
}

/* True when the mention's domain is absent or the local one. */
static bool
mention_is_local(const char *t, const struct entity *e, const char *local_domain)
{
    size_t dl = e->d_end - e->d_start;
    if (!dl)
        return true;
    return local_domain && strlen(local_domain) == dl &&
           strncasecmp(t + e->d_start, local_domain, dl) == 0;
}

static char *
lower_dup(struct eu_arena *a, const char *s, size_t n)
{
    char *out = eu_arena_strndup(a, s, n);
    for (char *p = out; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    return out;
}

static bool
has_ci(char **list, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(list[i], s) == 0)
            return true;
    return false;
}

void
eu_text_scan(struct eu_arena *a, const char *text, const char *local_domain,
             struct eu_text_scan *out)
{
    memset(out, 0, sizeof(*out));
    if (!text)
        return;
    /* Upper bounds: an entity takes at least two bytes. */
    size_t cap = strlen(text) / 2 + 1;
    out->mentions = eu_arena_alloc(a, cap * sizeof(char *));
    out->tags = eu_arena_alloc(a, cap * sizeof(char *));
    out->remote = eu_arena_alloc(a, cap * sizeof(char *));
    struct entity e;
    for (size_t pos = 0; next_entity(text, pos, &e); pos = e.end) {
        if (e.kind == K_MENTION && mention_is_local(text, &e, local_domain)) {
            char *u = lower_dup(a, text + e.a_start, e.a_end - e.a_start);
            if (!has_ci(out->mentions, out->n_mentions, u))
                out->mentions[out->n_mentions++] = u;
        } else if (e.kind == K_MENTION) {
            char *u = lower_dup(a, text + e.a_start, e.d_end - e.a_start);
            if (!has_ci(out->remote, out->n_remote, u))
                out->remote[out->n_remote++] = u;
        } else if (e.kind == K_TAG) {
            char *tag = eu_arena_strndup(a, text + e.a_start, e.a_end - e.a_start);
            if (!has_ci(out->tags, out->n_tags, tag))
                out->tags[out->n_tags++] = tag;
        }
    }
}

/* Length in bytes of the first max code points of s[0..n). */
static size_t
utf8_prefix(const char *s, size_t n, size_t max)
{
    size_t i = 0, chars = 0;
    while (i < n && chars < max) {
        i++;
        while (i < n && ((unsigned char)s[i] & 0xC0) == 0x80)
            i++;
        chars++;
    }
    return i;
}

/* Mastodon's shortened link: scheme (and "www.") hidden, 30 characters
 * shown, the rest hidden behind an ellipsis. */
static void
add_link(struct buf *b, const char *url, size_t n)
{
    size_t prefix = strncasecmp(url, "https://", 8) == 0 ? 8 : 7;
    if (n >= prefix + 4 && strncasecmp(url + prefix, "www.", 4) == 0)
        prefix += 4;
    size_t shown = utf8_prefix(url + prefix, n - prefix, 30);
    bool cut = prefix + shown < n;
    buf_str(b, "<a href=\"");
    buf_escaped(b, url, n);
    buf_str(b, "\" target=\"_blank\" rel=\"nofollow noopener noreferrer\" translate=\"no\">"
               "<span class=\"invisible\">");
    buf_escaped(b, url, prefix);
    buf_str(b, cut ? "</span><span class=\"ellipsis\">" : "</span><span class=\"\">");
    buf_escaped(b, url + prefix, shown);
    buf_str(b, "</span><span class=\"invisible\">");
    buf_escaped(b, url + prefix + shown, n - prefix - shown);
    buf_str(b, "</span></a>");
}

static const struct eu_text_account *
find_account(const struct eu_text_account *accts, size_t n, const char *u, size_t len,
             const char *d, size_t dlen)
{
    for (size_t i = 0; i < n; i++) {
        const char *ad = accts[i].domain;
        if (strlen(accts[i].username) != len || strncasecmp(accts[i].username, u, len) != 0)
            continue;
        if (d ? ad && strlen(ad) == dlen && strncasecmp(ad, d, dlen) == 0 : !ad)
            return &accts[i];
    }
    return NULL;
}

/* Rails' simple_format as Mastodon uses it: paragraphs split on runs of
 * blank lines (a leading empty one kept, trailing ones dropped, as Ruby's
 * split does), a newline between two characters becomes <br />, other
 * newlines vanish. */
static void
add_paragraphs(struct buf *out, const char *h)
{
    size_t n = strlen(h);
    /* Ruby's split drops trailing empty fields. */
    while (n && h[n - 1] == '\n')
        n--;
    buf_str(out, "<p>");
    for (size_t i = 0; i < n; i++) {
        if (h[i] != '\n') {
            buf_add(out, h + i, 1);
            continue;
        }
        size_t j = i;
        while (j < n && h[j] == '\n')
            j++;
        if (j - i >= 2)
            buf_str(out, "</p><p>");
        else if (i > 0 && h[i - 1] != '\n' && j < n)
            buf_str(out, "<br />");
        i = j - 1;
    }
    buf_str(out, "</p>");
}

static bool
is_blank(const char *s)
{
    for (; *s; s++)
        if (!is_space((unsigned char)*s))
            return false;
    return true;
}

const char *
eu_text_format(struct eu_arena *a, const char *text, const char *local_domain, const char *base_url,
               const struct eu_text_account *accounts, size_t n)
{
    if (!text || is_blank(text))
        return "";
    /* Carriage returns are dropped first, as Rails does with "\r\n". */
    char *t = eu_arena_strdup(a, text), *w = t;
    for (const char *p = text; *p; p++)
        if (*p != '\r')
            *w++ = *p;
    *w = '\0';

    struct buf body = {0}, out = {0};
    size_t pos = 0;
    struct entity e;
    while (next_entity(t, pos, &e)) {
        buf_escaped(&body, t + pos, e.start - pos);
        const char *s = t + e.a_start;
        size_t len = e.a_end - e.a_start;
        const struct eu_text_account *acct = NULL;
        if (e.kind == K_URL) {
            add_link(&body, s, len);
        } else if (e.kind == K_TAG) {
            buf_str(&body, "<a href=\"");
            buf_escaped(&body, base_url, strlen(base_url));
            buf_str(&body, "/tags/");
            buf_escaped(&body, s, len);
            buf_str(&body, "\" class=\"mention hashtag\" rel=\"tag\">#<span>");
            buf_escaped(&body, s, len);
            buf_str(&body, "</span></a>");
        } else if ((acct = mention_is_local(t, &e, local_domain)
                               ? find_account(accounts, n, s, len, NULL, 0)
                               : find_account(accounts, n, s, len, t + e.d_start,
                                              e.d_end - e.d_start))) {
            buf_str(&body, "<span class=\"h-card\"><a href=\"");
            buf_escaped(&body, acct->url, strlen(acct->url));
            buf_str(&body, "\" class=\"u-url mention\">@<span>");
            buf_escaped(&body, acct->username, strlen(acct->username));
            buf_str(&body, "</span></a></span>");
        } else {
            buf_escaped(&body, t + e.start, e.end - e.start);
        }
        pos = e.end;
    }
    buf_escaped(&body, t + pos, strlen(t + pos));
    add_paragraphs(&out, body.p ? body.p : "");
    const char *result = eu_arena_strdup(a, out.p);
    free(body.p);
    free(out.p);
    return result;
}
