/*
 * Federation with a peer that is not Eunha: a Fedify 1.5 server
 * (tests/fedify/peer.mjs, run by node) and a real `eunha serve` started by
 * the integration harness, talking signed ActivityPub over real HTTP on
 * loopback. Eunha's tenant is "eunha.test", which the peer reaches through
 * its fetch() host map; the peer's actors are http://fedify.test/users/alice
 * (and zoe), which eunha reaches through [federation] hosts. Fedify 1.5
 * verifies only draft-cavage signatures, so anything eunha sends it must be
 * signed that way to count. Each test starts both processes afresh, so
 * every exchange is a first contact (no cached keys, no learned signing
 * form). What is covered:
 *
 *  1. alice (Fedify) follows bob (local): eunha verifies her Follow, and its
 *     Accept is verified by Fedify on the first try (Fedify refused nothing,
 *     where an RFC 9421 signature would get 401 before a retry), the follow
 *     shows as accepted on both sides, and bob's next public post reaches
 *     her, his follower, as a Create(Note) by bob.
 *  2. bob follows alice: WebFinger and the actor are fetched from Fedify,
 *     Fedify's Accept makes the relationship "following" (not "requested"),
 *     a post of bob's mentioning her reaches her as a Create(Note), and his
 *     unfollow reaches her as an Undo of the Follow.
 *  3. alice favourites and boosts a status of bob's that bob has just read
 *     (so he is in the render cache): bob gets "favourite" and "reblog"
 *     notifications whose status has uri http://eunha.test/users/bob/
 *     statuses/ID and url http://eunha.test/@bob/ID, and GET
 *     /api/v1/statuses/ID shows that uri and url with favourites_count 1
 *     and reblogs_count 1 to bob and to another local user alike; her Undo
 *     of the Like brings favourites_count back to 0.
 *  4. alice replies to bob's status with a Create(Note) mentioning him: bob
 *     gets a "mention" notification for a status in reply to his. bob
 *     reports her reply with forward=true: the report reaches Fedify as a
 *     Flag from the tenant's instance actor, signed so that Fedify accepts
 *     it, naming alice and her reply, with bob's comment.
 *  5. alice quotes a status of bob's (a Create(Note) with Fedify's
 *     quoteUrl): the quote is approved by bob's policy, shown with the
 *     quoted status, and bob gets a "quote" notification.
 *
 * Exits 77 (CTest's "skipped") when node or the npm packages are missing,
 * which scripts/test.sh installs (npm ci in tests/fedify).
 */
#include "harness.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef EUNHA_FEDIFY_DIR
#error "EUNHA_FEDIFY_DIR must name tests/fedify"
#endif

#define SKIP 77
#define HOST "eunha.test"
#define ALICE "http://fedify.test/users/alice"
#define ALICE_ACCT "alice@fedify.test"
#define BOB "http://" HOST "/users/bob"
/* Generous: the test machine is shared and often loaded. What is awaited
 * is an event, never a duration, so a fast run is not slowed by these. */
#define WAIT_MS 30000
#define PEER_START_MS 60000
#define TIMEOUT 180

/* The node process running peer.mjs. */
struct fedify {
    pid_t pid;
    int port;
    int in_fd;  /* its stdin: closing it ends the peer */
    int out_fd; /* its stdout, where it says "listening PORT" */
};

/*
 * Starts `node peer.mjs fd:3` in EUNHA_FEDIFY_DIR on a listening socket made
 * here, so the port is known at once and node (seconds to load Fedify on a
 * busy machine) starts while eunha does; fedify_wait_ready() waits for it.
 * The peer dies with this test process (PR_SET_PDEATHSIG, and its stdin
 * closing), so a failed assertion leaves nothing running. Every descriptor
 * is close-on-exec here so the eunha server started next inherits none.
 */
