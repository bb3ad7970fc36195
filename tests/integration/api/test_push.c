/*
 * Web Push over real HTTP: /api/v1/push/subscription as Mastodon answers
 * it (entity, 404, 400/422 with nothing stored, scope push, another
 * tenant's token refused), the VAPID key shown alike in the subscription,
 * /api/v2/instance and the app, and delivery to a push service this test
 * runs on loopback: it receives the POSTs and opens each body with the
 * subscriber's private key by its own key schedule (OpenSSL's HKDF, not
 * the server's code), for both encodings, checking every payload field and
 * header. The alerts and the policy hold pushes back; a 410 deletes the
 * subscription; a decoy tenant's subscription gets nothing.
 */
#include "world.h"

#include <arpa/inet.h>
#include <check.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/thread.h>
#include <netinet/in.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/param_build.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include "eunha/webpush.h"

#define TIMEOUT 240
#define HOST "push.example"
#define DECOY "decoy.example"
#define SCOPES "read write follow push"
#define TOML "[federation]\nallow_http = true\nallow_private_addresses = true\n"

static const struct eu_it_world_opts world = {
    .host = HOST,
    .decoy = DECOY,
    .scopes = SCOPES,
    .extra_toml = TOML,
    .users = {{"alice"},
              {"alice_b", NULL, "alice"},
              {"alice_c", NULL, "alice"},
              {"alice_d", NULL, "alice"},
              {"alice_ro", NULL, "alice", "read write"},
              {"carol"},
              {"dave", DECOY}},
};

#define call(w, r, method, who, json, ...)                                                         \
    eu_it_callf((w)->s, r, HOST, method, eu_it_tok(w, who), json, __VA_ARGS__)

/* ------------------------------------------------------------ push service */

#define SVC_MAX 32

struct pushed {
    char path[128];
    char encoding[32], encryption[128], crypto_key[512], authorization[1024], ttl[16], urgency[16],
        ctype[64];
    unsigned char body[4200];
    size_t len;
};

struct svc {
    pthread_t thread;
    pthread_mutex_t mu;
    struct event_base *base;
    struct evhttp *http;
    struct event *stop;
    int port;
    struct pushed got[SVC_MAX];
    int n;
};

static void
copy_header(struct evkeyvalq *in, const char *name, char *out, size_t len)
{
    const char *v = evhttp_find_header(in, name);
    snprintf(out, len, "%s", v ? v : "");
}

/* Records every POST; paths under /gone answer 410, the rest 201. */
static void
svc_on_request(struct evhttp_request *req, void *arg)
{
    struct svc *s = arg;
    const char *uri = evhttp_request_get_uri(req);
    pthread_mutex_lock(&s->mu);
    if (s->n < SVC_MAX) {
        struct pushed *p = &s->got[s->n++];
        struct evkeyvalq *in = evhttp_request_get_input_headers(req);
        snprintf(p->path, sizeof p->path, "%s", uri);
        copy_header(in, "Content-Encoding", p->encoding, sizeof p->encoding);
        copy_header(in, "Encryption", p->encryption, sizeof p->encryption);
        copy_header(in, "Crypto-Key", p->crypto_key, sizeof p->crypto_key);
        copy_header(in, "Authorization", p->authorization, sizeof p->authorization);
        copy_header(in, "TTL", p->ttl, sizeof p->ttl);
        copy_header(in, "Urgency", p->urgency, sizeof p->urgency);
        copy_header(in, "Content-Type", p->ctype, sizeof p->ctype);
        struct evbuffer *b = evhttp_request_get_input_buffer(req);
        p->len = evbuffer_get_length(b);
        if (p->len > sizeof p->body)
            p->len = sizeof p->body;
        evbuffer_remove(b, p->body, p->len);
    }
    pthread_mutex_unlock(&s->mu);
    bool gone = strncmp(uri, "/gone", 5) == 0;
    evhttp_send_reply(req, gone ? 410 : 201, gone ? "Gone" : "Created", NULL);
}

static void *
svc_main(void *arg)
{
    struct svc *s = arg;
    event_base_dispatch(s->base);
    return NULL;
}

static void
svc_on_stop(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    event_base_loopbreak(arg);
}

