/*
 * Remote actors and notes: from the JSON another server sent to the structs
 * of include/eunha/apingest.h. Servers differ in shape more than in meaning
 * (a string where another sends an array, a Link object where another sends
 * a URI, contentMap without content), so every reader here accepts each
 * shape the fediverse is known to send and nothing else; what does not fit
 * is refused with a message naming the property. The statements that store
 * the results are in ingest_store.c.
 */
#include "eunha/apingest.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "eunha/arena.h"
#include "eunha/error.h"
#include "eunha/mem.h"
#include "eunha/sanitize.h"

/* ------------------------------------------------------------ values */

/* A string member's value if it is a string no longer than cap; NULL when
 * absent or not a string; sets *too_long when it is longer. */
static const char *
str_capped(json_t *v, size_t cap, bool *too_long)
{
    if (!json_is_string(v))
        return NULL;
    if (json_string_length(v) > cap) {
        *too_long = true;
        return NULL;
    }
    /* A NUL inside would cut the string short everywhere downstream. */
    if (strlen(json_string_value(v)) != json_string_length(v)) {
        *too_long = true;
        return NULL;
    }
    return json_string_value(v);
}

const char *
eu_ap_uri_host(struct eu_arena *a, const char *uri)
{
    size_t skip;
    if (strncasecmp(uri, "https://", 8) == 0)
        skip = 8;
    else if (strncasecmp(uri, "http://", 7) == 0)
        skip = 7;
    else
        return NULL;
    const char *h = uri + skip;
    size_t n = strcspn(h, "/?#");
    if (n == 0 || n > 253 + 6)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)h[i];
        /* No user info, no spaces or controls: a host, perhaps a port. */
        if (c <= ' ' || c == '@' || c == '\\' || c >= 0x7f)
            return NULL;
    }
    char *host = eu_arena_strndup(a, h, n);
    for (char *p = host; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return host;
}

/* Whether s is an absolute http(s) URI within the cap, without controls. */
static bool
is_uri(const char *s)
{
    if (!s || strlen(s) > EU_AP_MAX_URI)
        return false;
    if (strncasecmp(s, "https://", 8) != 0 && strncasecmp(s, "http://", 7) != 0)
        return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= ' ' || *p == 0x7f)
            return false;
    return true;
}

/* The URI a value names: a string, or an object's id (or href, for Link). */
static const char *
uri_of(json_t *v)
{
    if (json_is_object(v)) {
        json_t *id = json_object_get(v, "id");
        v = id ? id : json_object_get(v, "href");
    }
    const char *s = json_string_value(v);
    return is_uri(s) ? s : NULL;
}

/* The first URI of a value that may be an array of them. */
static const char *
first_uri(json_t *v)
{
    if (!json_is_array(v))
        return uri_of(v);
    size_t n = json_array_size(v);
    for (size_t i = 0; i < n && i < EU_AP_MAX_ATTACHMENTS; i++) {
        const char *s = uri_of(json_array_get(v, i));
        if (s)
            return s;
    }
    return NULL;
}

/* A url property: a string, a Link, or an array of them; a text/html link
 * is preferred (Misskey and Peertube list several). */
static const char *
url_of(json_t *v)
{
    if (json_is_array(v)) {
        size_t n = json_array_size(v);
        for (size_t i = 0; i < n && i < EU_AP_MAX_ATTACHMENTS; i++) {
            json_t *e = json_array_get(v, i);
            const char *mt = json_string_value(json_object_get(e, "mediaType"));
            if (mt && strcmp(mt, "text/html") == 0 && uri_of(e))
                return uri_of(e);
        }
        return first_uri(v);
    }
    return uri_of(v);
}

/* An icon or image: a URI, an Image object with url, or an array of them. */
static const char *
image_url_of(json_t *v)
{
    if (json_is_array(v))
        v = json_array_get(v, 0);
    if (json_is_object(v))
        return url_of(json_object_get(v, "url"));
    return uri_of(v);
}