static void
fedify_start(struct fedify *f)
{
    int sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(sock, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert_int_eq(bind(sock, (struct sockaddr *)&sa, sizeof(sa)), 0);
    ck_assert_int_eq(listen(sock, 64), 0);
    socklen_t len = sizeof(sa);
    ck_assert_int_eq(getsockname(sock, (struct sockaddr *)&sa, &len), 0);
    f->port = ntohs(sa.sin_port);

    int in[2], out[2];
    ck_assert_int_eq(pipe2(in, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        /* dup2() clears close-on-exec on the copies. */
        if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0)
            _exit(127);
        if (sock == 3)
            fcntl(3, F_SETFD, 0);
        else if (dup2(sock, 3) < 0)
            _exit(127);
        if (chdir(EUNHA_FEDIFY_DIR) != 0)
            _exit(127);
        execlp("node", "node", "peer.mjs", "fd:3", (char *)NULL);
        _exit(127);
    }
    close(sock);
    close(in[0]);
    close(out[1]);
    f->pid = pid;
    f->in_fd = in[1];
    f->out_fd = out[0];
}

/* Waits for the peer's "listening PORT" line. */
static void
fedify_wait_ready(struct fedify *f)
{
    char line[128];
    size_t n = 0;
    long long deadline = eu_it_now_ms() + PEER_START_MS;
    while (n < sizeof(line) - 1 && (n == 0 || line[n - 1] != '\n')) {
        long long left = deadline - eu_it_now_ms();
        ck_assert_msg(left > 0, "fedify peer did not start in %d ms", PEER_START_MS);
        struct pollfd p = {.fd = f->out_fd, .events = POLLIN};
        int rc = poll(&p, 1, (int)left);
        if (rc < 0 && errno == EINTR)
            continue;
        ck_assert_int_ge(rc, 0);
        if (rc == 0)
            continue;
        ssize_t got = read(f->out_fd, line + n, 1);
        ck_assert_msg(got == 1, "fedify peer exited before it listened");
        n++;
    }
    line[n] = '\0';
    int port = 0;
    ck_assert_msg(sscanf(line, "listening %d", &port) == 1 && port == f->port,
                  "fedify peer said '%s', want port %d", line, f->port);
}

static void
fedify_stop(struct fedify *f)
{
    close(f->in_fd);
    close(f->out_fd);
    kill(f->pid, SIGTERM);
    waitpid(f->pid, NULL, 0);
}

/* POSTs body to the peer's /control/VERB; asserts 200 and returns the
 * answer's JSON (the caller json_decref()s it). */
static json_t *
fedify_control(struct fedify *f, const char *verb, json_t *body)
{
    char path[64], *text = json_dumps(body, JSON_COMPACT);
    snprintf(path, sizeof(path), "/control/%s", verb);
    struct eu_it_resp r = {0};
    ck_assert_int_eq(eu_it_http(&r, "POST", f->port, "fedify.test", path, NULL, text), 0);
    ck_assert_msg(r.status == 200, "fedify %s: %ld %s", verb, r.status, r.body);
    json_t *out = json_incref(r.json);
    eu_it_resp_free(&r);
    free(text);
    json_decref(body);
    return out;
}

/* The peer's /control/state (the caller json_decref()s it). */
static json_t *
fedify_state(struct fedify *f)
{
    struct eu_it_resp r = {0};
    ck_assert_int_eq(eu_it_http(&r, "GET", f->port, "fedify.test", "/control/state", NULL, NULL),
                     0);
    ck_assert_int_eq(r.status, 200);
    json_t *out = json_incref(r.json);
    eu_it_resp_free(&r);
    return out;
}

typedef bool (*state_pred)(json_t *state, const void *arg);

/* Polls the peer's state until pred holds; asserts it does within WAIT_MS,
 * showing the last state. */
static void
fedify_wait(struct fedify *f, state_pred pred, const void *arg, const char *what)
{
    long long deadline = eu_it_now_ms() + WAIT_MS;
    for (;;) {
        json_t *st = fedify_state(f);
        if (pred(st, arg)) {
            json_decref(st);
            return;
        }
        if (eu_it_now_ms() > deadline) {
            char *text = json_dumps(st, JSON_COMPACT);
            ck_abort_msg("fedify peer: %s not seen in %d ms; state %.3000s", what, WAIT_MS, text);
        }
        json_decref(st);
        eu_it_sleep_ms(100);
    }
}

/* Asserts the peer refused no POST: a refused signature would be a 401. */
static void
fedify_expect_nothing_refused(struct fedify *f)
{
    json_t *st = fedify_state(f);
    json_t *refused = json_object_get(st, "refused");
    char *text = json_dumps(refused, JSON_COMPACT);
    ck_assert_msg(json_array_size(refused) == 0, "Fedify refused deliveries: %.3000s", text);
    free(text);
    json_decref(st);
}

/* state.follows[arg] == "accepted" */
static bool
follow_accepted(json_t *st, const void *arg)
{
    json_t *v = json_object_get(json_object_get(st, "follows"), arg);
    return json_is_string(v) && strcmp(json_string_value(v), "accepted") == 0;
}

/* state.followers.alice holds arg */
static bool
alice_followed_by(json_t *st, const void *arg)
{
    size_t i;
    json_t *v;
    json_array_foreach(eu_it_jpath(st, "followers.alice"), i, v)
    {
        if (strcmp(json_string_value(v), arg) == 0)
            return true;
    }
    return false;
}

static bool
alice_not_followed_by(json_t *st, const void *arg)
{
    return !alice_followed_by(st, arg);
}

/* A Create in state.received whose object's content holds text. */
static json_t *
received_create(json_t *st, const char *text)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(st, "received"), i, v)
    {
        const char *type = json_string_value(json_object_get(v, "type"));
        const char *content = json_string_value(json_object_get(v, "content"));
        if (type && strcmp(type, "Create") == 0 && content && strstr(content, text))
            return v;
    }
    return NULL;
}

