/*
 * The command line: parse it and hand over to the process or a tool.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eunha/config.h"
#include "eunha/serve.h"
#include "eunha/sql.h"

static int
usage(void)
{
    fprintf(stderr, "usage: eunha serve -c FILE [--ready-file PATH]\n"
                    "       eunha check-config -c FILE\n"
                    "       eunha migrate -c FILE\n"
                    "       eunha statements [NAME]\n"
                    "       eunha version\n");
    return 2;
}

static int
check_config(const char *path)
{
    struct eu_config cfg;
    char err[512];
    eu_config_init_defaults(&cfg);
    if (eu_config_load(&cfg, path, err, sizeof(err)) < 0) {
        fprintf(stderr, "eunha: %s\n", err);
        eu_config_release(&cfg);
        return 2;
    }
    eu_config_print(&cfg, stdout);
    eu_config_release(&cfg);
    return 0;
}

/* Lists the registered statements, or prints one as psql takes it (with
 * $1 the tenant id) to EXPLAIN; a paged one in both directions. */
static int
statements(const char *name)
{
    if (!name) {
        for (size_t t = 0; eu_sql_tables[t]; t++)
            for (const struct eu_sql *s = eu_sql_tables[t]; s->name; s++)
                printf("%s\n", s->name);
        return 0;
    }
    const struct eu_sql *s = eu_sql_find(name);
    if (!s) {
        fprintf(stderr, "eunha: no statement %s\n", name);
        return 1;
    }
    printf("%s;\n", eu_sql_text(s, 0));
    if (s->page_col)
        printf("-- with max_id, since_id and min_id (oldest first):\n%s;\n",
               eu_sql_text(s, EU_SQL_PAGE_MAX | EU_SQL_PAGE_SINCE | EU_SQL_PAGE_MIN));
    eu_sql_free();
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc < 2)
        return usage();
    const char *cmd = argv[1];
    if (strcmp(cmd, "statements") == 0 && argc <= 3)
        return statements(argc == 3 ? argv[2] : NULL);
    const char *config = NULL, *ready = NULL;
    for (int i = 2; i < argc; i++) {
        if ((strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--config") == 0) && i + 1 < argc)
            config = argv[++i];
        else if (strcmp(argv[i], "--ready-file") == 0 && i + 1 < argc)
            ready = argv[++i];
        else
            return usage();
    }
    if (strcmp(cmd, "version") == 0) {
        printf("eunha %s\n", EUNHA_VERSION);
        return 0;
    }
    if (!config)
        return usage();
    if (strcmp(cmd, "serve") == 0)
        return eu_app_serve(config, ready);
    if (strcmp(cmd, "check-config") == 0)
        return check_config(config);
    if (strcmp(cmd, "migrate") == 0)
        return eu_app_migrate(config);
    return usage();
}