static struct svc *
svc_start(void)
{
    struct svc *s = calloc(1, sizeof(*s));
    pthread_mutex_init(&s->mu, NULL);
    evthread_use_pthreads();
    s->base = event_base_new();
    s->http = evhttp_new(s->base);
    struct evhttp_bound_socket *h = evhttp_bind_socket_with_handle(s->http, "127.0.0.1", 0);
    ck_assert_ptr_nonnull(h);
    struct sockaddr_in sin;
    socklen_t len = sizeof(sin);
    getsockname(evhttp_bound_socket_get_fd(h), (struct sockaddr *)&sin, &len);
    s->port = ntohs(sin.sin_port);
    evhttp_set_gencb(s->http, svc_on_request, s);
    s->stop = event_new(s->base, -1, 0, svc_on_stop, s->base);
    ck_assert_int_eq(pthread_create(&s->thread, NULL, svc_main, s), 0);
    return s;
}

static void
svc_stop(struct svc *s)
{
    event_active(s->stop, EV_TIMEOUT, 1);
    pthread_join(s->thread, NULL);
    event_free(s->stop);
    evhttp_free(s->http);
    event_base_free(s->base);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* How many pushes came to paths starting with prefix. */
static int
svc_count(struct svc *s, const char *prefix)
{
    int n = 0;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->n; i++)
        n += strncmp(s->got[i].path, prefix, strlen(prefix)) == 0;
    pthread_mutex_unlock(&s->mu);
    return n;
}

/* Waits up to 20 s for want pushes to prefix. */
static void
svc_wait(struct svc *s, const char *prefix, int want)
{
    for (int i = 0; i < 400 && svc_count(s, prefix) < want; i++)
        eu_it_sleep_ms(50);
    ck_assert_int_eq(svc_count(s, prefix), want);
}

/* A copy of the last push to prefix. */
static struct pushed
svc_last(struct svc *s, const char *prefix)
{
    struct pushed out = {0};
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->n; i++)
        if (strncmp(s->got[i].path, prefix, strlen(prefix)) == 0)
            out = s->got[i];
    pthread_mutex_unlock(&s->mu);
    return out;
}

/* ------------------------------------------------------------ a subscriber */

struct ua {
    EVP_PKEY *key;
    unsigned char pub[65], auth[16];
    char *pub64, *auth64;
};

static void
ua_new(struct ua *u)
{
    u->key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    size_t len = 0;
    ck_assert_int_eq(EVP_PKEY_get_octet_string_param(u->key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY,
                                                     u->pub, 65, &len),
                     1);
    ck_assert_int_eq(RAND_bytes(u->auth, 16), 1);
    u->pub64 = eu_webpush_b64url(u->pub, 65);
    u->auth64 = eu_webpush_b64url(u->auth, 16);
}

static void
ua_free(struct ua *u)
{
    EVP_PKEY_free(u->key);
    free(u->pub64);
    free(u->auth64);
}

static void
hkdf(const unsigned char *salt, size_t saltlen, const unsigned char *ikm, size_t ikmlen,
     const unsigned char *info, size_t infolen, unsigned char *out, size_t outlen)
{
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
    ck_assert_int_eq(EVP_PKEY_derive_init(c), 1);
    ck_assert_int_eq(EVP_PKEY_CTX_set_hkdf_md(c, EVP_sha256()), 1);
    ck_assert_int_eq(EVP_PKEY_CTX_set1_hkdf_salt(c, salt, (int)saltlen), 1);
    ck_assert_int_eq(EVP_PKEY_CTX_set1_hkdf_key(c, ikm, (int)ikmlen), 1);
    ck_assert_int_eq(EVP_PKEY_CTX_add1_hkdf_info(c, info, (int)infolen), 1);
    ck_assert_int_eq(EVP_PKEY_derive(c, out, &outlen), 1);
    EVP_PKEY_CTX_free(c);
}

