/*
 * Handlers of the public listener (src/api/): Mastodon's REST API and the
 * discovery documents. Each finishes its request.
 */
#ifndef EUNHA_API_H
#define EUNHA_API_H

struct eu_req;

void eu_api_instance_v1(struct eu_req *req);
void eu_api_instance_v2(struct eu_req *req);
void eu_api_nodeinfo_links(struct eu_req *req);
void eu_api_nodeinfo(struct eu_req *req);
void eu_api_nodeinfo_2_1(struct eu_req *req);
void eu_api_host_meta(struct eu_req *req);

#endif
