/*
 * Shared by the files of quote federation (quotes_outbox.c: what a local
 * quote sends; process_quote.c: what arrives; objects.c: the Note's quote
 * members) and nobody else.
 */
#ifndef EUNHA_AP_QUOTES_INTERNAL_H
#define EUNHA_AP_QUOTES_INTERNAL_H

struct json_t;

/* The "@context" of the quote activities: activitystreams and FEP-044f's
 * terms. New reference. */
struct json_t *eu_ap_quote_context(void);

/* The address of the QuoteAuthorization of quote quote_id of a post by
 * local account username. Caller frees. */
char *eu_ap_quote_authorization_uri(const char *base, const char *username, const char *quote_id);

#endif
