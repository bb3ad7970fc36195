/*
 * The statement registry's table of tables (see sql.h): every resource
 * group's statements, so a test and `eunha statements` reach them all.
 */
#include "eunha/sql.h"

const struct eu_sql *const eu_sql_tables[] = {
    eu_lists_sql,
    /* accounts group */

    /* statuses group */
    eu_statuses_sql,
    eu_status_render_sql,
    eu_timelines_sql,
    eu_feeds_sql,
    eu_conversations_sql,

    /* social group */

    /* oauth and timed group */

    /* queue group */

    NULL,
};