/* ISO 8601 as ActivityPub uses it: 2024-01-02T03:04:05[.123][Z|+01:00]. */
static bool
is_timestamp(const char *s)
{
    static const char shape[] = "dddd-dd-ddTdd:dd:dd";
    if (!s || strlen(s) > 40)
        return false;
    for (size_t i = 0; shape[i]; i++) {
        if (shape[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != shape[i])
            return false;
    }
    const char *p = s + sizeof(shape) - 1;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return false;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p == 'Z')
        return p[1] == '\0';
    if ((*p == '+' || *p == '-') && isdigit((unsigned char)p[1]) && isdigit((unsigned char)p[2])) {
        p += 3;
        if (*p == ':')
            p++;
        return (*p == '\0') ||
               (isdigit((unsigned char)p[0]) && isdigit((unsigned char)p[1]) && p[2] == '\0');
    }
    return false;
}

static const char *
timestamp_of(json_t *v)
{
    const char *s = json_string_value(v);
    return is_timestamp(s) ? s : NULL;
}

static bool
bool_of(json_t *v, bool dflt)
{
    return json_is_boolean(v) ? json_is_true(v) : dflt;
}

/* Sanitized HTML of a string value within cap, "" when absent; -1 when too
 * long or refused by the sanitizer. */
static int
html_of(struct eu_arena *a, json_t *v, size_t cap, const char **out)
{
    *out = "";
    if (!json_is_string(v))
        return 0;
    if (json_string_length(v) > cap)
        return -1;
    char *html = NULL;
    size_t len = 0;
    if (eu_sanitize_html(json_string_value(v), json_string_length(v), &html, &len) != 0)
        return -1;
    *out = eu_arena_strndup(a, html, len);
    free(html);
    return 0;
}

/* Calls fn for each element of v (an array, or one value), at most cap. */
#define EACH(v, cap, e, body)                                                                      \
    do {                                                                                           \
        json_t *each_v_ = (v);                                                                     \
        size_t each_n_ = json_is_array(each_v_) ? json_array_size(each_v_) : (each_v_ ? 1 : 0);    \
        for (size_t each_i_ = 0; each_i_ < each_n_ && each_i_ < (cap); each_i_++) {                \
            json_t *e = json_is_array(each_v_) ? json_array_get(each_v_, each_i_) : each_v_;       \
            body                                                                                   \
        }                                                                                          \
    } while (0)

static bool
type_is(json_t *obj, const char *type)
{
    const char *t = json_string_value(json_object_get(obj, "type"));
    return t && strcmp(t, type) == 0;
}

static bool
type_in(const char *t, const char *const *list)
{
    for (size_t i = 0; t && list[i]; i++)
        if (strcmp(t, list[i]) == 0)
            return true;
    return false;
}

/* The id of doc, checked against the expected host; its host in *host. */
static int
id_of(struct eu_arena *a, json_t *doc, const char *expected_host, const char **id,
      const char **host, struct eu_error *err)
{
    *id = uri_of(json_object_get(doc, "id"));
    if (!*id)
        return eu_error_set(err, 422, "id is missing or not an http(s) URI");
    *host = eu_ap_uri_host(a, *id);
    if (!*host)
        return eu_error_set(err, 422, "id has no host");
    if (expected_host && strcasecmp(*host, expected_host) != 0)
        return eu_error_set(err, 422, "id '%.200s' is not on '%.200s'", *id, expected_host);
    return 0;
}

/* ------------------------------------------------------------ actors */

/* A custom emoji tag's shortcode without its colons, when it is one
 * Mastodon would accept ([a-zA-Z0-9_]{2,}, here at most 128). */
static const char *
emoji_shortcode(struct eu_arena *a, json_t *tag)
{
    const char *name = json_string_value(json_object_get(tag, "name"));
    if (!name)
        return NULL;
    size_t n = strlen(name);
    if (n >= 2 && name[0] == ':' && name[n - 1] == ':') {
        name++;
        n -= 2;
    }
    if (n < 2 || n > 128)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)name[i]) && name[i] != '_')
            return NULL;
    char *out = eu_arena_alloc(a, n + 1);
    memcpy(out, name, n);
    out[n] = '\0';
    return out;
}

/* Adds an Emoji tag t to list (n so far, room for EU_AP_MAX_TAGS) when it
 * has a valid shortcode and an http(s) icon URL. */
