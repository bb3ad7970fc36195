/*
 * Which HTTP signature form a remote host takes, remembered for the whole
 * process: it is a fact about the host's software, not about a tenant.
 * Deliveries (deliver.c) and signed fetches (resolve.c) both ask here.
 *
 * A host not yet known gets RFC 9421 first; a 401 makes the caller sign
 * draft-cavage once, and whichever form then works is remembered. At most
 * EU_AP_SIGFORM_HOSTS hosts are kept (the least recently learned goes
 * first), so a forgotten host costs one extra request. Loop thread only.
 */
#ifndef EUNHA_AP_SIGFORM_INTERNAL_H
#define EUNHA_AP_SIGFORM_INTERNAL_H

#include <stdbool.h>

#define EU_AP_SIGFORM_HOSTS 4096

/* true: sign with RFC 9421 first (the host took it, or is not known). */
bool eu_ap_sigform_rfc9421_first(const char *host);
/* The form that host just accepted. */
void eu_ap_sigform_learn(const char *host, bool rfc9421);
/* Neither form worked: forget the host, so it starts over. */
void eu_ap_sigform_forget(const char *host);

#endif
