#ifndef MLSUP_PLUGIN_CONFIG_H
#define MLSUP_PLUGIN_CONFIG_H
/* The plugstack arguments of mlsup_spank.so ("key=value" words). Pure: no Slurm, no I/O. */
#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MLSUP_PATH_MAX 4096
#define MLSUP_HEALTH_EXIT_CODE 79 /* a task exits with this when its node failed the health check */

struct mlsup_config {
	char health_check[MLSUP_PATH_MAX]; /* absolute path of the check, "" = none */
	int health_timeout;                /* seconds, 1..3600 */
	bool health_fail_job;              /* tasks on a failed node exit MLSUP_HEALTH_EXIT_CODE */
	bool heartbeat_per_task;           /* MLSUP_HEARTBEAT_FILE becomes P.d/<node>.<rank> */
	bool records;                      /* write records (task exits, health checks, node records) */
	bool allow_root;                   /* run the check and write records for jobs of uid 0 */
	bool node_facts;                   /* write the "node" record (addresses, GPUs) per node and step */
	char gpu_info[MLSUP_PATH_MAX];     /* absolute directory of per-GPU folders ("%n": the node), "" = none */
};

/* Fills cfg with the defaults. */
void mlsup_config_defaults(struct mlsup_config *cfg);

/* Applies argv (plugstack words) on top of the defaults. Returns 0, or -1 with a one-line
 * message in err ("unknown key \"x\" (known: ...)"); cfg then holds the defaults again. */
int mlsup_config_parse(struct mlsup_config *cfg, int argc, char *const argv[], char *err, size_t errlen);

/* Whether the plugin may act for a job of this user (the check, records): NULL when it may,
 * else why not. known: Slurm told the job's uid and gid. Root only with allow_root=yes. */
const char *mlsup_user_refusal(const struct mlsup_config *cfg, bool known, unsigned uid);

/* The GPU info directory for this node: cfg->gpu_info with each "%n" replaced by the node's file
 * name (mlsup_node_file_name). out is "" when gpu_info=none. Returns -1 if it does not fit. */
int mlsup_config_gpu_dir(const struct mlsup_config *cfg, const char *node, char *out, size_t outlen);

/* The known keys, comma-separated, for messages and documentation. */
const char *mlsup_config_known_keys(void);

#ifdef __cplusplus
}
#endif
#endif
