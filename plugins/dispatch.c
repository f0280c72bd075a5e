/* The only slurm_spank_* definitions: each switches on the context and calls one function. */
#include <slurm/spank.h>

#include "plugin.h"

SPANK_PLUGIN(mlsup, 1)

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	return mlsup_init(sp, ac, av);
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	return spank_context() == S_CTX_REMOTE ? mlsup_remote_user_init(sp) : 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	return spank_context() == S_CTX_REMOTE ? mlsup_remote_task_init(sp) : 0;
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	return spank_context() == S_CTX_REMOTE ? mlsup_remote_task_exit(sp) : 0;
}
