/*
 * Announcements inside src/api/: the one-announcement render the streaming
 * API runs for each listener of an "announcement" event.
 */
#ifndef EUNHA_API_ANNOUNCEMENTS_INTERNAL_H
#define EUNHA_API_ANNOUNCEMENTS_INTERNAL_H

struct eu_req;

/*
 * Replies 200 with the Announcement entity of the "id" path parameter as
 * GET /api/v1/announcements shows it to req's viewer (read, reactions'
 * me), or 404 when it is not shown (unpublished, ended, gone).
 */
void eu_announcements_show_one(struct eu_req *req);

#endif
