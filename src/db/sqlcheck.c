/*
 * The tenant-predicate check. Many tenants share a placement's tables, so a
 * statement that reads or writes a tenant table without saying whose rows it
 * means would reach every tenant's rows. A tenant pool runs this on each
 * distinct statement before it first sends it and refuses one that fails.
 *
 * It is a lexical check, not a parser: every reference to a tenant table
 * (after FROM, JOIN, UPDATE, INTO, USING, or in a FROM list after a comma)
 * must be matched by a mention of its alias's tenant_id (`s.tenant_id`, or a
 * bare `tenant_id` for an unaliased table), one per reference, and an INSERT
 * must name tenant_id among its columns. It cannot prove the predicate is
 * right (`a.tenant_id = $1`), only that none was forgotten; the decoy-tenant
 * isolation test covers what the predicates say.
 *
 * The rules statements share are SQL functions (migrations 0040, 0042) that read
 * tenant tables for the tenant given as their first argument, so a call of
 * one of the eunha_ functions must pass $1 there, as a table's alias must
 * be matched by its tenant_id. The few that read no tenant's rows are
 * listed below.
 */

#include "eunha/db.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/mem.h"

/* Every table whose rows belong to one tenant, each listed before the
 * tables it references, so deleting a tenant table by table in this order
 * never waits on a cascade. test_catalog checks this list against the
 * placement schema, so a new table cannot be forgotten here. */
const char *const eu_db_tenant_tables[] = {
    "notification_requests",
    "notification_permissions",
    "notification_policies",
    "notifications",
    "reports",
    "appeals",          /* before account_warnings, which it references */
    "account_warnings", /* before accounts, which it references */
    "admin_action_logs",
    "user_roles",
    "announcement_reactions",  /* before announcements and accounts */
    "announcement_dismissals", /* likewise */
    "announcements",
    "account_conversations",
    "mentions",
    "quotes",               /* before statuses, which it references */
    "status_trend_reviews", /* before statuses, which it references */
    "trend_scores",
    "suggestion_dismissals",  /* before accounts, which it references */
    "suggestion_features",    /* likewise */
    "follow_recommendations", /* likewise */
    "preview_cards_statuses", /* before statuses and preview_cards */
    "preview_cards",
    "preview_card_providers",
    "statuses_tags",
    "status_edits",
    "status_pins",
    "favourites",
    "bookmarks",
    "filter_statuses",
    "filter_keywords",
    "filters",
    "poll_votes",
    "polls",
    "list_accounts",
    "lists",
    "markers",
    "conversation_mutes",
    "account_notes",
    "mutes",
    "account_domain_blocks", /* before accounts, which it references */
    "blocks",
    "follow_requests",
    "follows",
    "tag_follows",
    "featured_tags", /* before tags and accounts, which it references */
    "account_pins",  /* before accounts, which it references */
    "tags",
    "scheduled_statuses",
    "bulk_import_rows", /* before bulk_imports, which it references */
    "bulk_imports",
    "backups",
    "reserved_usernames",
    "media_attachments", /* before accounts, which it references */
    "statuses",
    "oauth_access_grants",
    "web_push_subscriptions", /* before oauth_access_tokens, users and accounts */
    "oauth_access_tokens",
    "web_sessions",
    "oauth_applications",
    "user_sign_in_days", /* before users, which it references */
    "users",
    "accounts",
    "job_pings",
    "jobs",
    "delivery_refusals",
    "domain_blocks",
    "domain_allows",
    "email_domain_blocks",
    "canonical_email_blocks",
    "ip_blocks",
    "settings",
    "web_push_keys",
    "instance_rules",
    "custom_emojis",
    "terms_of_service",
    /* Last: the triggers of statuses and accounts write it as their rows
     * go, so it is emptied after them. */
    "instance_counters",
    "instance_status_counts",
    NULL,
};

/* The eunha_ functions statements may call without the tenant first:
 * none of them reads a tenant's rows. */
