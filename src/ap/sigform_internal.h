/*
 * Which HTTP signature form a remote host takes, remembered for the whole
 * process: it is a fact about the host's software, not about a tenant.
 * Deliveries (deliver.c) and signed fetches (resolve.c) both ask here.
 *
 * Every host gets draft-cavage first, as Mastodon signs: every server
 * verifies it, and many (snac2, the Misskey family) answer 202 before they
 * verify, so a form they cannot read is dropped without the 401 that would
 * have told us. RFC 9421 is used for a host only once it is known to take
 * it: it signed a request to us that way and the signature verified
 * (authfetch.c), or it refused a draft-cavage POST with 401 and took the
 * RFC 9421 one. A 401 or 400 to an RFC 9421 POST puts the host back on
 * draft-cavage. A GET's answer teaches nothing: a server may read
 * signatures on fetches differently from its inbox, or not at all.
 *
 * At most EU_AP_SIGFORM_HOSTS hosts are kept (the least recently learned
 * goes first); a forgotten host is signed draft-cavage, which every peer
 * reads, until it signs to us again. Loop thread only.
 */
#ifndef EUNHA_AP_SIGFORM_INTERNAL_H
#define EUNHA_AP_SIGFORM_INTERNAL_H

#include <stdbool.h>

#define EU_AP_SIGFORM_HOSTS 4096

/* true: sign to host with RFC 9421 first (it is known to take it). */
bool eu_ap_sigform_rfc9421_first(const char *host);
/* What host was just seen to take: RFC 9421 (rfc9421) or only
 * draft-cavage (!rfc9421, which is also what an unknown host gets). */
void eu_ap_sigform_learn(const char *host, bool rfc9421);

#endif
