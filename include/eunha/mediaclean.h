/*
 * Removing media nobody uses any more (src/media/cleanup.c): the rows in
 * the statement that makes them unused, the files afterwards in a job, and
 * unattached uploads a day old by a timed task.
 */
#ifndef EUNHA_MEDIACLEAN_H
#define EUNHA_MEDIACLEAN_H

struct eu_job;
struct eu_task_run;
#include "eunha/sql.h"

/* The statements of src/media/cleanup.c, for the registry. */
extern const struct eu_sql eu_media_cleanup_sql[];

/* Mastodon's Status::MEDIA_ATTACHMENTS_LIMIT, for local and remote statuses. */
#define EU_MEDIA_MAX_PER_STATUS 4

/*
 * SQL common table expressions md, mj for a tenant statement: delete the
 * tenant's media_attachments rows for which cond holds (an SQL condition on
 * the unaliased table; their bytes leave instance_counters.media_bytes by
 * the trigger of tenant migration 0025, in the same transaction), and
 * queue one media_files_delete job (queue
 * "default") with their files' keys. mj has a row when a job was queued:
 * the caller then wakes the queue (eu_queue_wake(t, EU_QUEUE_DEFAULT, 0)).
 * Put it after "WITH ... ," and before the final SELECT. statuses.delete
 * and ingest.status_delete write it out for the statuses of their CTE d,
 * so that each is one string; change them with it.
 */
#define EU_MEDIA_DELETE_CTES(cond)                                                                 \
    "md AS (DELETE FROM media_attachments WHERE tenant_id = $1 AND " cond                          \
    " RETURNING file_key, preview_key), " EU_MEDIA_FILES_JOB_CTE(                                  \
        "SELECT unnest(ARRAY[md.file_key, md.preview_key]) FROM md")

/*
 * SQL common table expression mj: one media_files_delete job for the store
 * keys keys_query selects (one text column; NULLs and URLs, which are
 * remote files, skipped), none when there are none.
 */
#define EU_MEDIA_FILES_JOB_CTE(keys_query)                                                         \
    "mj AS (INSERT INTO jobs (tenant_id, queue, kind, payload) SELECT $1, 'default',"              \
    " 'media_files_delete', jsonb_build_object('keys', jsonb_agg(k.key)) FROM (" keys_query        \
    ") k(key) WHERE k.key IS NOT NULL AND k.key NOT LIKE '%://%' HAVING count(*) > 0"              \
    " RETURNING id)"

/* The media_files_delete job (eu_job_kinds[]): deletes payload.keys from
 * the process's store; a key already gone counts as deleted. */
void eu_media_files_delete_run(struct eu_job *job);

/* The media_cleanup timed task (eu_task_kinds[]): removes the tenant's
 * unattached uploads older than a day, rows and files, and sleeps until the
 * next one turns a day old. */
void eu_media_cleanup_task_run(struct eu_task_run *run);

#endif
