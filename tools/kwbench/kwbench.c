/*
 * Times filter keyword matching for one page of 20 statuses: the automaton
 * (src/social/kwmatch.c) against the keyword-by-keyword scan it replaced, for
 * 1, 30 and 300 keywords, plus compiling the automaton once. The figures
 * in benchmark-results/README.md come from this program built with -O2
 * and no sanitizers:
 *
 *   cc -O2 -D_GNU_SOURCE -Iinclude -Isrc tools/kwbench/kwbench.c \
 *      src/social/kwmatch.c src/core/mem.c -o /tmp/kwbench && /tmp/kwbench
 *
 * Times are CPU time of this process, so other load on the machine shows
 * less, but still shows.
 *
 * Statuses are about 500 bytes of words from a small vocabulary; keywords
 * are random words (whole-word, as Mastodon's default) that never occur,
 * so every status is read to its end by both, as on a timeline where
 * nothing is filtered (an automaton that has found every keyword stops
 * early, which would flatter the single-keyword case). The 300-keyword set fills the 16 KiB
 * cap with 54-byte keywords.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "social/kwmatch_internal.h"

#define STATUSES 20

/* The scan filters.c ran before kwmatch.c. */
static bool
is_word_byte(unsigned char c)
{
    return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
           (c >= 'A' && c <= 'Z') || c == '_';
}

static bool
scan_matches(const char *text, const char *kw, bool whole_word)
{
    size_t kl = strlen(kw), tl = strlen(text);
    if (kl == 0 || kl > tl)
        return false;
    bool edge_start = whole_word && is_word_byte((unsigned char)kw[0]);
    bool edge_end = whole_word && is_word_byte((unsigned char)kw[kl - 1]);
    for (size_t i = 0; i + kl <= tl; i++) {
        if (strncasecmp(text + i, kw, kl) != 0)
            continue;
        if (edge_start && i > 0 && is_word_byte((unsigned char)text[i - 1]))
            continue;
        if (edge_end && i + kl < tl && is_word_byte((unsigned char)text[i + kl]))
            continue;
        return true;
    }
    return false;
}

static double
now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void
random_word(char *out, size_t len)
{
    for (size_t i = 0; i < len; i++)
        out[i] = (char)('a' + rand() % 26);
    out[len] = '\0';
}

/* kwbench [ROUNDS [KEYWORDS]]: ROUNDS pages each (default 200), for the
 * keyword count given or for 1, 30 and 300. On a busy machine, count
 * instructions instead: valgrind --tool=callgrind with
 * --toggle-collect=eu_kwmatch_run (or eu_kwmatch_new) and a few rounds. */
int
main(int argc, char **argv)
{
    int rounds = argc > 1 && atoi(argv[1]) > 0 ? atoi(argv[1]) : 200;
    size_t only = argc > 2 ? (size_t)atoi(argv[2]) : 0;
    /* Words of everyday posts, with punctuation, a hashtag and a link. */
    char vocab_text[] = "the a cat sat on mat today I think really great news about open source"
                        " Fediverse coffee morning photo release server we new version! and, is"
                        " (with) #tag https://example.com/x love it. so";
    const char *vocab[64] = {0};
    size_t nvocab = 0;
    for (char *w = strtok(vocab_text, " "); w && nvocab < 64; w = strtok(NULL, " "))
        vocab[nvocab++] = w;
    srand(42);
    char *texts[STATUSES];
    for (int s = 0; s < STATUSES; s++) {
        texts[s] = malloc(600);
        size_t len = 0;
        while (len < 480) {
            const char *w = vocab[rand() % nvocab];
            len += (size_t)sprintf(texts[s] + len, "%s%s", len ? " " : "", w);
        }
    }
    static char words[300][64];
    struct eu_kwmatch_pattern pats[300];
    const size_t sizes[] = {1, 30, 300};
    printf("%-9s %14s %14s %12s %12s\n", "keywords", "scan us/page", "kwmatch us/page",
           "compile us", "size KiB");
    for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
        size_t n = sizes[z];
        if (only && n != only)
            continue;
        for (size_t i = 0; i < n; i++) {
            random_word(words[i], n == 300 ? 54 : 8);
            pats[i].text = words[i];
            pats[i].whole_word = true;
        }
        volatile size_t sink = 0;
        double t0 = now_us();
        for (int r = 0; r < rounds; r++)
            for (int s = 0; s < STATUSES; s++)
                for (size_t i = 0; i < n; i++)
                    sink += scan_matches(texts[s], pats[i].text, true);
        double scan = (now_us() - t0) / rounds;

        t0 = now_us();
        struct eu_kwmatch *m = NULL;
        for (int r = 0; r < rounds; r++) {
            eu_kwmatch_free(m);
            m = eu_kwmatch_new(pats, n);
        }
        double compile = (now_us() - t0) / rounds;
        uint32_t hits[300];
        t0 = now_us();
        for (int r = 0; r < rounds; r++)
            for (int s = 0; s < STATUSES; s++)
                sink += eu_kwmatch_run(m, texts[s], hits);
        double run = (now_us() - t0) / rounds;
        printf("%-9zu %14.1f %14.1f %12.1f %12.1f\n", n, scan, run, compile,
               (double)eu_kwmatch_size(m) / 1024);
        eu_kwmatch_free(m);
        (void)sink;
    }
    for (int s = 0; s < STATUSES; s++)
        free(texts[s]);
    return 0;
}