static void
read_emoji(struct eu_arena *a, json_t *t, struct eu_ap_emoji *list, size_t *n)
{
    const char *shortcode = emoji_shortcode(a, t);
    json_t *icon = json_object_get(t, "icon");
    const char *url = url_of(json_is_object(icon) ? json_object_get(icon, "url") : icon);
    if (*n >= EU_AP_MAX_TAGS || !shortcode || !url || strlen(url) > 2048)
        return;
    struct eu_ap_emoji *e = &list[(*n)++];
    e->shortcode = shortcode;
    e->url = eu_arena_strdup(a, url);
    const char *uri = uri_of(json_object_get(t, "id"));
    e->uri = uri && strlen(uri) <= 2048 ? eu_arena_strdup(a, uri) : NULL;
}

static const char *const actor_types[] = {"Person", "Service",      "Application",
                                          "Group",  "Organization", NULL};

/* Picks the publicKey entry whose id is key_id (or the first). */
static int
actor_key(struct eu_arena *a, json_t *doc, const char *key_id, struct eu_ap_actor *out,
          struct eu_error *err)
{
    json_t *keys = json_object_get(doc, "publicKey");
    json_t *pick = NULL;
    EACH(keys, EU_AP_MAX_ALIASES, k, {
        const char *kid = uri_of(json_object_get(k, "id"));
        if (json_is_object(k) && kid && (!key_id || strcmp(kid, key_id) == 0)) {
            pick = k;
            break;
        }
    });
    if (!pick)
        return 0; /* a keyless actor cannot sign; it can still be shown */
    const char *owner = uri_of(json_object_get(pick, "owner"));
    if (!owner || strcmp(owner, out->id) != 0)
        return eu_error_set(err, 422, "publicKey owner is not the actor");
    bool too_long = false;
    const char *pem = str_capped(json_object_get(pick, "publicKeyPem"), EU_AP_MAX_KEY, &too_long);
    if (too_long)
        return eu_error_set(err, 422, "publicKeyPem is too long");
    if (!pem || !strstr(pem, "-----BEGIN"))
        return eu_error_set(err, 422, "publicKey has no publicKeyPem");
    out->key_id = eu_arena_strdup(a, uri_of(json_object_get(pick, "id")));
    out->public_key_pem = eu_arena_strdup(a, pem);
    return 0;
}

static int
actor_fields(struct eu_arena *a, json_t *doc, struct eu_ap_actor *out, struct eu_error *err)
{
    out->fields = eu_arena_calloc(a, EU_AP_MAX_FIELDS * sizeof(*out->fields));
    json_t *att = json_object_get(doc, "attachment");
    int rc = 0;
    EACH(att, 4 * EU_AP_MAX_FIELDS, f, {
        if (out->n_fields == EU_AP_MAX_FIELDS)
            break;
        if (!type_is(f, "PropertyValue"))
            continue;
        bool too_long = false;
        const char *name = str_capped(json_object_get(f, "name"), EU_AP_MAX_NAME, &too_long);
        const char *value = NULL;
        if (too_long || html_of(a, json_object_get(f, "value"), EU_AP_MAX_TEXT, &value) != 0) {
            rc = eu_error_set(err, 422, "a profile field is too long");
            break;
        }
        if (!name)
            continue;
        out->fields[out->n_fields].name = eu_arena_strdup(a, name);
        out->fields[out->n_fields].value = value;
        out->n_fields++;
    });
    return rc;
}

/* Copies the URIs of a value (string or array) into *list, at most cap. */
static void
uri_list(struct eu_arena *a, json_t *v, size_t cap, const char ***list, size_t *n)
{
    *list = eu_arena_calloc(a, (cap + 1) * sizeof(**list));
    *n = 0;
    EACH(v, cap, e, {
        const char *u = uri_of(e);
        if (u)
            (*list)[(*n)++] = eu_arena_strdup(a, u);
    });
}

/* An optional URI property, copied; NULL when absent or not a URI. */
static const char *
opt_uri(struct eu_arena *a, json_t *v)
{
    const char *u = uri_of(v);
    return u ? eu_arena_strdup(a, u) : NULL;
}

