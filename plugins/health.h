#ifndef MLSUP_PLUGIN_HEALTH_H
#define MLSUP_PLUGIN_HEALTH_H
/* The preflight health check: an admin's command run as the job's user with a timeout. */
#include <stdbool.h>

#include "asuser.h"
#include "format.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MLSUP_HEALTH_OUTPUT_MAX 4096 /* bytes of the check's output read; the rest is discarded */

struct mlsup_health_result {
	bool ran;        /* false: the command could not be started (see detail); no fact about the node */
	bool ok;         /* exit status 0 within the timeout */
	int exit_code;   /* its exit code, 128+signal, or 124 when it timed out */
	char detail[MLSUP_HEALTH_OUTPUT_MAX + 1]; /* first non-empty line of its output (whole, as read), or what went wrong */
};

/* Runs path (no arguments) as u with the environment envp (NULL-terminated), stdin /dev/null,
 * stdout and stderr captured; kills its process group after timeout_s seconds. */
void mlsup_health_run(const struct mlsup_user *u, const char *path, char *const envp[], int timeout_s,
		      struct mlsup_health_result *out);

#ifdef __cplusplus
}
#endif
#endif