static void
ecdh(struct ua *u, const unsigned char as_pub[65], unsigned char out[32])
{
    OSSL_PARAM_BLD *b = OSSL_PARAM_BLD_new();
    OSSL_PARAM_BLD_push_utf8_string(b, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0);
    OSSL_PARAM_BLD_push_octet_string(b, OSSL_PKEY_PARAM_PUB_KEY, as_pub, 65);
    OSSL_PARAM *p = OSSL_PARAM_BLD_to_param(b);
    EVP_PKEY_CTX *fc = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    EVP_PKEY *peer = NULL;
    ck_assert_int_eq(EVP_PKEY_fromdata_init(fc), 1);
    ck_assert_int_eq(EVP_PKEY_fromdata(fc, &peer, EVP_PKEY_PUBLIC_KEY, p), 1);
    EVP_PKEY_CTX *c = EVP_PKEY_CTX_new(u->key, NULL);
    size_t len = 32;
    ck_assert_int_eq(EVP_PKEY_derive_init(c), 1);
    ck_assert_int_eq(EVP_PKEY_derive_set_peer(c, peer), 1);
    ck_assert_int_eq(EVP_PKEY_derive(c, out, &len), 1);
    EVP_PKEY_CTX_free(c);
    EVP_PKEY_free(peer);
    EVP_PKEY_CTX_free(fc);
    OSSL_PARAM_free(p);
    OSSL_PARAM_BLD_free(b);
}

static size_t
open_gcm(const unsigned char cek[16], const unsigned char nonce[12], const unsigned char *ct,
         size_t len, unsigned char *out)
{
    ck_assert_uint_gt(len, 16);
    EVP_CIPHER_CTX *x = EVP_CIPHER_CTX_new();
    int n = 0, f = 0;
    ck_assert_int_eq(EVP_DecryptInit_ex(x, EVP_aes_128_gcm(), NULL, cek, nonce), 1);
    ck_assert_int_eq(EVP_DecryptUpdate(x, out, &n, ct, (int)len - 16), 1);
    ck_assert_int_eq(EVP_CIPHER_CTX_ctrl(x, EVP_CTRL_GCM_SET_TAG, 16, (void *)(ct + len - 16)), 1);
    ck_assert_msg(EVP_DecryptFinal_ex(x, out + n, &f) == 1, "the tag does not verify");
    EVP_CIPHER_CTX_free(x);
    return (size_t)(n + f);
}

/* RFC 8291 from the receiving side; returns the payload parsed. */
static json_t *
open_aes128gcm(struct ua *u, const struct pushed *p)
{
    ck_assert_uint_gt(p->len, 86 + 17);
    const unsigned char *salt = p->body, *as_pub = p->body + 21;
    ck_assert_int_eq(p->body[20], 65);
    unsigned char shared[32], ikm[32], cek[16], nonce[12], info[200];
    ecdh(u, as_pub, shared);
    memcpy(info, "WebPush: info", 14);
    memcpy(info + 14, u->pub, 65);
    memcpy(info + 79, as_pub, 65);
    hkdf(u->auth, 16, shared, 32, info, 144, ikm, 32);
    hkdf(salt, 16, ikm, 32, (const unsigned char *)"Content-Encoding: aes128gcm", 28, cek, 16);
    hkdf(salt, 16, ikm, 32, (const unsigned char *)"Content-Encoding: nonce", 24, nonce, 12);
    unsigned char plain[4200];
    size_t n = open_gcm(cek, nonce, p->body + 86, p->len - 86, plain);
    while (n > 0 && plain[n - 1] == 0)
        n--;
    ck_assert_int_eq(plain[n - 1], 2); /* the last record's delimiter */
    plain[n - 1] = '\0';
    json_t *j = json_loads((const char *)plain, 0, NULL);
    ck_assert_msg(j != NULL, "payload is not JSON: %s", plain);
    return j;
}