static bool
is_username(const char *s)
{
    if (!*s)
        return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= ' ' || *p == '@' || *p == '/' || *p == 0x7f)
            return false;
    return true;
}

int
eu_ap_actor_parse(struct eu_arena *a, json_t *doc, const char *expected_host, const char *key_id,
                  struct eu_ap_actor *out, struct eu_error *err)
{
    memset(out, 0, sizeof(*out));
    if (!json_is_object(doc))
        return eu_error_set(err, 422, "the actor is not a JSON object");
    const char *type = json_string_value(json_object_get(doc, "type"));
    if (!type_in(type, actor_types))
        return eu_error_set(err, 422, "'%.100s' is not an actor type", type ? type : "(none)");
    const char *id, *host;
    if (id_of(a, doc, expected_host, &id, &host, err) != 0)
        return -1;
    out->id = eu_arena_strdup(a, id);
    out->type = eu_arena_strdup(a, type);
    out->domain = host;

    bool too_long = false;
    const char *username =
        str_capped(json_object_get(doc, "preferredUsername"), EU_AP_MAX_NAME, &too_long);
    if (!username || !is_username(username))
        return eu_error_set(err, 422, "preferredUsername is missing or invalid");
    const char *name = str_capped(json_object_get(doc, "name"), EU_AP_MAX_NAME, &too_long);
    if (too_long)
        return eu_error_set(err, 422, "name is too long");
    out->username = eu_arena_strdup(a, username);
    out->display_name = eu_arena_strdup(a, name ? name : "");
    if (html_of(a, json_object_get(doc, "summary"), EU_AP_MAX_TEXT, &out->note) != 0)
        return eu_error_set(err, 422, "summary is too long");

    out->inbox = opt_uri(a, json_object_get(doc, "inbox"));
    if (!out->inbox)
        return eu_error_set(err, 422, "inbox is missing or not an http(s) URI");
    out->shared_inbox =
        opt_uri(a, json_object_get(json_object_get(doc, "endpoints"), "sharedInbox"));
    out->outbox = opt_uri(a, json_object_get(doc, "outbox"));
    out->followers = opt_uri(a, json_object_get(doc, "followers"));
    out->following = opt_uri(a, json_object_get(doc, "following"));
    out->featured = opt_uri(a, json_object_get(doc, "featured"));
    out->moved_to = opt_uri(a, json_object_get(doc, "movedTo"));
    const char *url = url_of(json_object_get(doc, "url"));
    out->url = url ? eu_arena_strdup(a, url) : NULL;
    const char *icon = image_url_of(json_object_get(doc, "icon"));
    out->avatar_url = icon ? eu_arena_strdup(a, icon) : NULL;
    const char *image = image_url_of(json_object_get(doc, "image"));
    out->header_url = image ? eu_arena_strdup(a, image) : NULL;
    const char *published = timestamp_of(json_object_get(doc, "published"));
    out->published = published ? eu_arena_strdup(a, published) : NULL;

    out->locked = bool_of(json_object_get(doc, "manuallyApprovesFollowers"), false);
    out->discoverable = bool_of(json_object_get(doc, "discoverable"), false);
    out->indexable = bool_of(json_object_get(doc, "indexable"), false);
    out->bot = strcmp(type, "Service") == 0 || strcmp(type, "Application") == 0;

    uri_list(a, json_object_get(doc, "alsoKnownAs"), EU_AP_MAX_ALIASES, &out->also_known_as,
             &out->n_also_known_as);
    if (actor_fields(a, doc, out, err) != 0)
        return -1;
    /* The custom emoji of its name, bio and fields. */
    out->emojis = eu_arena_calloc(a, EU_AP_MAX_TAGS * sizeof(*out->emojis));
    EACH(json_object_get(doc, "tag"), 4 * EU_AP_MAX_TAGS, t, {
        if (type_is(t, "Emoji"))
            read_emoji(a, t, out->emojis, &out->n_emojis);
    });
    return actor_key(a, doc, key_id, out, err);
}

/* ------------------------------------------------------------ notes */

