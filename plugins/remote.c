/* The remote context (slurmstepd): learn the step's facts, record the node's, run the health check,
 * write records. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"
#include "health.h"
#include "node_facts.h"
#include "plugin.h"
#include "records.h"

/* Reads a variable of the job's environment; false when unset or empty. */
static bool job_env(spank_t sp, const char *name, char *buf, int len)
{
	return spank_getenv(sp, name, buf, len) == ESPANK_SUCCESS && buf[0];
}

/* Slurm's name of this node (never gethostname(): several nodes may share one host).
 * slurmstepd puts it into its own environment; the job's environment may hold a stale one (a
 * step started from a batch script inherits the batch node's SLURMD_NODENAME). */
static void find_node(spank_t sp)
{
	const char *own = getenv("SLURMD_NODENAME");

	if (own && own[0]) {
		snprintf(mlsup.node, sizeof(mlsup.node), "%s", own);
		return;
	}
	if (job_env(sp, "SLURMD_NODENAME", mlsup.node, sizeof(mlsup.node)))
		return;
	snprintf(mlsup.node, sizeof(mlsup.node), "unknown");
	slurm_error("mlsup: node: SLURMD_NODENAME not found; records name node \"unknown\"");
}

/* The job's uid, gid and groups; refuses (with a log line) to act for root unless allow_root=yes,
 * or for a job whose ids Slurm does not tell. */
static void find_user(spank_t sp)
{
	gid_t *gids = NULL;
	int n = 0, i;
	bool known = spank_get_item(sp, S_JOB_UID, &mlsup.user.uid) == ESPANK_SUCCESS &&
		     spank_get_item(sp, S_JOB_GID, &mlsup.user.gid) == ESPANK_SUCCESS;
	const char *why = mlsup_user_refusal(&mlsup.cfg, known, (unsigned)mlsup.user.uid);

	mlsup.user_refused = why != NULL;
	if (why)
		slurm_info("mlsup: user: job %u on %s: %s; no health check, no records", mlsup.job_id, mlsup.node, why);
	mlsup.user.ngids = 0;
	if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &gids, &n) != ESPANK_SUCCESS || !gids)
		return;
	for (i = 0; i < n && i < MLSUP_MAX_GIDS; i++)
		mlsup.user.gids[mlsup.user.ngids++] = gids[i];
}

/* Decides whether mlsup supervises this job, and where its records go. */
static void gather_facts(spank_t sp)
{
	char env_state[MLSUP_PATH_MAX];
	bool has_env = job_env(sp, "MLSUP_STATE_DIR", env_state, sizeof(env_state));

	mlsup.supervised = has_env || mlsup.opt_run[0] || mlsup.opt_state_dir[0];
	if (!mlsup.supervised)
		return;
	spank_get_item(sp, S_JOB_ID, &mlsup.job_id);
	spank_get_item(sp, S_JOB_STEPID, &mlsup.step_id);
	find_node(sp);
	find_user(sp);
	mlsup.state_dir[0] = '\0';
	if (mlsup.opt_state_dir[0])
		snprintf(mlsup.state_dir, sizeof(mlsup.state_dir), "%s", mlsup.opt_state_dir);
	else if (has_env && env_state[0] == '/')
		snprintf(mlsup.state_dir, sizeof(mlsup.state_dir), "%s", env_state);
	else if (has_env)
		slurm_error("mlsup: record: MLSUP_STATE_DIR=%s is not an absolute path; no records", env_state);
}

/* Whether records of this step are written: records=yes, a state directory, a user not refused. */
static bool records_on(void)
{
	return mlsup.cfg.records && mlsup.state_dir[0] && !mlsup.user_refused;
}

/* Appends a line formatted into a buffer of size bytes (len -1: it did not fit). */
static void append_line(const char *line, int len, size_t size)
{
	char msg[512];

	if (!records_on())
		return;
	if (len < 0) {
		slurm_error("mlsup: record: job %u on %s: a record does not fit in %zu bytes (dropped)", mlsup.job_id,
			    mlsup.node, size);
		return;
	}
	if (mlsup_record_append(&mlsup.user, mlsup.state_dir, mlsup.job_id, mlsup.node, line, (size_t)len, msg,
				sizeof(msg)) < 0)
		slurm_info("mlsup: record: job %u on %s: %s (ignored)", mlsup.job_id, mlsup.node, msg);
}

