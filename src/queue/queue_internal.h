/*
 * Shared inside src/queue/: the tables of job kinds and timed tasks, and the
 * handlers that live in this folder.
 */
#ifndef EUNHA_QUEUE_INTERNAL_H
#define EUNHA_QUEUE_INTERNAL_H

#include <stddef.h>

#include "eunha/queue.h"

/* Every job kind this version knows (kinds.c). A job of any other kind (one
 * written by a newer version) fails and ends dead. */
extern const struct eu_job_kind eu_job_kinds[];
extern const size_t eu_job_kinds_count;
/* Indexed by enum eu_task_id. */
extern const struct eu_task_kind eu_task_kinds[EU_TASK_MAX];

/* The kind called name, or NULL. */
const struct eu_job_kind *eu_job_kind_find(const char *name);

/* accounts.c */
void eu_queue_purge_account_run(struct eu_job *job);
void eu_queue_account_cleanup_run(struct eu_task_run *run);
/* ping.c */
void eu_queue_ping_run(struct eu_job *job);

#endif