/* The aesgcm draft from the receiving side. */
static json_t *
open_aesgcm(struct ua *u, const struct pushed *p)
{
    ck_assert(strncmp(p->encryption, "salt=", 5) == 0);
    ck_assert(strncmp(p->crypto_key, "dh=", 3) == 0);
    unsigned char salt[16], as_pub[65];
    ck_assert_int_eq(eu_webpush_b64url_decode(p->encryption + 5, salt, 16), 16);
    char dh[128];
    size_t dl = strcspn(p->crypto_key + 3, ";");
    memcpy(dh, p->crypto_key + 3, dl);
    dh[dl] = '\0';
    ck_assert_int_eq(eu_webpush_b64url_decode(dh, as_pub, 65), 65);
    unsigned char shared[32], ikm[32], cek[16], nonce[12], ctx[140], info[200];
    ecdh(u, as_pub, shared);
    hkdf(u->auth, 16, shared, 32, (const unsigned char *)"Content-Encoding: auth", 23, ikm, 32);
    memcpy(ctx, "P-256\0\0A", 8);
    memcpy(ctx + 8, u->pub, 65);
    ctx[73] = 0;
    ctx[74] = 65;
    memcpy(ctx + 75, as_pub, 65);
    memcpy(info, "Content-Encoding: aesgcm", 25);
    memcpy(info + 25, ctx, 140);
    hkdf(salt, 16, ikm, 32, info, 165, cek, 16);
    memcpy(info, "Content-Encoding: nonce", 24);
    memcpy(info + 24, ctx, 140);
    hkdf(salt, 16, ikm, 32, info, 164, nonce, 12);
    unsigned char plain[4200];
    size_t n = open_gcm(cek, nonce, p->body, p->len, plain);
    size_t pad = ((size_t)plain[0] << 8) | plain[1];
    ck_assert_uint_le(2 + pad, n);
    plain[n] = '\0';
    json_t *j = json_loads((const char *)plain + 2 + pad, 0, NULL);
    ck_assert_msg(j != NULL, "payload is not JSON: %s", plain + 2 + pad);
    return j;
}

/* The JWT's claims (header t=... or WebPush ...). */
static json_t *
jwt_claims(const char *jwt)
{
    const char *d1 = strchr(jwt, '.');
    ck_assert_ptr_nonnull(d1);
    const char *d2 = strchr(d1 + 1, '.');
    ck_assert_ptr_nonnull(d2);
    char part[1024];
    size_t n = (size_t)(d2 - d1 - 1);
    ck_assert_uint_lt(n, sizeof part);
    memcpy(part, d1 + 1, n);
    part[n] = '\0';
    unsigned char raw[800];
    long len = eu_webpush_b64url_decode(part, raw, sizeof raw - 1);
    ck_assert_int_gt(len, 0);
    raw[len] = '\0';
    return json_loads((const char *)raw, 0, NULL);
}

static void
expect_payload(json_t *j, const char *token, const char *type, const char *title_has,
               const char *body)
{
    ck_assert_str_eq(json_string_value(json_object_get(j, "access_token")), token);
    ck_assert_str_eq(json_string_value(json_object_get(j, "notification_type")), type);
    ck_assert_str_eq(json_string_value(json_object_get(j, "preferred_locale")), "en");
    ck_assert_ptr_nonnull(json_string_value(json_object_get(j, "notification_id")));
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(j, "title")), title_has));
    ck_assert_str_eq(json_string_value(json_object_get(j, "body")), body);
    const char *icon = json_string_value(json_object_get(j, "icon"));
    ck_assert_ptr_nonnull(icon);
    ck_assert(strncmp(icon, "http", 4) == 0);
}

/* POSTs a subscription for who; returns the answer in r. */
static void
subscribe(struct world *w, struct eu_it_resp *r, const char *host, const char *who,
          const char *endpoint, struct ua *u, bool standard, const char *data)
{
    char body[2048];
    snprintf(body, sizeof body,
             "{\"subscription\":{\"endpoint\":\"%s\",\"standard\":%s,"
             "\"keys\":{\"p256dh\":\"%s\",\"auth\":\"%s\"}},\"data\":%s}",
             endpoint, standard ? "true" : "false", u->pub64, u->auth64, data);
    eu_it_callf(w->s, r, host, "POST", eu_it_tok(w, who), body, "/api/v1/push/subscription");
}

static long
subs(struct world *w, const char *tid)
{
    return eu_it_world_sql_long(
        w, "SELECT count(*) FROM web_push_subscriptions WHERE tenant_id = %s", tid);
}

/* ------------------------------------------------------------ tests */