static const char *const tenant_free_functions[] = {
    /* Formatting, and pieces of entities built from a row the statement
     * has read (migrations 0040 and 0041). */
    "eunha_ts",
    "eunha_media_json",
    "eunha_card_json",
    "eunha_mention_json",
    "eunha_tag_json",
    "eunha_group_key",
    "eunha_ap_ts",
    "eunha_actor_uri",
    "eunha_status_uri",
    "eunha_account",
    "eunha_like_text",
    "eunha_in_domain",
    "eunha_domain_block",
    "eunha_announcement_shown",
    /* No tables, or the control schema's own. */
    "eunha_refusal_hold",
    "eunha_next_id",
    "eunha_domain_suffixes",
    "eunha_canonical_email_hash",
    "eunha_analyze_new_tables",
    /* A day and its snowflake ids (tenant migration 0056). */
    "eunha_day_first_id",
    "eunha_id_day",
    NULL,
};

#define MAX_TOKENS 4096
#define MAX_REFS 128

struct tok {
    char text[64];
    bool word; /* identifier, keyword or qualified name (a.b); else punctuation */
};

static bool
is_tenant_table(const char *name)
{
    for (int i = 0; eu_db_tenant_tables[i]; i++)
        if (strcmp(eu_db_tenant_tables[i], name) == 0)
            return true;
    return false;
}

/* Words that can follow a table name where an alias would otherwise be. */
static bool
is_keyword(const char *w)
{
    static const char *const kw[] = {
        "where",   "join",    "left",      "right",  "inner",       "outer",  "cross",
        "full",    "natural", "on",        "using",  "set",         "group",  "order",
        "limit",   "offset",  "returning", "values", "union",       "except", "intersect",
        "lateral", "for",     "with",      "and",    "or",          "having", "window",
        "default", "select",  "as",        "not",    "tablesample", "only",   NULL,
    };
    for (int i = 0; kw[i]; i++)
        if (strcmp(kw[i], w) == 0)
            return true;
    return false;
}

/* Splits sql into lower-cased tokens, dropping string literals, quoted
 * identifiers' quotes, comments and whitespace. Returns the count, or -1
 * when the statement is too long to check. */
static int
tokenize(const char *sql, struct tok *toks, int max)
{
    int n = 0;
    const char *p = sql;
    while (*p) {
        if (isspace((unsigned char)*p)) {
            p++;
        } else if (p[0] == '-' && p[1] == '-') {
            while (*p && *p != '\n')
                p++;
        } else if (*p == '\'') {
            for (p++; *p; p++) {
                if (*p == '\'' && p[1] == '\'')
                    p++;
                else if (*p == '\'')
                    break;
            }
            if (*p)
                p++;
        } else if (isalnum((unsigned char)*p) || *p == '_' || *p == '"') {
            if (n == max)
                return -1;
            size_t len = 0;
            while (isalnum((unsigned char)*p) || *p == '_' || *p == '.' || *p == '"') {
                if (*p != '"' && len + 1 < sizeof(toks[n].text))
                    toks[n].text[len++] = (char)tolower((unsigned char)*p);
                p++;
            }
            toks[n].text[len] = '\0';
            toks[n].word = true;
            n++;
        } else {
            if (n == max)
                return -1;
            size_t len = 0;
            toks[n].text[len++] = *p++;
            if (p[-1] == '$') /* a parameter: $12 is one token */
                while (isdigit((unsigned char)*p)) {
                    if (len + 1 < sizeof(toks[n].text))
                        toks[n].text[len++] = *p;
                    p++;
                }
            toks[n].text[len] = '\0';
            toks[n].word = false;
            n++;
        }
    }
    return n;
}

/* A call of a function at token i that reads a tenant's rows passes $1
 * first? True for anything that is not such a call. */
static bool
call_names_tenant(const struct tok *t, int n, int i)
{
    if (!t[i].word || strncmp(t[i].text, "eunha_", 6) != 0 || i + 1 >= n ||
        strcmp(t[i + 1].text, "(") != 0)
        return true;
    for (int k = 0; tenant_free_functions[k]; k++)
        if (strcmp(tenant_free_functions[k], t[i].text) == 0)
            return true;
    return i + 2 < n && strcmp(t[i + 2].text, "$1") == 0;
}

struct ref {
    char alias[64];
    char table[64];
};

/* Mentions of alias.tenant_id (or bare tenant_id when alias is the table's
 * own name). */
