/*
 * Fuzz target: the TOML reader (src/core/toml.c). The input is a whole
 * eunha.toml. Operators write it, but it is also what a hosting panel
 * generates from form fields, so it is parsed as if hostile. A document
 * that parses must be consistent: every entry is found again by its key.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/toml.h"

static void
walk(const struct eu_toml_value *v, int depth)
{
    if (depth > 1000)
        abort();
    switch (v->type) {
    case EU_TOML_STRING:
        (void)strlen(v->u.s);
        break;
    case EU_TOML_ARRAY:
        for (size_t i = 0; i < v->u.array.n; i++)
            walk(&v->u.array.items[i], depth + 1);
        break;
    default:
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct eu_toml_doc *doc = NULL;
    char err[256];
    if (eu_toml_parse((const char *)data, size, &doc, err, sizeof(err)) < 0) {
        if (doc || memchr(err, '\0', sizeof(err)) == NULL)
            abort();
        return 0;
    }
    for (size_t i = 0; i < doc->n; i++) {
        const struct eu_toml_entry *e = &doc->entries[i];
        walk(&e->value, 0);
        /* Duplicate keys are refused, so a key finds its own entry. */
        if (eu_toml_doc_get(doc, e->key) != &e->value)
            abort();
    }
    eu_toml_doc_free(doc);
    return 0;
}
