/*
 * Shared by the files of quote federation (quotes_outbox.c: what a local
 * quote sends; process_quote.c: what arrives; objects.c: the Note's quote
 * members) and nobody else.
 */
#ifndef EUNHA_AP_QUOTES_INTERNAL_H
#define EUNHA_AP_QUOTES_INTERNAL_H

#include <stdbool.h>

struct json_t;
struct eu_error;

/* The "@context" of the quote activities: activitystreams and FEP-044f's
 * terms. New reference. */
struct json_t *eu_ap_quote_context(void);

/* The address of the QuoteAuthorization of quote quote_id of a post by
 * local account username. Caller frees. */
char *eu_ap_quote_authorization_uri(const char *base, const char *username, const char *quote_id);

struct eu_app;
struct eu_tenant;
struct eu_db_conn;

/*
 * The quote of a Note fetched rather than received (a status resolved by
 * search, src/ap/resolve_status.c), stored as status_id by author_id:
 * kept as an inbox Note's is (process_quote.c's ap_quotes.note), its
 * interactionPolicy.canQuote as the status's policy, the quoted local
 * author told of an accepted quote, a pending one verified apart, an
 * unknown quoted post fetched when resolve is true. Runs on conn, which
 * the caller holds, as it holds t, until then(arg); note borrowed for the
 * call.
 */
void eu_ap_quote_fetched_note(struct eu_app *app, struct eu_tenant *t, struct eu_db_conn *conn,
                              const char *base, struct json_t *note, const char *status_id,
                              const char *author_id, bool resolve, void (*then)(void *arg),
                              void *arg);

/* eu_ap_resolve_status() for a post fetched as another's quoted post:
 * its own quote is kept, but what it quotes is not fetched in turn
 * (resolve_status.c). */
void eu_ap_resolve_status_shallow(struct eu_app *app, struct eu_tenant *tenant, const char *url,
                                  void (*cb)(const char *id, const struct eu_error *err, void *arg),
                                  void *arg);

#endif