START_TEST(test_subscription_api)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);
    struct ua u;
    ua_new(&u);

    call(&w, &r, "GET", "alice", NULL, "/api/v1/push/subscription");
    EU_IT_EXPECT_ERROR(&r, 404);
    EU_IT_EXPECT_JSTR(&r, "error", "Record not found");
    call(&w, &r, "PUT", "alice", "{\"data\":{\"policy\":\"none\"}}", "/api/v1/push/subscription");
    EU_IT_EXPECT_ERROR(&r, 404);
    /* Without the push scope. */
    call(&w, &r, "GET", "alice_ro", NULL, "/api/v1/push/subscription");
    EU_IT_EXPECT_ERROR(&r, 403);

    /* Bad input: nothing is stored. */
    call(&w, &r, "POST", "alice", "{\"data\":{}}", "/api/v1/push/subscription");
    EU_IT_EXPECT_ERROR(&r, 400);
    call(&w, &r, "POST", "alice", "{\"subscription\":{\"keys\":{\"p256dh\":\"x\",\"auth\":\"y\"}}}",
         "/api/v1/push/subscription");
    EU_IT_EXPECT_ERROR(&r, 422);
    EU_IT_EXPECT_JSTR(&r, "error", "Validation failed: Endpoint can't be blank");
    char body[1024];
    snprintf(body, sizeof body,
             "{\"subscription\":{\"endpoint\":\"https://push.test/x\","
             "\"keys\":{\"p256dh\":\"%s\",\"auth\":\"AAAA\"}}}",
             u.pub64);
    call(&w, &r, "POST", "alice", body, "/api/v1/push/subscription");
    EU_IT_EXPECT_ERROR(&r, 422);
    snprintf(body, sizeof body,
             "{\"subscription\":{\"endpoint\":\"https://push.test/x\","
             "\"keys\":{\"p256dh\":\"BAAAAAAA\",\"auth\":\"%s\"}}}",
             u.auth64);
    call(&w, &r, "POST", "alice", body, "/api/v1/push/subscription");
    EU_IT_EXPECT_ERROR(&r, 422);
    subscribe(&w, &r, HOST, "alice", "not a url", &u, true, "{}");
    EU_IT_EXPECT_ERROR(&r, 422);
    subscribe(&w, &r, HOST, "alice", "https://push.test/x", &u, true, "{\"policy\":\"some\"}");
    EU_IT_EXPECT_ERROR(&r, 422);
    ck_assert_int_eq(subs(&w, w.tid), 0);

    /* Created: Mastodon's entity; admin types as masto.js nests them. */
    subscribe(&w, &r, HOST, "alice", "https://push.test/x", &u, true,
              "{\"policy\":\"followed\",\"alerts\":{\"mention\":true,\"favourite\":\"1\","
              "\"admin\":{\"sign_up\":true}}}");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "endpoint", "https://push.test/x");
    EU_IT_EXPECT_JSTR(&r, "policy", "followed");
    ck_assert(json_is_true(eu_it_jpath(r.json, "standard")));
    ck_assert(json_is_string(eu_it_jpath(r.json, "id")));
    ck_assert(json_is_true(json_object_get(eu_it_jpath(r.json, "alerts"), "mention")));
    ck_assert(json_is_true(json_object_get(eu_it_jpath(r.json, "alerts"), "favourite")));
    ck_assert(json_is_true(json_object_get(eu_it_jpath(r.json, "alerts"), "admin.sign_up")));
    ck_assert(json_is_false(json_object_get(eu_it_jpath(r.json, "alerts"), "reblog")));
    ck_assert(json_is_false(json_object_get(eu_it_jpath(r.json, "alerts"), "admin.report")));
    char *key = strdup(eu_it_json_str(&r, "server_key"));
    char *id = strdup(eu_it_json_str(&r, "id"));
    ck_assert_uint_eq(strlen(key), 87); /* a 65-byte point in base64url */

    /* The same key everywhere a client reads it. */
    eu_it_public(w.s, "GET", HOST, "/api/v2/instance", &r);
    EU_IT_EXPECT_JSTR(&r, "configuration.vapid.public_key", key);
    call(&w, &r, "GET", "alice", NULL, "/api/v1/apps/verify_credentials");
    EU_IT_EXPECT_JSTR(&r, "vapid_key", key);
    eu_it_callf(w.s, &r, HOST, "POST", NULL,
                "{\"client_name\":\"p\",\"redirect_uris\":\"urn:ietf:wg:oauth:2.0:oob\"}",
                "/api/v1/apps");
    EU_IT_EXPECT_JSTR(&r, "vapid_key", key);
    /* The decoy has its own. */
    eu_it_public(w.s, "GET", DECOY, "/api/v2/instance", &r);
    ck_assert_str_ne(json_string_value(eu_it_jpath(r.json, "configuration.vapid.public_key")), key);

    call(&w, &r, "GET", "alice", NULL, "/api/v1/push/subscription");
    EU_IT_EXPECT_JSTR(&r, "id", id);
    EU_IT_EXPECT_JSTR(&r, "server_key", key);
    /* PUT replaces the data: policy back to all, only reblog on. */
    call(&w, &r, "PUT", "alice", "{\"data\":{\"alerts\":{\"reblog\":true}}}",
         "/api/v1/push/subscription");
    EU_IT_EXPECT_STATUS(&r, 200);
    EU_IT_EXPECT_JSTR(&r, "policy", "all");
    EU_IT_EXPECT_JSTR(&r, "endpoint", "https://push.test/x");
    ck_assert(json_is_true(json_object_get(eu_it_jpath(r.json, "alerts"), "reblog")));
    ck_assert(json_is_false(json_object_get(eu_it_jpath(r.json, "alerts"), "mention")));
    /* Form keys, Mastodon's data[alerts][admin.report]. */
    eu_it_callf(w.s, &r, HOST, "PUT", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/push/subscription?data[alerts][admin.report]=true"
                "&data[policy]=follower");
    EU_IT_EXPECT_JSTR(&r, "policy", "follower");
    ck_assert(json_is_true(json_object_get(eu_it_jpath(r.json, "alerts"), "admin.report")));
    /* A second token of the same user has none of its own. */
    call(&w, &r, "GET", "alice_b", NULL, "/api/v1/push/subscription");
    EU_IT_EXPECT_ERROR(&r, 404);

    /* Another tenant: alice's token means nothing on the decoy, and dave's
     * subscription stays his. */
    subscribe(&w, &r, DECOY, "dave", "https://push.test/dave", &u, false, "{}");
    EU_IT_EXPECT_STATUS(&r, 200);
    eu_it_callf(w.s, &r, DECOY, "GET", eu_it_tok(&w, "alice"), NULL, "/api/v1/push/subscription");
    EU_IT_EXPECT_ERROR(&r, 401);
    eu_it_callf(w.s, &r, DECOY, "DELETE", eu_it_tok(&w, "alice"), NULL,
                "/api/v1/push/subscription");
    EU_IT_EXPECT_ERROR(&r, 401);
    eu_it_callf(w.s, &r, HOST, "GET", eu_it_tok(&w, "dave"), NULL, "/api/v1/push/subscription");
    EU_IT_EXPECT_ERROR(&r, 401);
    ck_assert_int_eq(subs(&w, w.decoy_tid), 1);

    /* A new POST replaces it (a new id); DELETE removes it. */
    subscribe(&w, &r, HOST, "alice", "https://push.test/y", &u, false, "{}");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_str_ne(eu_it_json_str(&r, "id"), id);
    ck_assert(json_is_false(eu_it_jpath(r.json, "standard")));
    ck_assert_int_eq(subs(&w, w.tid), 1);
    call(&w, &r, "DELETE", "alice", NULL, "/api/v1/push/subscription");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(json_object_size(r.json), 0);
    call(&w, &r, "GET", "alice", NULL, "/api/v1/push/subscription");
    EU_IT_EXPECT_ERROR(&r, 404);
    ck_assert_int_eq(subs(&w, w.tid), 0);
    ck_assert_int_eq(subs(&w, w.decoy_tid), 1);

    /* A revoked token takes its subscription with it. */
    subscribe(&w, &r, HOST, "alice_b", "https://push.test/z", &u, false, "{}");
    EU_IT_EXPECT_STATUS(&r, 200);
    free(eu_it_world_sql(&w,
                         "UPDATE oauth_access_tokens SET revoked_at = now() WHERE tenant_id = %s"
                         " AND id = (SELECT access_token_id FROM web_push_subscriptions"
                         " WHERE tenant_id = %s)",
                         w.tid, w.tid));
    ck_assert_int_eq(subs(&w, w.tid), 0);

    free(key);
    free(id);
    ua_free(&u);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
}
END_TEST