static bool
has_create(json_t *st, const void *arg)
{
    return received_create(st, arg) != NULL;
}

/* Asserts the Create holding text that the peer got is bob's, of his
 * status id. */
static void
expect_create_by_bob(struct fedify *f, const char *text, const char *id)
{
    json_t *st = fedify_state(f);
    json_t *create = received_create(st, text);
    ck_assert_ptr_nonnull(create);
    ck_assert_str_eq(json_string_value(json_object_get(create, "actor")), BOB);
    ck_assert_str_eq(json_string_value(json_object_get(create, "attributedTo")), BOB);
    char uri[256];
    snprintf(uri, sizeof(uri), BOB "/statuses/%s", id);
    ck_assert_str_eq(json_string_value(json_object_get(create, "object")), uri);
    json_decref(st);
}

static bool
following(const struct eu_it_resp *r, const void *arg)
{
    (void)arg;
    return r->status == 200 &&
           json_is_true(json_object_get(json_array_get(r->json, 0), "following"));
}

/* The two processes, a tenant, bob and his token. */
struct fedify_world {
    struct fedify peer;
    struct eu_it_server *s;
    char *bob, *bob_id;
};

static void
world_start(struct fedify_world *w)
{
    fedify_start(&w->peer);
    char toml[512];
    snprintf(toml, sizeof(toml),
             "[workers]\nqueue_idle_poll_seconds = 1\n"
             "[federation]\nallow_http = true\nallow_private_addresses = true\n"
             "hosts = [\"fedify.test=127.0.0.1:%d\"]\n",
             w->peer.port);
    struct eu_it_opts o = {.extra_toml = toml};
    w->s = eu_it_server_start_opts(&o);
    fedify_wait_ready(&w->peer);
    json_decref(fedify_control(&w->peer, "map",
                               json_pack("{s:s, s:i}", "host", HOST, "port", w->s->public_port)));
    json_decref(eu_it_tenant_create(w->s, HOST, "Eunha"));
    w->bob = eu_it_user_new(w->s, HOST, "bob", "read write follow", &w->bob_id);
}

static void
world_stop(struct fedify_world *w)
{
    fedify_stop(&w->peer);
    free(w->bob);
    free(w->bob_id);
    ck_assert_int_eq(eu_it_server_stop(w->s), 0);
    eu_it_server_free(w->s);
}