/* Writes the "node" record: this node's addresses and GPUs (read as root; written as the user). */
static void record_node_facts(void)
{
	struct mlsup_node_facts f;
	char line[MLSUP_NODE_LINE_MAX];
	char dir[MLSUP_PATH_MAX], msg[600];

	if (mlsup_config_gpu_dir(&mlsup.cfg, mlsup.node, dir, sizeof(dir)) < 0) {
		slurm_error("mlsup: node: GPU info path for %s is too long; no GPUs recorded", mlsup.node);
		dir[0] = '\0';
	}
	if (mlsup_node_facts_gather(dir, &f, msg, sizeof(msg)) < 0)
		slurm_info("mlsup: node: job %u on %s: %s (recorded without)", mlsup.job_id, mlsup.node, msg);
	append_line(line,
		    mlsup_format_node(line, sizeof(line), mlsup.job_id, mlsup.step_id, mlsup.node, &f, mlsup_wall_time()),
		    sizeof(line));
}

static void run_health_check(void)
{
	char env_node[300], env_mnode[300], env_job[64], env_step[64], env_uid[64];
	char *envp[] = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C",
			 env_node, env_mnode, env_job, env_step, env_uid, NULL };
	struct mlsup_health_result r;
	char line[MLSUP_LINE_MAX];

	snprintf(env_node, sizeof(env_node), "SLURMD_NODENAME=%s", mlsup.node);
	snprintf(env_mnode, sizeof(env_mnode), "MLSUP_NODE=%s", mlsup.node);
	snprintf(env_job, sizeof(env_job), "SLURM_JOB_ID=%u", mlsup.job_id);
	snprintf(env_step, sizeof(env_step), "SLURM_STEP_ID=%ld", mlsup_step_number(mlsup.step_id));
	snprintf(env_uid, sizeof(env_uid), "SLURM_JOB_UID=%u", (unsigned)mlsup.user.uid);
	mlsup_health_run(&mlsup.user, mlsup.cfg.health_check, envp, mlsup.cfg.health_timeout, &r);
	if (!r.ran) {
		slurm_error("mlsup: health: %s; node %s not judged", r.detail, mlsup.node);
		return;
	}
	append_line(line,
		    mlsup_format_health(line, sizeof(line), mlsup.job_id, mlsup.step_id, mlsup.node, r.ok, r.exit_code,
					r.detail, mlsup_wall_time()),
		    sizeof(line));
	if (r.ok)
		return;
	mlsup.health_failed = true;
	snprintf(mlsup.health_detail, sizeof(mlsup.health_detail), "%.*s", MLSUP_DETAIL_MAX, r.detail);
	slurm_info("mlsup: health: node %s failed the check (exit %d): %s%s", mlsup.node, r.exit_code, r.detail,
		   mlsup.cfg.health_fail_job ? "; its tasks exit 79" : "");
}

int mlsup_remote_user_init(spank_t sp)
{
	long step;

	if (!mlsup.enabled)
		return 0;
	gather_facts(sp);
	if (!mlsup.supervised || mlsup.user_refused)
		return 0;
	step = mlsup_step_number(mlsup.step_id);
	if (step < 0 && step != -1) /* ordinary steps and the batch script; not extern/interactive */
		return 0;
	if (mlsup.cfg.node_facts && records_on())
		record_node_facts();
	if (mlsup.cfg.health_check[0])
		run_health_check();
	return 0;
}

int mlsup_remote_task_init(spank_t sp)
{
	uint32_t rank = 0;

	if (!mlsup.enabled || !mlsup.supervised)
		return 0;
	spank_get_item(sp, S_TASK_GLOBAL_ID, &rank);
	mlsup_task_env(sp, rank);
	if (mlsup.health_failed && mlsup.cfg.health_fail_job) {
		fprintf(stderr, "mlsup: health: node %s failed the health check (%s); task %u exits %d\n", mlsup.node,
			mlsup.health_detail, rank, MLSUP_HEALTH_EXIT_CODE);
		fflush(stderr);
		_exit(MLSUP_HEALTH_EXIT_CODE);
	}
	return 0;
}

int mlsup_remote_task_exit(spank_t sp)
{
	uint32_t rank = 0;
	int local = 0, status = 0;
	char line[MLSUP_LINE_MAX];

	if (!mlsup.enabled || !mlsup.supervised)
		return 0;
	if (spank_get_item(sp, S_TASK_EXIT_STATUS, &status) != ESPANK_SUCCESS) {
		slurm_error("mlsup: record: no exit status for a task of job %u", mlsup.job_id);
		return 0;
	}
	spank_get_item(sp, S_TASK_GLOBAL_ID, &rank);
	spank_get_item(sp, S_TASK_ID, &local);
	append_line(line,
		    mlsup_format_task_exit(line, sizeof(line), mlsup.job_id, mlsup.step_id, mlsup.node, rank, local,
					   status, mlsup_wall_time()),
		    sizeof(line));
	return 0;
}