START_TEST(test_delivery)
{
    struct world w;
    struct eu_it_resp r = {0};
    eu_it_world_start(&w, &world);
    struct svc *svc = svc_start();
    struct ua std, legacy, followed, gone, decoy;
    ua_new(&std);
    ua_new(&legacy);
    ua_new(&followed);
    ua_new(&gone);
    ua_new(&decoy);
    char ep[256];

    snprintf(ep, sizeof ep, "http://127.0.0.1:%d/ok/std", svc->port);
    subscribe(&w, &r, HOST, "alice", ep, &std, true,
              "{\"alerts\":{\"mention\":true,\"favourite\":true}}");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *key = strdup(eu_it_json_str(&r, "server_key"));
    snprintf(ep, sizeof ep, "http://127.0.0.1:%d/ok/legacy", svc->port);
    subscribe(&w, &r, HOST, "alice_b", ep, &legacy, false,
              "{\"alerts\":{\"mention\":true,\"favourite\":false}}");
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(ep, sizeof ep, "http://127.0.0.1:%d/ok/followed", svc->port);
    subscribe(&w, &r, HOST, "alice_c", ep, &followed, true,
              "{\"policy\":\"followed\",\"alerts\":{\"mention\":true}}");
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(ep, sizeof ep, "http://127.0.0.1:%d/gone/1", svc->port);
    subscribe(&w, &r, HOST, "alice_d", ep, &gone, true, "{\"alerts\":{\"mention\":true}}");
    EU_IT_EXPECT_STATUS(&r, 200);
    snprintf(ep, sizeof ep, "http://127.0.0.1:%d/ok/decoy", svc->port);
    subscribe(&w, &r, DECOY, "dave", ep, &decoy, true, "{\"alerts\":{\"mention\":true}}");
    EU_IT_EXPECT_STATUS(&r, 200);
    ck_assert_int_eq(subs(&w, w.tid), 4);
    /* The bearer tokens are kept sealed under the host key, not in clear;
     * alice_b's is put back in clear as an older version kept it, and
     * still goes out. */
    ck_assert_int_eq(eu_it_world_sql_long(&w, "SELECT count(*) FROM web_push_subscriptions"
                                              " WHERE access_token NOT LIKE 'sealed1:%%'"),
                     0);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM web_push_subscriptions"
                                          " WHERE position('%s' IN access_token) > 0",
                                          eu_it_tok(&w, "alice")),
                     0);
    free(eu_it_world_sql(&w,
                         "UPDATE web_push_subscriptions SET access_token = '%s'"
                         " WHERE tenant_id = %s AND endpoint LIKE '%%/ok/legacy' RETURNING id",
                         eu_it_tok(&w, "alice_b"), w.tid));

    /* carol, whom alice does not follow, mentions her. */
    call(&w, &r, "POST", "carol", "{\"status\":\"@alice Tom & Jerry\"}", "/api/v1/statuses");
    EU_IT_EXPECT_STATUS(&r, 200);
    char *status = strdup(eu_it_json_str(&r, "id"));
    svc_wait(svc, "/ok/std", 1);
    svc_wait(svc, "/ok/legacy", 1);
    svc_wait(svc, "/gone/", 1);

    struct pushed p = svc_last(svc, "/ok/std");
    ck_assert_str_eq(p.encoding, "aes128gcm");
    ck_assert_str_eq(p.ttl, "172800");
    ck_assert_str_eq(p.urgency, "normal");
    ck_assert_str_eq(p.ctype, "application/octet-stream");
    ck_assert_str_eq(p.encryption, "");
    ck_assert(strncmp(p.authorization, "vapid t=", 8) == 0);
    const char *k = strstr(p.authorization, ", k=");
    ck_assert_ptr_nonnull(k);
    ck_assert_str_eq(k + 4, key);
    json_t *claims = jwt_claims(p.authorization + 8);
    char aud[64];
    snprintf(aud, sizeof aud, "http://127.0.0.1:%d", svc->port);
    ck_assert_str_eq(json_string_value(json_object_get(claims, "aud")), aud);
    ck_assert(json_integer_value(json_object_get(claims, "exp")) > 0);
    json_decref(claims);
    json_t *j = open_aes128gcm(&std, &p);
    expect_payload(j, eu_it_tok(&w, "alice"), "mention", "You were mentioned by carol",
                   "@alice Tom & Jerry");
    char *nid = strdup(json_string_value(json_object_get(j, "notification_id")));
    json_decref(j);
    char *want_nid = eu_it_world_sql(
        &w, "SELECT id::text FROM notifications WHERE tenant_id = %s AND type = 'mention'", w.tid);
    ck_assert_str_eq(nid, want_nid);

    p = svc_last(svc, "/ok/legacy");
    ck_assert_str_eq(p.encoding, "aesgcm");
    ck_assert_str_eq(p.ttl, "172800");
    ck_assert_str_eq(p.urgency, "normal");
    ck_assert(strncmp(p.authorization, "WebPush ", 8) == 0);
    const char *ecdsa = strstr(p.crypto_key, ";p256ecdsa=");
    ck_assert_ptr_nonnull(ecdsa);
    ck_assert_str_eq(ecdsa + 11, key);
    claims = jwt_claims(p.authorization + 8);
    ck_assert_str_eq(json_string_value(json_object_get(claims, "aud")), aud);
    json_decref(claims);
    j = open_aesgcm(&legacy, &p);
    expect_payload(j, eu_it_tok(&w, "alice_b"), "mention", "carol", "@alice Tom & Jerry");
    ck_assert_str_eq(json_string_value(json_object_get(j, "notification_id")), nid);
    json_decref(j);

    /* 410: the subscription is gone. */
    for (int i = 0; i < 200 && subs(&w, w.tid) != 3; i++)
        eu_it_sleep_ms(50);
    ck_assert_int_eq(subs(&w, w.tid), 3);

    /* carol favourites alice's post: only the subscription with favourite on
     * hears of it. alice's own status first. */
    call(&w, &r, "POST", "alice", "{\"status\":\"a post\"}", "/api/v1/statuses");
    char *mine = strdup(eu_it_json_str(&r, "id"));
    call(&w, &r, "POST", "carol", NULL, "/api/v1/statuses/%s/favourite", mine);
    EU_IT_EXPECT_STATUS(&r, 200);
    svc_wait(svc, "/ok/std", 2);
    p = svc_last(svc, "/ok/std");
    j = open_aes128gcm(&std, &p);
    expect_payload(j, eu_it_tok(&w, "alice"), "favourite", "carol favorited your post", "a post");
    json_decref(j);

    /* alice follows carol: now the followed subscription hears her. */
    call(&w, &r, "POST", "alice", NULL, "/api/v1/accounts/%s/follow", eu_it_id(&w, "carol"));
    EU_IT_EXPECT_STATUS(&r, 200);
    call(&w, &r, "POST", "carol", "{\"status\":\"@alice again\"}", "/api/v1/statuses");
    svc_wait(svc, "/ok/followed", 1);
    svc_wait(svc, "/ok/std", 3);
    svc_wait(svc, "/ok/legacy", 2);
    /* Held back throughout: the followed one before the follow (one push
     * only), the legacy one's favourite, the gone one, the decoy. */
    ck_assert_int_eq(svc_count(svc, "/ok/legacy"), 2);
    ck_assert_int_eq(svc_count(svc, "/gone/"), 1);
    ck_assert_int_eq(svc_count(svc, "/ok/decoy"), 0);
    ck_assert_int_eq(eu_it_world_sql_long(&w,
                                          "SELECT count(*) FROM jobs WHERE kind = 'web_push'"
                                          " AND tenant_id = %s",
                                          w.decoy_tid),
                     0);

    free(want_nid);
    free(nid);
    free(mine);
    free(status);
    free(key);
    ua_free(&std);
    ua_free(&legacy);
    ua_free(&followed);
    ua_free(&gone);
    ua_free(&decoy);
    eu_it_resp_free(&r);
    eu_it_world_stop(&w);
    svc_stop(svc);
}
END_TEST

int
main(void)
{
    Suite *s = suite_create("push");
    EU_IT_ADD_TCASE(s, test_subscription_api, TIMEOUT);
    EU_IT_ADD_TCASE(s, test_delivery, TIMEOUT);
    return eu_it_run_suite(s);
}