static const char *const note_types[] = {"Note",  "Question", "Article", "Page", "Image",
                                         "Video", "Audio",    "Event",   NULL};

/* The types Mastodon converts (create.rb's CONVERTED_TYPES): not a post of
 * their own but a thing elsewhere (a blog article, a PeerTube video, a
 * Pixelfed photo, a Funkwhale track, a Mobilizon event), shown as its
 * title, summary and a link to it. */
static const char *const converted_types[] = {"Article", "Page",  "Image", "Video",
                                              "Audio",   "Event", NULL};

bool
eu_ap_is_note_type(const char *type)
{
    return type_in(type, note_types);
}

/* The author: a string, an object, or an array whose first Person (or
 * first URI) is the author, as Mastodon reads it. */
static const char *
author_of(json_t *v)
{
    if (!json_is_array(v))
        return uri_of(v);
    const char *first = NULL;
    EACH(v, EU_AP_MAX_TAGS, e, {
        const char *u = uri_of(e);
        if (u && json_is_object(e) && type_is(e, "Person"))
            return u;
        if (u && !first)
            first = u;
    });
    return first;
}

static bool
is_public(const char *s)
{
    return strcmp(s, EU_AP_PUBLIC) == 0 || strcmp(s, "as:Public") == 0 || strcmp(s, "Public") == 0;
}

/* Whether the to or cc list v names the Public collection / followers. */
static void
audience(json_t *v, const char *followers_url, bool *public, bool *followers)
{
    *public = *followers = false;
    EACH(v, EU_AP_MAX_RECIPIENTS, e, {
        const char *s =
            json_is_object(e) ? json_string_value(json_object_get(e, "id")) : json_string_value(e);
        if (!s)
            continue;
        if (is_public(s))
            *public = true;
        else if (followers_url ? strcmp(s, followers_url) == 0
                               : (strlen(s) > 10 && strcmp(s + strlen(s) - 10, "/followers") == 0))
            *followers = true;
    });
}

static enum eu_ap_visibility
visibility_of(json_t *doc, const char *followers_url)
{
    bool to_public, to_followers, cc_public, cc_followers;
    audience(json_object_get(doc, "to"), followers_url, &to_public, &to_followers);
    audience(json_object_get(doc, "cc"), followers_url, &cc_public, &cc_followers);
    if (to_public)
        return EU_AP_PUBLIC_VIS;
    if (cc_public)
        return EU_AP_UNLISTED;
    if (to_followers || cc_followers)
        return EU_AP_PRIVATE;
    return EU_AP_DIRECT;
}

static bool
is_language(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && n <= 35 &&
           strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") == n;
}

/*
 * The content to use and its language: content itself, else the entry of
 * contentMap in the preferred language, else its first; the language is
 * the contentMap key whose text was chosen (or matches content).
 */
static void
pick_content(json_t *doc, const char *prefer, json_t **content, const char **language)
{
    json_t *map = json_object_get(doc, "contentMap");
    *content = json_object_get(doc, "content");
    *language = NULL;
    if (!json_is_object(map))
        return;
    const char *key;
    json_t *val;
    if (json_is_string(*content)) {
        json_object_foreach(map, key, val)
        {
            if (json_equal(val, *content) && is_language(key)) {
                *language = key;
                return;
            }
        }
        return;
    }
    json_t *chosen = prefer ? json_object_get(map, prefer) : NULL;
    if (json_is_string(chosen) && is_language(prefer)) {
        *content = chosen;
        *language = prefer;
        return;
    }
    json_object_foreach(map, key, val)
    {
        if (json_is_string(val) && is_language(key)) {
            *content = val;
            *language = key;
            return;
        }
    }
}

/* A hashtag's name without '#': letters, digits, '_' and any non-ASCII. */
static const char *
hashtag_name(struct eu_arena *a, json_t *tag)
{
    const char *name = json_string_value(json_object_get(tag, "name"));
    if (!name)
        return NULL;
    if (*name == '#')
        name++;
    size_t n = strlen(name);
    if (n == 0 || n > 256)
        return NULL;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p < 0x80 && !isalnum(*p) && *p != '_')
            return NULL;
    return eu_arena_strdup(a, name);
}

