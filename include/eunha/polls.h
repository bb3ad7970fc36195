/*
 * Polls' rules, the social core's (src/social/polls.c): what a new poll
 * may hold, whether a vote counts, how votes and a remote poll's counts
 * are kept, and when a poll closes. The REST handlers (src/api/polls.c)
 * and inbox processing (src/ap/process_poll.c) both stand on it and keep
 * only their protocol: reading parameters or activities, wording a
 * refusal, telling other servers.
 *
 * The statements that hold the rules are here, and each protocol runs them
 * with its own runner (eu_req_stmt() for a client's request, the inbox
 * job's connection for an activity): what a database failure means is the
 * protocol's, a 503 for a client and a retried job for a peer. The readers
 * below say what their rows mean.
 *
 * A vote is one poll_votes row per voter holding all their choices, so
 * "one vote per account" is the primary key and holds however requests
 * race. A poll closes once its end has passed (closed_at, set by the
 * closing task, eu_polls_task_run()); votes are refused from its end on.
 */
#ifndef EUNHA_POLLS_H
#define EUNHA_POLLS_H

#include <stdbool.h>
#include <stddef.h>

#include "eunha/sql.h"

struct eu_task_run;
struct json_t;
struct pg_result;

/* Mastodon's limits on a new local poll (configuration.polls of
 * /api/v1/instance). A remote poll keeps what its origin sent. */
#define EU_POLL_MAX_OPTIONS 4
#define EU_POLL_MAX_OPTION_CHARS 50
#define EU_POLL_MAX_EXPIRATION 2629746 /* seconds: a month */

/*
 * The polls' statements, indexed by these names. Each takes the tenant as
 * $1, as every statement does; the others are listed with each.
 */
enum {
    /* $2 poll id, $3 viewer (0: anonymous): one row, eunha_poll_json()'s
     * text for eu_poll_json_finish() (statuses.h), when the viewer may see
     * the poll's status; none otherwise. */
    EU_POLLS_SHOW,
    /* A local account's vote: $2 poll id, $3 voter, $4 the choices as an
     * int[] literal ("{0,2}") that passed eu_poll_choices_check(). Read by
     * eu_poll_vote_read(). A remote poll's counts take the vote at once, as
     * Mastodon's do, until its origin's next Update. */
    EU_POLLS_VOTE,
    /* A remote account's vote for one option of a local poll, as
     * ActivityPub carries it: $2 the local status, $3 the voter, $4 the
     * option's title. A multiple-choice poll's vote grows a choice at a
     * time. Read by eu_poll_vote_remote_read(). */
    EU_POLLS_VOTE_REMOTE,
    /* The poll of remote status $2 by $3, as its origin describes it: $4
     * option titles (a JSON array), $5 multiple ("true"/"false"), $6 end
     * (NULL: none, never due), $7 counts per option (a JSON array), $8
     * votersCount (NULL: not given). Written on every Create and Update,
     * so the counts follow the origin; changed options void the votes cast
     * on the old ones. No rows. */
    EU_POLLS_STORE_REMOTE,
    /* The closing task's own (eu_polls_task_run()). */
    EU_POLLS_CLOSE,
};
extern const struct eu_sql eu_polls_sql[];

/* What became of a vote, or why it does not count. */
enum eu_poll_vote {
    EU_POLL_VOTED,
    EU_POLL_NOT_FOUND,    /* no such poll, or its status is hidden from the voter */
    EU_POLL_ENDED,        /* its end has passed */
    EU_POLL_NO_OPTION,    /* a choice the poll does not have, or no choice */
    EU_POLL_OWN,          /* the author voting in their own poll */
    EU_POLL_VOTED_BEFORE, /* a second vote, a choice twice, or several on a single-choice poll */
};

/*
 * Why a new poll's options (a JSON array; options that are not strings
 * count as blank) break the rules, in Mastodon's words for its 422 ("Poll
 * options must have more than one item", ...; a string constant), or NULL
 * when they keep them. Checks the count first, then each option in order.
 */
const char *eu_poll_options_refusal(const struct json_t *options);
/* Why a new poll open for expires_in seconds breaks the rules (longer than
 * EU_POLL_MAX_EXPIRATION, or shorter than min_s, [limits]
 * poll_min_expires_s), in Mastodon's words, or NULL. */
const char *eu_poll_expiry_refusal(long long expires_in, int min_s);

/*
 * Whether n choices (option indexes in the voter's order, -1 for one that
 * is not a number) can be a vote at all, before the poll is read:
 * EU_POLL_NO_OPTION for none, more than EU_POLL_MAX_OPTIONS, or an index
 * of EU_POLL_MAX_OPTIONS or more (so a local voter cannot choose a remote
 * poll's options past the fourth);
 * EU_POLL_VOTED_BEFORE for a choice repeated; else EU_POLL_VOTED. The
 * first choice that fails decides.
 */
enum eu_poll_vote eu_poll_choices_check(const long *choices, size_t n);

/*
 * What EU_POLLS_VOTE's rows say: the rule that refused the vote, in
 * Mastodon's order (ended, no such option, own poll, voted before), or
 * EU_POLL_VOTED with *remote set when the poll is another server's (its
 * author must hear of the vote; a local poll's remote audience must hear
 * of the new counts).
 */
enum eu_poll_vote eu_poll_vote_read(const struct pg_result *res, bool *remote);
/*
 * What EU_POLLS_VOTE_REMOTE's rows say: EU_POLL_NOT_FOUND when there is no
 * open poll there that the voter may see and vote in (ended and own polls
 * included), EU_POLL_NO_OPTION, EU_POLL_VOTED_BEFORE (that choice, or a
 * second one in a single-choice poll), or EU_POLL_VOTED with *poll_id
 * (borrowed from res) and *hide_totals set.
 */
enum eu_poll_vote eu_poll_vote_remote_read(const struct pg_result *res, const char **poll_id,
                                           bool *hide_totals);

/*
 * The poll closer, a timed task (eu_task_kinds[] in src/app/kinds.c): closes
 * the tenant's polls whose end has passed, notifies their local authors and
 * voters ("poll"), and sleeps until the next end. Every new poll wakes it
 * for its end (src/api/statuses.c).
 */
void eu_polls_task_run(struct eu_task_run *run);

#endif
