/*
 * Declarations shared by the media API (media.c) and the statuses that
 * attach media (statuses.c), and nobody else.
 */
#ifndef EUNHA_API_MEDIA_INTERNAL_H
#define EUNHA_API_MEDIA_INTERNAL_H

#include <jansson.h>

struct eu_req;

/*
 * Reads "description" and "focus" ("x,y", each in [-1, 1]) from params, as
 * PUT /api/v1/media/:id takes them and PUT /api/v1/statuses/:id's
 * media_attributes[] do. *desc is params' string or NULL when absent (the
 * description is bounded by [media] description_limit); *fx and *fy are
 * decimal strings on the request's arena, NULL when there is no focus.
 * Returns 0, or -1 after answering 422.
 */
int eu_media_read_meta(struct eu_req *req, json_t *params, const char **desc, const char **fx,
                       const char **fy);

#endif