static int
count_mentions(const struct tok *t, int n, const struct ref *r)
{
    char want[80];
    snprintf(want, sizeof(want), "%.63s.tenant_id", r->alias);
    bool bare_ok = strcmp(r->alias, r->table) == 0;
    int c = 0;
    for (int i = 0; i < n; i++)
        if (t[i].word &&
            (strcmp(t[i].text, want) == 0 || (bare_ok && strcmp(t[i].text, "tenant_id") == 0)))
            c++;
    return c;
}

/* An INSERT's column list names tenant_id. i: index of the table token. */
static bool
insert_names_tenant(const struct tok *t, int n, int i)
{
    if (i + 2 < n && strcmp(t[i + 1].text, "as") == 0)
        i += 2; /* INSERT INTO t AS x (...) */
    if (i + 1 >= n || strcmp(t[i + 1].text, "(") != 0)
        return false;
    for (int j = i + 2; j < n && strcmp(t[j].text, ")") != 0; j++)
        if (strcmp(t[j].text, "tenant_id") == 0)
            return true;
    return false;
}

bool
eu_db_sql_check_tenant(const char *sql, char *why, size_t whylen)
{
    struct tok *t = eu_xcalloc(MAX_TOKENS, sizeof(*t));
    struct ref refs[MAX_REFS];
    int nrefs = 0;
    bool ok = true;
    int n = tokenize(sql, t, MAX_TOKENS);
    if (n < 0) {
        snprintf(why, whylen, "statement too long to check");
        ok = false;
        goto out;
    }
    for (int i = 0; i + 1 < n && ok; i++) {
        const char *w = t[i].text;
        if (!call_names_tenant(t, n, i)) {
            snprintf(why, whylen, "%s() without $1, the tenant, first", w);
            ok = false;
            break;
        }
        bool intro = t[i].word && (strcmp(w, "from") == 0 || strcmp(w, "join") == 0 ||
                                   strcmp(w, "update") == 0 || strcmp(w, "into") == 0 ||
                                   strcmp(w, "using") == 0);
        /* "FROM a x, b y": a comma right after a FROM item starts another. */
        bool list = strcmp(w, ",") == 0 && i >= 2 && nrefs > 0 &&
                    (strcmp(t[i - 1].text, refs[nrefs - 1].alias) == 0);
        if (!intro && !list)
            continue;
        int j = i + 1;
        if (j < n && strcmp(t[j].text, "only") == 0)
            j++;
        if (j >= n || !t[j].word || !is_tenant_table(t[j].text))
            continue;
        if (j + 1 < n && strcmp(t[j + 1].text, "(") == 0 && strcmp(w, "into") != 0)
            continue; /* a function call, not a table */
        if (strcmp(w, "into") == 0) {
            if (!insert_names_tenant(t, n, j)) {
                snprintf(why, whylen, "INSERT INTO %s without a tenant_id column", t[j].text);
                ok = false;
            }
            continue;
        }
        if (nrefs == MAX_REFS) {
            snprintf(why, whylen, "statement too long to check");
            ok = false;
            break;
        }
        struct ref *r = &refs[nrefs++];
        snprintf(r->table, sizeof(r->table), "%s", t[j].text);
        int k = j + 1;
        if (k < n && strcmp(t[k].text, "as") == 0)
            k++;
        bool aliased = k < n && t[k].word && !is_keyword(t[k].text) && !strchr(t[k].text, '.');
        snprintf(r->alias, sizeof(r->alias), "%s", aliased ? t[k].text : t[j].text);
    }
    /* Each alias needs as many tenant_id mentions as it has references. */
    for (int i = 0; i < nrefs && ok; i++) {
        int refs_of_alias = 0;
        for (int j = 0; j < nrefs; j++)
            if (strcmp(refs[j].alias, refs[i].alias) == 0)
                refs_of_alias++;
        if (count_mentions(t, n, &refs[i]) < refs_of_alias) {
            snprintf(why, whylen, "%s%s%s has no tenant predicate", refs[i].table,
                     strcmp(refs[i].alias, refs[i].table) ? " " : "",
                     strcmp(refs[i].alias, refs[i].table) ? refs[i].alias : "");
            ok = false;
        }
    }
out:
    free(t);
    return ok;
}