static void
note_tags(struct eu_arena *a, json_t *doc, struct eu_ap_note *out)
{
    out->mentions = eu_arena_calloc(a, EU_AP_MAX_TAGS * sizeof(*out->mentions));
    out->tags = eu_arena_calloc(a, (EU_AP_MAX_TAGS + 1) * sizeof(*out->tags));
    out->emojis = eu_arena_calloc(a, EU_AP_MAX_TAGS * sizeof(*out->emojis));
    EACH(json_object_get(doc, "tag"), 4 * EU_AP_MAX_TAGS, t, {
        if (type_is(t, "Mention") && out->n_mentions < EU_AP_MAX_TAGS) {
            const char *href = uri_of(json_object_get(t, "href"));
            const char *name = json_string_value(json_object_get(t, "name"));
            if (!href)
                continue;
            struct eu_ap_mention *m = &out->mentions[out->n_mentions++];
            m->href = eu_arena_strdup(a, href);
            m->name = name && strlen(name) <= EU_AP_MAX_NAME ? eu_arena_strdup(a, name) : NULL;
        } else if (type_is(t, "Hashtag") && out->n_tags < EU_AP_MAX_TAGS) {
            const char *name = hashtag_name(a, t);
            if (name)
                out->tags[out->n_tags++] = name;
        } else if (type_is(t, "Emoji")) {
            read_emoji(a, t, out->emojis, &out->n_emojis);
        }
    });
}

static const char *const attachment_types[] = {"Document", "Image", "Video", "Audio", NULL};

static const char *
short_str(struct eu_arena *a, json_t *v, size_t cap)
{
    const char *s = json_string_value(v);
    return s && strlen(s) <= cap ? eu_arena_strdup(a, s) : NULL;
}

static int
dimension(json_t *v)
{
    json_int_t n = json_integer_value(v);
    return n > 0 && n <= 100000 ? (int)n : 0;
}

static void
note_attachments(struct eu_arena *a, json_t *doc, struct eu_ap_note *out)
{
    out->attachments = eu_arena_calloc(a, EU_AP_MAX_ATTACHMENTS * sizeof(*out->attachments));
    EACH(json_object_get(doc, "attachment"), EU_AP_MAX_ATTACHMENTS, m, {
        const char *type = json_string_value(json_object_get(m, "type"));
        const char *url = url_of(json_object_get(m, "url"));
        if (!type_in(type, attachment_types) || !url)
            continue;
        struct eu_ap_attachment *at = &out->attachments[out->n_attachments++];
        at->type = eu_arena_strdup(a, type);
        at->url = eu_arena_strdup(a, url);
        at->media_type = short_str(a, json_object_get(m, "mediaType"), 255);
        at->name = short_str(a, json_object_get(m, "name"), 1500);
        at->blurhash = short_str(a, json_object_get(m, "blurhash"), 100);
        at->width = dimension(json_object_get(m, "width"));
        at->height = dimension(json_object_get(m, "height"));
        json_t *fp = json_object_get(m, "focalPoint");
        double fx = json_number_value(json_array_get(fp, 0));
        double fy = json_number_value(json_array_get(fp, 1));
        if (json_array_size(fp) == 2 && fx >= -1 && fx <= 1 && fy >= -1 && fy <= 1) {
            at->focus_x = fx;
            at->focus_y = fy;
        }
    });
}

/* Whether a media type names a file a client can play or show. */
static bool
is_media_type(const char *mt)
{
    return mt && (strncmp(mt, "image/", 6) == 0 || strncmp(mt, "video/", 6) == 0 ||
                  strncmp(mt, "audio/", 6) == 0);
}

/*
 * An Image, Video or Audio without attachments (PeerTube lists its files
 * in url, Link objects with a mediaType per resolution; Funkwhale and some
 * Pixelfed versions alike): the first file of each kind the url list
 * names, as the attachment a client plays. Mastodon shows the link alone;
 * the file is what a reader came for and costs nothing to name, since
 * remote files are shown from their own server.
 */
