/*
 * The gate password checks pass before they are queued on the CPU pool
 * (pwgate.c). Every tenant's sign-ins share that pool, so a flood of
 * guesses, even spread over many tenants, must be refused before it is
 * hashed, not queued in front of everyone else's checks: a tenant may have
 * its share of checks in flight ([server] cpu_jobs_per_tenant), and one
 * client address as many in the whole process, across all tenants, as the
 * pool has threads. Past either the caller answers 429 at once. Counted in
 * memory on the loop thread: the bound is about this process's pool.
 */
#ifndef EUNHA_API_PWGATE_INTERNAL_H
#define EUNHA_API_PWGATE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Takes a slot for one password check of tenant_id from client (the
 * address as eu_ratelimit_client() names it; copied). Returns true, and the
 * caller must call eu_pwgate_leave() with the same arguments once the check
 * is done, or false (nothing taken) when the tenant already has
 * tenant_share checks in flight or the client client_share. Loop thread.
 */
bool eu_pwgate_enter(int64_t tenant_id, const char *client, int tenant_share, int client_share);

/* Gives back the slot eu_pwgate_enter() took. Loop thread. */
void eu_pwgate_leave(int64_t tenant_id, const char *client);

#endif
