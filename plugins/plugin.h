#ifndef MLSUP_PLUGIN_PLUGIN_H
#define MLSUP_PLUGIN_PLUGIN_H
/* State shared by the callbacks of one process (srun, sbatch, slurmd or one slurmstepd). Tasks
 * are forked from slurmstepd after user_init, so they inherit what user_init learnt. */
#include <slurm/spank.h>
#include <stdbool.h>
#include <stdint.h>

#include "asuser.h"
#include "config.h"
#include "format.h"

struct mlsup_state {
	struct mlsup_config cfg;
	bool enabled;                            /* false after a bad plugstack argument */
	char opt_run[256];                       /* --mlsup-run */
	char opt_state_dir[MLSUP_PATH_MAX];      /* --mlsup-state-dir */

	/* Facts of the step, gathered in user_init (remote context only). */
	bool supervised;
	uint32_t job_id, step_id;
	char node[256];
	char state_dir[MLSUP_PATH_MAX];          /* "" = no records */
	struct mlsup_user user;
	bool user_refused;                       /* root (without allow_root) or unknown: no check, no records */
	bool health_failed;
	char health_detail[MLSUP_DETAIL_MAX + 1];
};

extern struct mlsup_state mlsup;

/* Every context: plugstack arguments and the options. Never fails. */
int mlsup_init(spank_t sp, int ac, char **av);

/* Remote context (slurmstepd). Each returns 0: nothing here fails the user's job, except the
 * deliberate exit of a task on a node that failed its health check (task_init). */
int mlsup_remote_user_init(spank_t sp);
int mlsup_remote_task_init(spank_t sp);
int mlsup_remote_task_exit(spank_t sp);

/* Sets the task's MLSUP_* environment (in the task, as the user, before exec). */
void mlsup_task_env(spank_t sp, uint32_t rank);

#endif
