/*
 * Quotes that arrive (FEP-044f, as Mastodon 4.5 takes them; docs/quotes.md):
 * a QuoteRequest for a local post, answered by its policy with an Accept
 * carrying a QuoteAuthorization (served at its address) or a Reject; the
 * Accept or Reject of our own QuoteRequest; the Delete of an authorization
 * (a revoke); and a Note that quotes something (quote, quoteUri, quoteUrl
 * or _misskey_quote), whose quote is kept pending until approved.
 */
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/ap.h"
#include "eunha/apdeliver.h"
#include "eunha/arena.h"
#include "eunha/http.h"
#include "eunha/mem.h"
#include "eunha/notify.h"
#include "eunha/page.h"
#include "eunha/sql.h"
#include "eunha/statuses.h"
#include "eunha/tenant.h"
#include "objects_internal.h"
#include "process_internal.h"
#include "quotes_internal.h"

json_t *
eu_ap_quote_context(void)
{
    return json_pack("[s, {s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:s}}]",
                     "https://www.w3.org/ns/activitystreams", "QuoteRequest",
                     "https://w3id.org/fep/044f#QuoteRequest", "QuoteAuthorization",
                     "https://w3id.org/fep/044f#QuoteAuthorization", "gts",
                     "https://gotosocial.org/ns#", "quote", "https://w3id.org/fep/044f#quote",
                     "toot", "http://joinmastodon.org/ns#", "interactingObject", "@id",
                     "gts:interactingObject", "@type", "@id", "interactionTarget", "@id",
                     "gts:interactionTarget", "@type", "@id", "quoteAuthorization", "@id",
                     "https://w3id.org/fep/044f#quoteAuthorization", "@type", "@id");
}

char *
eu_ap_quote_authorization_uri(const char *base, const char *username, const char *quote_id)
{
    return eu_xasprintf("%s/users/%s/quote_authorizations/%s", base, username, quote_id);
}
