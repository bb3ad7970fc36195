/*
 * The commands main.c runs: `eunha serve` and `eunha migrate`. Both are
 * the wiring at the top (src/app/app.c): they assemble struct eu_app from
 * every room, so only main.c includes this header.
 */
#ifndef EUNHA_SERVE_H
#define EUNHA_SERVE_H

struct eu_app;

/*
 * Runs `eunha serve`: start-up (control database, template, registry),
 * listeners, the loop until SIGTERM/SIGINT. ready_file may be NULL. Returns
 * the process exit code.
 */
int eu_app_serve(const char *config_path, const char *ready_file);
/* `eunha migrate`: migrates control, template and every placement's
 * database with blocking connections (not a server). Returns the exit code. */
int eu_app_migrate(const char *config_path);
/* Reloads the tenant registry from the control table (asynchronously). */
void eu_app_reload_tenants(struct eu_app *app);

#endif
