/*
 * The "ping" job: records that it ran, in which process, in job_pings. An
 * operator enqueues one (POST /admin/v1/tenants/:domain/jobs) to see that a
 * tenant's workers run; a payload with "fail": "message" makes it fail, to
 * try the retry path, and one with "hold_ms": N makes its first attempt
 * take N ms (off the turn, on a timer), to see a long job keep its lock
 * (with both, the first attempt fails after its hold). Tests use it to
 * count how often each job ran.
 */
#include "eunha/queue.h"

#include <event2/event.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "eunha/app.h"
#include "eunha/db.h"
#include "eunha/mem.h"
#include "eunha/queue.h"
#include "eunha/sql.h"

static void
on_recorded(PGresult *res, enum eu_db_status st, void *arg)
{
    struct eu_job *job = arg;
    if (st != EU_DB_OK) {
        char msg[300];
        snprintf(msg, sizeof(msg), "cannot record the ping: %s",
                 res ? PQresultErrorMessage(res) : "database unavailable");
        eu_job_done(job, msg);
        return;
    }
    eu_job_done(job, NULL);
}

/*
 * The tests read who ran each job from job_pings. The ping's row and the
 * end of its job commit together: the job's row goes in the same
 * statement, and no row is written when it is gone already. Recorded
 * apart, a process killed between the two (its ping written, its job not
 * yet deleted) left the job to run again elsewhere once its lock passed,
 * and a process that stalled past its lock while another ran the job
 * again recorded a second ping; either way two rows for one job. Any job
 * whose whole effect is rows of its placement can end like this; one with
 * an effect elsewhere (a delivery, a mail) is run at least once.
 * eu_job_done() after it deletes nothing more.
 */
const struct eu_sql eu_queue_ping_sql[] = {
    [0] = {"queue_ping.record",
           "WITH done AS (DELETE FROM jobs WHERE tenant_id = $1 AND id = $2::bigint RETURNING id)"
           " INSERT INTO job_pings (tenant_id, job_id, process, payload)"
           " SELECT $1, done.id, $3, $4::jsonb FROM done"},
    {0},
};

static void record(struct eu_job *job);

struct hold {
    struct eu_job *job;
    struct event *timer;
};

static void
on_held(evutil_socket_t fd, short what, void *arg)
{
    struct hold *h = arg;
    (void)fd;
    (void)what;
    struct eu_job *job = h->job;
    event_free(h->timer);
    free(h);
    const char *fail = json_string_value(json_object_get(eu_job_payload(job), "fail"));
    if (fail)
        eu_job_done(job, fail);
    else
        record(job);
}

void
eu_queue_ping_run(struct eu_job *job)
{
    json_t *payload = eu_job_payload(job);
    const char *fail = json_string_value(json_object_get(payload, "fail"));
    json_int_t hold_ms = json_integer_value(json_object_get(payload, "hold_ms"));
    /* Held first, then failed: a failure that ends a long attempt. */
    if (hold_ms > 0 && eu_job_attempt(job) == 1 && eu_job_detach(job)) {
        struct hold *h = eu_xcalloc(1, sizeof(*h));
        h->job = job;
        h->timer = evtimer_new(eu_job_app(job)->base, on_held, h);
        struct timeval tv = {(time_t)(hold_ms / 1000), (suseconds_t)(hold_ms % 1000) * 1000};
        evtimer_add(h->timer, &tv);
        return;
    }
    if (fail) {
        eu_job_done(job, fail);
        return;
    }
    record(job);
}

static void
record(struct eu_job *job)
{
    json_t *payload = eu_job_payload(job);
    char host[128] = "";
    gethostname(host, sizeof(host) - 1);
    char process[200];
    snprintf(process, sizeof(process), "%s:%d", host, (int)getpid());
    char *text = json_dumps(payload, JSON_COMPACT);
    const char *params[] = {eu_job_id(job), process, text};
    eu_job_stmt(job, &eu_queue_ping_sql[0], 3, params, on_recorded, job);
    free(text);
}
