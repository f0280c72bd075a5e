/* Plugstack arguments and the --mlsup-* options, in every context. */
#include <stdio.h>
#include <string.h>

#include "plugin.h"

struct mlsup_state mlsup;

static int set_run(int val, const char *optarg, int remote)
{
	(void)val;
	(void)remote;
	snprintf(mlsup.opt_run, sizeof(mlsup.opt_run), "%s", optarg ? optarg : "");
	return 0;
}

static int set_state_dir(int val, const char *optarg, int remote)
{
	(void)val;
	if (optarg && optarg[0] && optarg[0] != '/') {
		if (remote)
			slurm_error("mlsup: option: --mlsup-state-dir=%s is not an absolute path, ignored", optarg);
		else
			slurm_spank_log("mlsup: option: --mlsup-state-dir=%s is not an absolute path, ignored", optarg);
		return 0;
	}
	snprintf(mlsup.opt_state_dir, sizeof(mlsup.opt_state_dir), "%s", optarg ? optarg : "");
	return 0;
}

static struct spank_option options[] = {
	{ "mlsup-run", "NAME", "Supervised by mlsup: the campaign's name (sets MLSUP_RUN).", 1, 0, set_run },
	{ "mlsup-state-dir", "DIR",
	  "Supervised by mlsup: the campaign's state directory (sets MLSUP_STATE_DIR; records go to DIR/nodes/).",
	  1, 0, set_state_dir },
	SPANK_OPTIONS_TABLE_END
};

/* Parses the plugstack arguments; a bad one disables the plugin (it reports, never fails). */
static void load_config(int ac, char **av)
{
	char err[512];
	spank_context_t ctx = spank_context();

	mlsup.enabled = mlsup_config_parse(&mlsup.cfg, ac, av, err, sizeof(err)) == 0;
	if (mlsup.enabled)
		return;
	if (ctx == S_CTX_REMOTE || ctx == S_CTX_SLURMD)
		slurm_error("mlsup: config: %s; the plugin does nothing until plugstack.conf is fixed", err);
	else
		slurm_verbose("mlsup: config: %s; the plugin does nothing until plugstack.conf is fixed", err);
}

int mlsup_init(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();
	int i;

	load_config(ac, av);
	/* Options are registered even when disabled: a script's #SBATCH --mlsup-run must still parse. */
	if (ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR || ctx == S_CTX_REMOTE) {
		for (i = 0; options[i].name; i++) {
			spank_err_t rc = spank_option_register(sp, &options[i]);

			if (rc != ESPANK_SUCCESS)
				slurm_error("mlsup: option: cannot register --%s: %s", options[i].name, spank_strerror(rc));
		}
	}
	return 0;
}
