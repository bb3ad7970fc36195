/*
 * HTML from other servers (a Note's content, an actor's summary, a profile
 * field's value) cut down to what Mastodon keeps of it (its
 * Sanitize::Config::MASTODON_STRICT as of 4.2): parsed with a real HTML5
 * parser (libgumbo) and written back with only p, br, span, a, del, pre,
 * blockquote, code, b, strong, u, i, em, ul, ol, li; h1-h6 become
 * <p><strong>...</strong></p>. Links keep an href only with one of
 * Mastodon's link protocols (http, https, dat, dweb, ipfs, ipns, ssb,
 * gopher, xmpp, magnet, gemini), else the link becomes its text; they get
 * rel="nofollow noopener" and target="_blank". class keeps microformats
 * (h-*, p-*, u-*, dt-*, e-*) and mention, hashtag, ellipsis, invisible.
 * Other elements are unwrapped (their text kept); script, style, iframe,
 * svg, math, noscript, template and the like go with their content;
 * comments go. Text and attribute values are escaped again on output.
 *
 * Pure functions: no I/O, no global state, safe on any thread. Bounded:
 * input over EU_SANITIZE_MAX_INPUT is refused, the parser's memory and CPU
 * time are capped (hostile markup that would make the tree explode, or nest
 * tens of thousands deep, fails instead), and the output nests at most
 * EU_SANITIZE_MAX_DEPTH elements deep. The CPU cap makes the outcome for
 * such input depend on the machine's speed; honest markup is far below it.
 */
#ifndef EUNHA_SANITIZE_H
#define EUNHA_SANITIZE_H

#include <stddef.h>

/* Largest input accepted, in bytes (a Mastodon post is at most a few KiB;
 * long-form servers send articles of tens). */
#define EU_SANITIZE_MAX_INPUT (256 * 1024)
/* CPU time one parse may take, in milliseconds. An honest 100 KiB article
 * takes 15 (60-100 under ASan on a busy machine); this stops hostile nesting (which costs the HTML5
 * tree builder quadratic time) on the loop thread. */
#define EU_SANITIZE_MAX_CPU_MS 200
/* Elements nested deeper than this in the output are unwrapped. */
#define EU_SANITIZE_MAX_DEPTH 32

/*
 * Sanitizes html[0..len) (UTF-8; invalid bytes become U+FFFD). On success
 * returns 0 and sets *out to a NUL-terminated string the caller frees with
 * free(), and *out_len (may be NULL) to its length. Returns -1 and sets
 * nothing when len exceeds EU_SANITIZE_MAX_INPUT or parsing would need more
 * memory or CPU time than the caps allow.
 */
int eu_sanitize_html(const char *html, size_t len, char **out, size_t *out_len);

/*
 * Escapes text[0..len) for HTML text or a double-quoted attribute value
 * (&, <, >, " and '); NUL bytes are dropped. Returns a NUL-terminated string
 * the caller frees with free().
 */
char *eu_sanitize_escape(const char *text, size_t len);

#endif
