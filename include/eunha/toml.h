/*
 * A small TOML reader: what eunha.toml needs (tables, dotted keys, basic and
 * literal strings, integers, booleans, arrays, comments) and nothing else.
 * Debian ships no C TOML parser, so this one is ours. The document is read
 * into a flat list of fully dotted keys ("server.listen") in file order.
 */
#ifndef EUNHA_TOML_H
#define EUNHA_TOML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum eu_toml_type { EU_TOML_STRING, EU_TOML_INTEGER, EU_TOML_BOOLEAN, EU_TOML_ARRAY };

struct eu_toml_value {
    enum eu_toml_type type;
    int line; /* 1-based line the value starts on, for error messages */
    union {
        char *s; /* EU_TOML_STRING, NUL-terminated, escapes decoded */
        int64_t i;
        bool b;
        struct {
            struct eu_toml_value *items;
            size_t n;
        } array;
    } u;
};

struct eu_toml_entry {
    char *key; /* full dotted path, e.g. "database_pool.max_connections" */
    struct eu_toml_value value;
};

struct eu_toml_doc {
    struct eu_toml_entry *entries;
    size_t n;
};

/*
 * Parses text (len bytes, need not be NUL-terminated). On success returns 0
 * and *out is a document the caller frees with eu_toml_doc_free(). On error
 * returns -1, *out is NULL, and err holds "line N: what is wrong".
 * Duplicate keys and a table defined twice are errors.
 */
int eu_toml_parse(const char *text, size_t len, struct eu_toml_doc **out, char *err, size_t errlen);
void eu_toml_doc_free(struct eu_toml_doc *doc);
/* Returns the value at a dotted path, or NULL. Borrowed from doc. */
const struct eu_toml_value *eu_toml_doc_get(const struct eu_toml_doc *doc, const char *path);

#endif
