/*
 * Filling a struct eu_error: the one place validators turn a failure into an
 * HTTP status and a message for both the log and the client.
 */
#include "eunha/error.h"

#include <stdarg.h>
#include <stdio.h>

int
eu_error_set(struct eu_error *err, int status, const char *fmt, ...)
{
    if (!err)
        return -1;
    err->status = status;
    va_list ap;
    va_start(ap, fmt);
    /* Truncation is fine: messages are for humans and capped on purpose so
     * that one struct can live on the stack. */
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return -1;
}