/* bob posts text publicly; returns the status id (caller frees). */
static char *
bob_posts(struct fedify_world *w, const char *text)
{
    struct eu_it_resp r = {0};
    json_t *b = json_pack("{s:s, s:s}", "status", text, "visibility", "public");
    char *body = json_dumps(b, JSON_COMPACT);
    json_decref(b);
    eu_it_callf(w->s, &r, HOST, "POST", w->bob, body, "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *id = strdup(eu_it_json_str(&r, "id"));
    free(body);
    eu_it_resp_free(&r);
    return id;
}

/* 1: Fedify follows a local user; eunha's Accept passes Fedify's check. */
START_TEST(test_fedify_follows_local_user)
{
    struct fedify_world w;
    world_start(&w);
    struct eu_it_resp r = {0};

    json_t *ans =
        fedify_control(&w.peer, "follow", json_pack("{s:s, s:s}", "actor", "alice", "target", BOB));
    const char *follow_id = json_string_value(json_object_get(ans, "id"));
    ck_assert_ptr_nonnull(follow_id);
    fedify_wait(&w.peer, follow_accepted, follow_id, "eunha's Accept of alice's Follow");
    /* First try: a signature Fedify cannot verify would have been refused
     * with 401 before any later form got through. */
    fedify_expect_nothing_refused(&w.peer);

    eu_it_wait_get(w.s, &r, HOST, w.bob, WAIT_MS, eu_it_has_acct, ALICE_ACCT,
                   "bob's follow notification", "/api/v1/notifications?types%%5B%%5D=follow");
    eu_it_callf(w.s, &r, HOST, "GET", w.bob, NULL, "/api/v1/accounts/%s/followers", w.bob_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    json_t *alice = eu_it_find(r.json, "acct", ALICE_ACCT);
    ck_assert_msg(alice != NULL, "alice not among bob's followers: %.1500s", r.body);
    ck_assert_str_eq(json_string_value(json_object_get(alice, "url")), ALICE);

    /* A follower on Fedify gets bob's public posts. */
    char *id = bob_posts(&w, "a post for my followers");
    fedify_wait(&w.peer, has_create, "a post for my followers", "bob's post to his followers");
    expect_create_by_bob(&w.peer, "a post for my followers", id);
    fedify_expect_nothing_refused(&w.peer);

    free(id);
    json_decref(ans);
    eu_it_resp_free(&r);
    world_stop(&w);
}
END_TEST

/* 2: a local user follows the Fedify actor; a post of his reaches Fedify. */
START_TEST(test_local_user_follows_fedify)
{
    struct fedify_world w;
    world_start(&w);
    struct eu_it_resp r = {0};

    eu_it_callf(w.s, &r, HOST, "GET", w.bob, NULL,
                "/api/v2/search?q=%%40alice%%40fedify.test&resolve=true&type=accounts");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_msg(json_array_size(json_object_get(r.json, "accounts")) == 1,
                  "alice@fedify.test not resolved: %.1500s", r.body);
    EU_IT_EXPECT_JSTR(&r, "accounts.0.acct", ALICE_ACCT);
    char *alice_id = strdup(json_string_value(eu_it_jpath(r.json, "accounts.0.id")));
    eu_it_callf(w.s, &r, HOST, "POST", w.bob, NULL, "/api/v1/accounts/%s/follow", alice_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    /* "following" only once Fedify's Accept came back and was verified. */
    eu_it_wait_get(w.s, &r, HOST, w.bob, WAIT_MS, following, NULL, "bob follows alice",
                   "/api/v1/accounts/relationships?id%%5B%%5D=%s", alice_id);
    fedify_wait(&w.peer, alice_followed_by, BOB, "bob among alice's followers");

    /* alice does not follow bob: his post reaches her by mentioning her. */
    char *id = bob_posts(&w, "@alice@fedify.test hello fedify from eunha");
    fedify_wait(&w.peer, has_create, "hello fedify from eunha", "bob's post mentioning alice");
    expect_create_by_bob(&w.peer, "hello fedify from eunha", id);

    /* Unfollowing reaches Fedify as an Undo of the Follow. */
    eu_it_callf(w.s, &r, HOST, "POST", w.bob, NULL, "/api/v1/accounts/%s/unfollow", alice_id);
    EU_IT_EXPECT_STATUS(&r, 200);
    fedify_wait(&w.peer, alice_not_followed_by, BOB, "bob's Undo of his Follow");
    fedify_expect_nothing_refused(&w.peer);

    free(id);
    free(alice_id);
    eu_it_resp_free(&r);
    world_stop(&w);
}
END_TEST

/* Asserts st (a status entity) is bob's status id with its canonical uri
 * and url; who says who saw it. */
static void
expect_bob_status(json_t *st, const char *id, const char *who)
{
    char uri[256], url[256];
    snprintf(uri, sizeof(uri), BOB "/statuses/%s", id);
    snprintf(url, sizeof(url), "http://" HOST "/@bob/%s", id);
    char *text = json_dumps(st, JSON_COMPACT);
    ck_assert_msg(json_is_object(st), "%s: no status: %.1500s", who, text);
    const char *got_uri = json_string_value(json_object_get(st, "uri"));
    const char *got_url = json_string_value(json_object_get(st, "url"));
    ck_assert_msg(got_uri && strcmp(got_uri, uri) == 0, "%s: uri '%s', want '%s'", who,
                  got_uri ? got_uri : "(none)", uri);
    ck_assert_msg(got_url && strcmp(got_url, url) == 0, "%s: url '%s', want '%s'", who,
                  got_url ? got_url : "(none)", url);
    free(text);
}

/* The notification of type from alice in r (an array), or NULL. */
static json_t *
notification_from_alice(const struct eu_it_resp *r, const char *type)
{
    size_t i;
    json_t *v;
    json_array_foreach(r->json, i, v)
    {
        const char *t = json_string_value(json_object_get(v, "type"));
        const char *acct = json_string_value(eu_it_jpath(v, "account.acct"));
        if (t && acct && strcmp(t, type) == 0 && strcmp(acct, ALICE_ACCT) == 0)
            return v;
    }
    return NULL;
}

static bool
has_notification(const struct eu_it_resp *r, const void *arg)
{
    return r->status == 200 && json_is_array(r->json) && notification_from_alice(r, arg);
}

/* Asserts bob's status id reads the same to viewer tok: canonical uri and
 * url, and the counts given. */
static void
expect_counts(struct fedify_world *w, const char *tok, const char *who, const char *id, int favs,
              int reblogs)
{
    struct eu_it_resp r = {0};
    eu_it_callf(w->s, &r, HOST, "GET", tok, NULL, "/api/v1/statuses/%s", id);
    EU_IT_EXPECT_STATUS(&r, 200);
    expect_bob_status(r.json, id, who);
    ck_assert_msg(json_integer_value(json_object_get(r.json, "favourites_count")) == favs &&
                      json_integer_value(json_object_get(r.json, "reblogs_count")) == reblogs,
                  "%s: want %d favourites and %d reblogs: %.1500s", who, favs, reblogs, r.body);
    eu_it_resp_free(&r);
}

static bool
unfavourited(const struct eu_it_resp *r, const void *arg)
{
    (void)arg;
    return r->status == 200 &&
           json_integer_value(json_object_get(r->json, "favourites_count")) == 0;
}

/* 3: Fedify favourites and boosts a local status, then takes the like back. */
START_TEST(test_fedify_favourites_and_boosts)
{
    struct fedify_world w;
    world_start(&w);
    struct eu_it_resp r = {0};
    char *carol = eu_it_user_new(w.s, HOST, "carol", "read write follow", NULL);

    char *id = bob_posts(&w, "a status for fedify to like");
    char uri[256];
    snprintf(uri, sizeof(uri), BOB "/statuses/%s", id);
    /* Read first, so bob's account is in the render cache when the
     * favourite makes the status render again. */
    expect_counts(&w, w.bob, "bob before", id, 0, 0);

    json_t *like =
        fedify_control(&w.peer, "like", json_pack("{s:s, s:s}", "actor", "alice", "object", uri));
    eu_it_wait_get(w.s, &r, HOST, w.bob, WAIT_MS, has_notification, "favourite",
                   "bob's favourite notification", "/api/v1/notifications?types%%5B%%5D=favourite");
    expect_bob_status(json_object_get(notification_from_alice(&r, "favourite"), "status"), id,
                      "favourite notification");
    expect_counts(&w, w.bob, "bob after the like", id, 1, 0);
    expect_counts(&w, carol, "carol after the like", id, 1, 0);

    json_decref(fedify_control(&w.peer, "announce",
                               json_pack("{s:s, s:s}", "actor", "alice", "object", uri)));
    eu_it_wait_get(w.s, &r, HOST, w.bob, WAIT_MS, has_notification, "reblog",
                   "bob's reblog notification", "/api/v1/notifications?types%%5B%%5D=reblog");
    expect_bob_status(json_object_get(notification_from_alice(&r, "reblog"), "status"), id,
                      "reblog notification");
    expect_counts(&w, w.bob, "bob after the boost", id, 1, 1);
    expect_counts(&w, carol, "carol after the boost", id, 1, 1);

    /* alice takes her like back: an Undo of the Like. */
    json_decref(fedify_control(
        &w.peer, "undo",
        json_pack("{s:s, s:O}", "actor", "alice", "activity", json_object_get(like, "id"))));
    eu_it_wait_get(w.s, &r, HOST, carol, WAIT_MS, unfavourited, NULL, "the Undo of alice's like",
                   "/api/v1/statuses/%s", id);
    expect_counts(&w, w.bob, "bob after the undo", id, 0, 1);
    expect_counts(&w, carol, "carol after the undo", id, 0, 1);
    fedify_expect_nothing_refused(&w.peer);

    json_decref(like);
    free(id);
    free(carol);
    eu_it_resp_free(&r);
    world_stop(&w);
}
END_TEST

/* The Flag in state.received, or NULL. */
static json_t *
received_flag(json_t *st)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(st, "received"), i, v)
    {
        const char *type = json_string_value(json_object_get(v, "type"));
        if (type && strcmp(type, "Flag") == 0)
            return v;
    }
    return NULL;
}

static bool
has_flag(json_t *st, const void *arg)
{
    (void)arg;
    return received_flag(st) != NULL;
}

/* 4: a Fedify reply mentioning the author is a mention notification; a
 * report of it forwarded reaches Fedify as a Flag. */
START_TEST(test_fedify_reply_mentions)
{
    struct fedify_world w;
    world_start(&w);
    struct eu_it_resp r = {0};

    char *id = bob_posts(&w, "a status for fedify to answer");
    char uri[256];
    snprintf(uri, sizeof(uri), BOB "/statuses/%s", id);
    json_decref(
        fedify_control(&w.peer, "reply", json_pack("{s:s, s:s}", "actor", "alice", "object", uri)));
    eu_it_wait_get(w.s, &r, HOST, w.bob, WAIT_MS, has_notification, "mention",
                   "bob's mention notification", "/api/v1/notifications?types%%5B%%5D=mention");
    json_t *st = json_object_get(notification_from_alice(&r, "mention"), "status");
    const char *content = json_string_value(json_object_get(st, "content"));
    ck_assert_msg(content && strstr(content, "hello from Fedify"), "mention content: %s",
                  content ? content : "(none)");
    ck_assert_str_eq(json_string_value(json_object_get(st, "in_reply_to_id")), id);
    ck_assert_str_eq(json_string_value(json_object_get(st, "in_reply_to_account_id")), w.bob_id);
    ck_assert_str_eq(json_string_value(eu_it_jpath(st, "account.acct")), ALICE_ACCT);

    /* The reply reported and forwarded: a Flag naming alice and it. */
    char *reply_id = strdup(json_string_value(json_object_get(st, "id")));
    char *reply_uri = strdup(json_string_value(json_object_get(st, "uri")));
    char *alice_id = strdup(json_string_value(eu_it_jpath(st, "account.id")));
    json_t *b = json_pack("{s:s, s:[s], s:s, s:b}", "account_id", alice_id, "status_ids", reply_id,
                          "comment", "forwarded from eunha", "forward", 1);
    char *body = json_dumps(b, JSON_COMPACT);
    json_decref(b);
    eu_it_callf(w.s, &r, HOST, "POST", w.bob, body, "/api/v1/reports");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert(json_is_true(json_object_get(r.json, "forwarded")));
    fedify_wait(&w.peer, has_flag, NULL, "the forwarded report's Flag");
    json_t *state = fedify_state(&w.peer);
    json_t *flag = received_flag(state);
    const char *actor = json_string_value(json_object_get(flag, "actor"));
    ck_assert_msg(actor && strstr(actor, "http://" HOST "/"), "Flag actor %s",
                  actor ? actor : "(none)");
    ck_assert_str_eq(json_string_value(json_object_get(flag, "content")), "forwarded from eunha");
    bool names_alice = false, names_reply = false;
    size_t i;
    json_t *o;
    json_array_foreach(json_object_get(flag, "objects"), i, o)
    {
        names_alice |= strcmp(json_string_value(o), ALICE) == 0;
        names_reply |= strcmp(json_string_value(o), reply_uri) == 0;
    }
    char *text = json_dumps(flag, JSON_COMPACT);
    ck_assert_msg(names_alice && names_reply, "Flag objects: %s (reply %s)", text, reply_uri);
    free(text);
    json_decref(state);
    fedify_expect_nothing_refused(&w.peer);

    free(body);
    free(reply_id);
    free(reply_uri);
    free(alice_id);
    free(id);
    eu_it_resp_free(&r);
    world_stop(&w);
}
END_TEST

/* 5: a Fedify Note quoting bob's post (Fedify's quoteUrl, which it also
 * writes as _misskey_quote and quoteUri) is a quote, approved by bob's
 * default policy, and bob is told. Fedify 1.5 has no QuoteRequest. */
START_TEST(test_fedify_quotes)
{
    struct fedify_world w;
    world_start(&w);
    struct eu_it_resp r = {0};

    char *id = bob_posts(&w, "a status for fedify to quote");
    char uri[256];
    snprintf(uri, sizeof(uri), BOB "/statuses/%s", id);
    json_decref(
        fedify_control(&w.peer, "quote", json_pack("{s:s, s:s}", "actor", "alice", "object", uri)));
    eu_it_wait_get(w.s, &r, HOST, w.bob, WAIT_MS, has_notification, "quote",
                   "bob's quote notification", "/api/v1/notifications?types%%5B%%5D=quote");
    json_t *st = json_object_get(notification_from_alice(&r, "quote"), "status");
    ck_assert_str_eq(json_string_value(eu_it_jpath(st, "quote.state")), "accepted");
    ck_assert_str_eq(json_string_value(eu_it_jpath(st, "quote.quoted_status.id")), id);
    fedify_expect_nothing_refused(&w.peer);

    free(id);
    eu_it_resp_free(&r);
    world_stop(&w);
}
END_TEST

int
main(void)
{
    if (system("node --version >/dev/null 2>&1") != 0 ||
        access(EUNHA_FEDIFY_DIR "/node_modules/@fedify/fedify/package.json", R_OK) != 0) {
        fprintf(stderr, "fedify: node or @fedify/fedify is not installed (run scripts/test.sh or"
                        " npm ci in tests/fedify); skipping\n");
        return SKIP;
    }
    Suite *suite = suite_create("fedify");
    EU_IT_ADD_TCASE(suite, test_fedify_follows_local_user, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_local_user_follows_fedify, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_fedify_favourites_and_boosts, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_fedify_reply_mentions, TIMEOUT);
    EU_IT_ADD_TCASE(suite, test_fedify_quotes, TIMEOUT);
    return eu_it_run_suite(suite);
}
