/*
 * Preview cards of links in statuses (src/social/cards.c, card_parse.c;
 * docs/cards.md), as Mastodon's FetchLinkCardService makes them: a
 * status's first link that is not a mention or a hashtag is fetched
 * through the shared outbound client, its page read for oEmbed discovery,
 * OpenGraph and Twitter card tags, and the card kept once per URL per
 * tenant (tenant migration 0065) with its image through the media
 * pipeline (WebP, blurhash), then shown as the status's `card`.
 *
 * The work is a durable job ("preview_card", queue "media") queued when a
 * status is posted or a remote one stored; like Mastodon's LinkCrawlWorker
 * it is never retried for what the remote page did (no answer, a refused
 * address, too big, too slow): that status simply has no card.
 */
#ifndef EUNHA_CARDS_H
#define EUNHA_CARDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eunha/sql.h"

struct eu_app;
struct eu_tenant;
struct eu_job;
struct json_t;

/* Mastodon's limits: the page is read up to 1 MB, the image up to 2 MB. */
#define EU_CARD_PAGE_LIMIT (1024 * 1024)
#define EU_CARD_OEMBED_LIMIT (256 * 1024)
#define EU_CARD_IMAGE_LIMIT (2 * 1024 * 1024)

/* What a page says about itself (eu_card_page_parse()). Heap strings or
 * NULL, freed by eu_card_page_free(). */
struct eu_card_page {
    bool noindex;      /* <meta name="robots" content="noindex"> or "none" */
    char *oembed;      /* <link rel="alternate" type="application/json+oembed" href>, absolute */
    char *title;       /* og:title, twitter:title, <title> */
    char *description; /* og:description, twitter:description, description */
    char *image;       /* og:image, twitter:image, absolute */
    char *image_alt;   /* og:image:alt, twitter:image:alt */
    char *canonical;   /* <link rel=canonical> or og:url, absolute, same origin only */
    char *site_name;   /* og:site_name */
    char *author;      /* <meta name="author"> */
    char *language;    /* og:locale or <html lang>, its language part */
    char *published;   /* article:published_time */
    char *player;      /* twitter:player, absolute http(s) */
    int player_w, player_h;
};

/*
 * Reads html (len bytes, a page fetched from base_url) into out. Bounded:
 * only the part before <body> counts, the parser has a memory budget, and
 * the tree is walked without recursion, so a hostile page costs what a
 * megabyte costs. Runs on a CPU pool thread. Returns 0, or -1 when the
 * page could not be read (out then holds nothing).
 */
int eu_card_page_parse(const char *html, size_t len, const char *base_url,
                       struct eu_card_page *out);
void eu_card_page_free(struct eu_card_page *p);

/*
 * The first link of a status's HTML content that may have a card, or NULL
 * (heap string, the caller frees): an <a href> that is not a mention or a
 * hashtag (rel "tag", classes "mention", "hashtag", "u-url", "h-card"),
 * http or https with a host that is not local_host. content is our own
 * sanitized HTML (remote) or text.c's (local), whose attributes are
 * double-quoted.
 */
char *eu_card_first_link(const char *content, const char *local_host);

/*
 * The "html" of an oEmbed video: its first <iframe> with an http(s) src,
 * rebuilt with only Mastodon's allowed attributes (src, width, height,
 * frameborder, allowfullscreen, scrolling) and a sandbox. NULL when there
 * is none. Heap string.
 */
char *eu_card_oembed_html(const char *html);

/* Whether a status's HTML content names an http(s) link at all: most do
 * not, and then cost no job. */
bool eu_card_candidate(const char *content);
/* Queues the "preview_card" job for a status just stored (and committed);
 * a second one for the same status is a no-op. edited: the status was
 * edited, and its card follows its new first link (replaced, or removed
 * when there is none), as Mastodon fetches it again. */
void eu_card_enqueue(struct eu_app *app, struct eu_tenant *t, const char *status_id, bool edited);

/* The "preview_card" job (payload {"status_id", "edited": true or absent}). */
void eu_card_run(struct eu_job *job);

/* A card's PreviewCard entity from the JSON text eunha_card_json() makes
 * in SQL (migration 0065): the image's store key becomes its URL.
 * base_url is the tenant's. New reference; NULL for NULL or bad text. */
struct json_t *eu_card_json(struct eu_app *app, const char *base_url, const char *text);

/* eu_cards_sql's statements; GET /api/v1/statuses/:id/card runs
 * EU_CARDS_STATUS_CARD ($2 the status, $3 the viewer). */
enum eu_cards_stmt {
    EU_CARDS_LOAD,
    EU_CARDS_FIND,
    EU_CARDS_MEDIA_OK,
    EU_CARDS_ATTACH,
    EU_CARDS_SAVE,
    EU_CARDS_STATUS_CARD,
    EU_CARDS_DETACH,
};
extern const struct eu_sql eu_cards_sql[];

#endif
