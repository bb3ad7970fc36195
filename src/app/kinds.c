/*
 * What background work exists, as data: the job kinds by name and the timed
 * tasks by id. A feature adds its line here and its handler beside its own
 * code. The tables name handlers of every room (ap/, media/, api/, social/, queue/),
 * so they are wiring: they live here, above everything, and the queue finds
 * them through include/eunha/queue.h without knowing those rooms.
 */
#include "eunha/queue.h"

#include <string.h>

#include "eunha/apdeliver.h"
#include "eunha/api.h"
#include "eunha/apkeys.h"
#include "eunha/approcess.h"
#include "eunha/cards.h"
#include "eunha/mailer.h"
#include "eunha/mediaapi.h"
#include "eunha/mediaclean.h"
#include "eunha/mediaemoji.h"
#include "eunha/notify.h"
#include "eunha/polls.h"
#include "eunha/push.h"
#include "eunha/statuses.h"
#include "eunha/trends.h"

const struct eu_job_kind eu_job_kinds[] = {
    {"purge_account", EU_QUEUE_DEFAULT, eu_queue_purge_account_run},
    {"ping", EU_QUEUE_DEFAULT, eu_queue_ping_run},
    {"account_keys", EU_QUEUE_DEFAULT, eu_ap_account_keys_run},
    /* Inbox processing (src/ap/process.c). */
    {"ap_inbox", EU_QUEUE_DEFAULT, eu_ap_process_run},
    /* a sender's followers here checked against its list (src/ap/followers_sync.c) */
    {"ap_followers_sync", EU_QUEUE_DEFAULT, eu_ap_followers_sync_run},
    /* outgoing delivery (src/ap/deliver.c) */
    {"ap_deliver", EU_QUEUE_DELIVER, eu_ap_deliver_run},
    /* uploads: original, preview, blurhash (src/media/process_job.c) */
    {"media_process", EU_QUEUE_MEDIA, eu_media_process_run},
    /* files of removed media (src/media/cleanup.c) */
    {"media_files_delete", EU_QUEUE_DEFAULT, eu_media_files_delete_run},
    /* a local poll's new counts to its audience (src/ap/process_poll.c) */
    {"ap_poll_update", EU_QUEUE_DEFAULT, eu_ap_poll_update_run},
    {"ap_delete_actor", EU_QUEUE_DEFAULT, eu_ap_delete_actor_run},
    /* a remote custom emoji's image cached (src/media/emoji_fetch.c) */
    {"emoji_fetch", EU_QUEUE_MEDIA, eu_emoji_fetch_run},
    /* a status's link made a preview card (src/social/cards.c) */
    {"preview_card", EU_QUEUE_MEDIA, eu_card_run},
    /* a tenant's e-mail through [mail] (src/social/mailer.c) */
    {"mail", EU_QUEUE_DEFAULT, eu_mail_job_run},
    /* a notification told by mail (src/social/notification_mail.c) */
    {"notification_mail", EU_QUEUE_DEFAULT, eu_notification_mail_run},
    /* one notification to one Web Push subscription (src/social/push.c) */
    {"web_push", EU_QUEUE_DELIVER, eu_push_deliver_run},
    /* a CSV import's rows, a few a turn (src/api/takeout_import.c) */
    {"bulk_import", EU_QUEUE_DEFAULT, eu_takeout_import_run},
    /* a user's archive, and its removal 7 days later (src/api/takeout_archive.c) */
    {"takeout_archive", EU_QUEUE_DEFAULT, eu_takeout_archive_run},
    {"takeout_archive_remove", EU_QUEUE_DEFAULT, eu_takeout_archive_remove_run},
};

const size_t eu_job_kinds_count = sizeof(eu_job_kinds) / sizeof(eu_job_kinds[0]);

const struct eu_task_kind eu_task_kinds[EU_TASK_MAX] = {
    [EU_TASK_ACCOUNT_CLEANUP] = {"account_cleanup", eu_queue_account_cleanup_run},
    [EU_TASK_SCHEDULED] = {"scheduled_statuses", eu_scheduled_task_run},
    [EU_TASK_POLLS] = {"polls", eu_polls_task_run},
    [EU_TASK_MEDIA_CLEANUP] = {"media_cleanup", eu_media_cleanup_task_run},
    [EU_TASK_TRENDS] = {"trends", eu_trends_task_run},
};

const struct eu_job_kind *
eu_job_kind_find(const char *name)
{
    for (size_t i = 0; i < eu_job_kinds_count; i++)
        if (strcmp(eu_job_kinds[i].name, name) == 0)
            return &eu_job_kinds[i];
    return NULL;
}