static void
note_url_media(struct eu_arena *a, json_t *doc, struct eu_ap_note *out)
{
    bool seen_image = false, seen_video = false, seen_audio = false;
    EACH(json_object_get(doc, "url"), EU_AP_MAX_ATTACHMENTS * 4, e, {
        if (out->n_attachments == EU_AP_MAX_ATTACHMENTS || !json_is_object(e))
            continue;
        const char *mt = json_string_value(json_object_get(e, "mediaType"));
        const char *href = uri_of(json_object_get(e, "href"));
        if (!href)
            href = uri_of(e);
        if (!is_media_type(mt) || !href || strlen(mt) > 255)
            continue;
        bool *seen = mt[0] == 'i' ? &seen_image : mt[0] == 'v' ? &seen_video : &seen_audio;
        if (*seen)
            continue;
        *seen = true;
        struct eu_ap_attachment *at = &out->attachments[out->n_attachments++];
        at->type = mt[0] == 'i' ? "Image" : mt[0] == 'v' ? "Video" : "Audio";
        at->url = eu_arena_strdup(a, href);
        at->media_type = eu_arena_strdup(a, mt);
        at->width = dimension(json_object_get(e, "width"));
        at->height = dimension(json_object_get(e, "height"));
    });
}

static int
note_poll(struct eu_arena *a, json_t *doc, struct eu_ap_note *out, struct eu_error *err)
{
    json_t *one = json_object_get(doc, "oneOf"), *any = json_object_get(doc, "anyOf");
    json_t *list = json_is_array(any) && json_array_size(any) ? any : one;
    out->multiple = list == any && list;
    out->voters_count = -1;
    if (!json_is_array(list) || json_array_size(list) == 0)
        return eu_error_set(err, 422, "a Question without options");
    out->options = eu_arena_calloc(a, EU_AP_MAX_POLL_OPTIONS * sizeof(*out->options));
    int rc = 0;
    EACH(list, EU_AP_MAX_POLL_OPTIONS, o, {
        bool too_long = false;
        const char *name = str_capped(json_object_get(o, "name"), EU_AP_MAX_NAME, &too_long);
        if (!name) {
            rc = eu_error_set(err, 422, "a poll option without a name");
            break;
        }
        json_int_t votes =
            json_integer_value(json_object_get(json_object_get(o, "replies"), "totalItems"));
        out->options[out->n_options].name = eu_arena_strdup(a, name);
        out->options[out->n_options].votes = votes > 0 ? votes : 0;
        out->n_options++;
    });
    if (rc)
        return rc;
    json_t *closed = json_object_get(doc, "closed");
    const char *end = timestamp_of(json_object_get(doc, "endTime"));
    if (json_is_string(closed) || json_is_true(closed)) {
        out->closed = true;
        if (timestamp_of(closed))
            end = timestamp_of(closed);
    }
    out->end_time = end ? eu_arena_strdup(a, end) : NULL;
    json_t *voters = json_object_get(doc, "votersCount");
    if (json_is_integer(voters) && json_integer_value(voters) >= 0)
        out->voters_count = json_integer_value(voters);
    return 0;
}

/* The first string value of a language map (nameMap, summaryMap), or NULL. */
static json_t *
map_first(json_t *map)
{
    const char *key;
    json_t *val;
    json_object_foreach(map, key, val)
    {
        (void)key;
        if (json_is_string(val) && json_string_length(val) > 0)
            return val;
    }
    return NULL;
}

/* Mastodon shows a converted object as its title, summary and a link. */
static void
note_as_link(struct eu_arena *a, json_t *doc, struct eu_ap_note *out, const char *summary_html)
{
    const char *name = json_string_value(json_object_get(doc, "name"));
    if (!name || !*name)
        name = json_string_value(map_first(json_object_get(doc, "nameMap")));
    const char *link = out->url ? out->url : out->id;
    char *href = eu_sanitize_escape(link, strlen(link));
    char *title = name && *name && strlen(name) <= EU_AP_MAX_NAME
                      ? eu_sanitize_escape(name, strlen(name))
                      : NULL;
    bool wrap = *summary_html && strncmp(summary_html, "<p>", 3) != 0;
    out->content = eu_arena_sprintf(
        a, "%s%s%s%s%s%s<p><a href=\"%s\" rel=\"nofollow noopener\" target=\"_blank\">%s</a></p>",
        title ? "<p><strong>" : "", title ? title : "", title ? "</strong></p>" : "",
        wrap ? "<p>" : "", summary_html, wrap ? "</p>" : "", href, href);
    free(title);
    free(href);
}

