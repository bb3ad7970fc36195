/*
 * Handlers of the public listener (src/api/): Mastodon's REST API and the
 * discovery documents. Each finishes its request.
 */
#ifndef EUNHA_API_H
#define EUNHA_API_H

struct eu_task_run;

struct eu_req;

void eu_api_instance_v1(struct eu_req *req);
void eu_api_instance_v2(struct eu_req *req);
void eu_api_nodeinfo_links(struct eu_req *req);
void eu_api_nodeinfo(struct eu_req *req);
void eu_api_nodeinfo_2_1(struct eu_req *req);
void eu_api_host_meta(struct eu_req *req);

/*
 * The statuses' timed tasks (eu_task_kinds[] in src/app/kinds.c). The
 * scheduled-status publisher (src/api/scheduled.c) posts the statuses that are due
 * and sleeps until the next; the poll closer (src/api/polls.c) closes expired polls,
 * notifies their authors and voters, and sleeps until the next expiry.
 */
void eu_scheduled_task_run(struct eu_task_run *run);
void eu_polls_task_run(struct eu_task_run *run);

#endif
