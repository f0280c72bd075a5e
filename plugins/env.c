/* The task's MLSUP_* environment: the node, a heartbeat path per node and rank, and the
 * contract variables the options gave where the script did not set them. */
#include <stdio.h>
#include <unistd.h>

#include "asuser.h"
#include "format.h"
#include "plugin.h"

/* How long the task's start may wait for its heartbeat folder (a hung file system). */
#define HEARTBEAT_DIR_TIMEOUT_MS 3000

static void set(spank_t sp, const char *name, const char *value, int overwrite)
{
	spank_err_t rc = spank_setenv(sp, name, value, overwrite);

	if (rc != ESPANK_SUCCESS && rc != ESPANK_ENV_EXISTS)
		slurm_error("mlsup: env: cannot set %s: %s", name, spank_strerror(rc));
}

/* MLSUP_HEARTBEAT_FILE=P becomes P.d/<node>.<rank>; P is kept as MLSUP_ATTEMPT_HEARTBEAT_FILE,
 * which a nested step (srun inside the batch script) starts from again. */
static void per_task_heartbeat(spank_t sp, uint32_t rank)
{
	char base[MLSUP_PATH_MAX], dir[MLSUP_PATH_MAX], path[MLSUP_PATH_MAX], msg[256];

	if (spank_getenv(sp, "MLSUP_ATTEMPT_HEARTBEAT_FILE", base, sizeof(base)) != ESPANK_SUCCESS || !base[0]) {
		if (spank_getenv(sp, "MLSUP_HEARTBEAT_FILE", base, sizeof(base)) != ESPANK_SUCCESS || !base[0])
			return;
	}
	if (mlsup_heartbeat_dir(dir, sizeof(dir), base) < 0 ||
	    mlsup_heartbeat_path(path, sizeof(path), base, mlsup.node, rank) < 0) {
		slurm_error("mlsup: env: heartbeat path %s.d/... is too long; left as it is", base);
		return;
	}
	/* task_init runs as the user: the directory is the user's, made in a bounded child. */
	if (geteuid() == mlsup.user.uid &&
	    mlsup_mkdir_bounded(&mlsup.user, dir, HEARTBEAT_DIR_TIMEOUT_MS, msg, sizeof(msg)) < 0) {
		slurm_error("mlsup: env: mkdir %s: %s; heartbeat left at %s", dir, msg, base);
		return;
	}
	set(sp, "MLSUP_ATTEMPT_HEARTBEAT_FILE", base, 1);
	set(sp, "MLSUP_HEARTBEAT_FILE", path, 1);
}

void mlsup_task_env(spank_t sp, uint32_t rank)
{
	set(sp, "MLSUP_NODE", mlsup.node, 1);
	if (mlsup.opt_run[0])
		set(sp, "MLSUP_RUN", mlsup.opt_run, 0);
	if (mlsup.state_dir[0])
		set(sp, "MLSUP_STATE_DIR", mlsup.state_dir, 0);
	if (mlsup.cfg.heartbeat_per_task)
		per_task_heartbeat(sp, rank);
}