int
eu_ap_note_parse(struct eu_arena *a, json_t *doc, const char *expected_host,
                 const char *followers_url, const char *language, struct eu_ap_note *out,
                 struct eu_error *err)
{
    memset(out, 0, sizeof(*out));
    out->voters_count = -1;
    if (!json_is_object(doc))
        return eu_error_set(err, 422, "the object is not a JSON object");
    const char *type = json_string_value(json_object_get(doc, "type"));
    if (!type_in(type, note_types))
        return eu_error_set(err, 422, "'%.100s' is not a supported object type",
                            type ? type : "(none)");
    const char *id, *host;
    if (id_of(a, doc, expected_host, &id, &host, err) != 0)
        return -1;
    out->id = eu_arena_strdup(a, id);
    out->type = eu_arena_strdup(a, type);

    const char *author = author_of(json_object_get(doc, "attributedTo"));
    if (!author)
        return eu_error_set(err, 422, "attributedTo is missing");
    const char *author_host = eu_ap_uri_host(a, author);
    if (!author_host || strcmp(author_host, host) != 0)
        return eu_error_set(err, 422, "attributedTo is not on the object's host");
    out->attributed_to = eu_arena_strdup(a, author);

    out->in_reply_to = opt_uri(a, json_object_get(doc, "inReplyTo"));
    const char *t = timestamp_of(json_object_get(doc, "published"));
    out->published = t ? eu_arena_strdup(a, t) : NULL;
    t = timestamp_of(json_object_get(doc, "updated"));
    out->updated = t ? eu_arena_strdup(a, t) : NULL;
    const char *url = url_of(json_object_get(doc, "url"));
    out->url = url ? eu_arena_strdup(a, url) : NULL;
    out->sensitive = bool_of(json_object_get(doc, "sensitive"), false);
    out->visibility = visibility_of(doc, followers_url);

    bool too_long = false;
    const char *summary = str_capped(json_object_get(doc, "summary"), EU_AP_MAX_TEXT, &too_long);
    if (too_long)
        return eu_error_set(err, 422, "summary is too long");

    json_t *content;
    const char *lang;
    pick_content(doc, language, &content, &lang);
    out->language = lang ? eu_arena_strdup(a, lang) : NULL;
    if (type_in(type, converted_types)) {
        const char *summary_html = "";
        json_t *sum = json_object_get(doc, "summary");
        if (!json_is_string(sum) || json_string_length(sum) == 0)
            sum = map_first(json_object_get(doc, "summaryMap"));
        if (html_of(a, sum, EU_AP_MAX_TEXT, &summary_html) != 0)
            return eu_error_set(err, 422, "summary cannot be read");
        note_as_link(a, doc, out, summary_html);
        out->spoiler_text = "";
        if (!out->language) {
            /* Mastodon's language of a converted object: its nameMap's. */
            const char *key;
            json_t *val;
            json_object_foreach(json_object_get(doc, "nameMap"), key, val)
            {
                if (json_is_string(val) && is_language(key)) {
                    out->language = eu_arena_strdup(a, key);
                    break;
                }
            }
        }
    } else {
        if (html_of(a, content, EU_SANITIZE_MAX_INPUT, &out->content) != 0)
            return eu_error_set(err, 422, "content is too long or cannot be read");
        out->spoiler_text = eu_arena_strdup(a, summary ? summary : "");
    }
    note_tags(a, doc, out);
    note_attachments(a, doc, out);
    if (out->n_attachments == 0 &&
        (strcmp(type, "Image") == 0 || strcmp(type, "Video") == 0 || strcmp(type, "Audio") == 0))
        note_url_media(a, doc, out);
    if (strcmp(type, "Question") == 0 && note_poll(a, doc, out, err) != 0)
        return -1;
    return 0;
}
