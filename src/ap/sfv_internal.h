/*
 * A small RFC 8941 Structured Field Values parser, for the dictionaries HTTP
 * signatures use (Signature-Input, Signature, Content-Digest). Debian ships
 * no C library for it. It parses Dictionaries (and the Items, Inner Lists
 * and Parameters in them) with fixed caps on counts, and serialises an Inner
 * List back (RFC 9421 signs the serialisation of its Signature-Input
 * member). Shared by src/ap/httpsig.c and its fuzz target.
 */
#ifndef EUNHA_AP_SFV_INTERNAL_H
#define EUNHA_AP_SFV_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Caps: far above what a signature needs, small enough to live in one
 * fixed-size struct. More is a parse error. */
#define EU_SFV_MAX_INPUT 8192
#define EU_SFV_MAX_MEMBERS 16
#define EU_SFV_MAX_ITEMS 64
#define EU_SFV_MAX_PARAMS 64

enum eu_sfv_type {
    EU_SFV_INTEGER,
    EU_SFV_DECIMAL, /* integer holds the value times 1000 */
    EU_SFV_STRING,
    EU_SFV_TOKEN,
    EU_SFV_BYTES, /* str is the base64 text between the colons */
    EU_SFV_BOOLEAN,
};

struct eu_sfv_bare {
    enum eu_sfv_type type;
    int64_t integer;
    bool boolean;
    const char *str; /* STRING (unescaped), TOKEN, BYTES; NUL-terminated, in the dict */
    size_t len;
};

struct eu_sfv_param {
    const char *key;
    struct eu_sfv_bare value;
};

struct eu_sfv_item {
    struct eu_sfv_bare bare;
    int first_param, nparams; /* in dict->params */
};

struct eu_sfv_member {
    const char *key;
    bool inner;               /* an Inner List, else a single Item */
    int first_item, nitems;   /* in dict->items; 1 for an Item */
    int first_param, nparams; /* the Inner List's own parameters */
};

struct eu_sfv_dict {
    int nmembers, nitems, nparams;
    struct eu_sfv_member members[EU_SFV_MAX_MEMBERS];
    struct eu_sfv_item items[EU_SFV_MAX_ITEMS];
    struct eu_sfv_param params[EU_SFV_MAX_PARAMS];
    char *text; /* keys and strings, malloc'd */
};

/*
 * Parses s as a Dictionary into d. Unlike RFC 8941, which keeps the last of
 * a repeated key, a repeated key (of the dictionary or of one parameter
 * list) is an error: a signature header that says two things is refused.
 * Returns 0, or -1 (d then holds nothing to free). Free a parsed d with
 * eu_sfv_dict_release().
 */
int eu_sfv_dict_parse(struct eu_sfv_dict *d, const char *s);
void eu_sfv_dict_release(struct eu_sfv_dict *d);

/* The member called key, or NULL. */
const struct eu_sfv_member *eu_sfv_dict_get(const struct eu_sfv_dict *d, const char *key);
/* The parameter called key among n starting at first, or NULL. */
const struct eu_sfv_bare *eu_sfv_param_get(const struct eu_sfv_dict *d, int first, int n,
                                           const char *key);

/*
 * Serialises member m (its Inner List or Item with parameters) as RFC 8941
 * section 4.1 does, into a malloc'd string the caller frees; NULL when a
 * string holds a byte that cannot be serialised (cannot happen for parsed
 * input).
 */
char *eu_sfv_member_serialize(const struct eu_sfv_dict *d, const struct eu_sfv_member *m);

#endif
