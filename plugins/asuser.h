#ifndef MLSUP_PLUGIN_ASUSER_H
#define MLSUP_PLUGIN_ASUSER_H
/* Running a piece of work as the job's user in a forked child, with a bounded wait. slurmstepd
 * runs most callbacks as root (or with only its effective ids dropped): nothing is written into a
 * user's directory until the child has given up root for good. */
#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MLSUP_MAX_GIDS 256

struct mlsup_user {
	uid_t uid;
	gid_t gid;
	gid_t gids[MLSUP_MAX_GIDS]; /* supplementary groups */
	int ngids;
};

/* Work done in the child: returns 0 on success; on failure writes a message into msg. Only
 * system calls and snprintf (the parent is multithreaded). */
typedef int (*mlsup_user_fn)(void *arg, char *msg, size_t msglen);

/* Gives up root for good and becomes u (in a child). Returns 0 or -1 with a message. */
int mlsup_become_user(const struct mlsup_user *u, char *msg, size_t msglen);

/* Runs fn(arg) in a child that became u; waits at most timeout_ms. Returns 0 if fn succeeded,
 * otherwise -1 with the reason in msg. */
int mlsup_run_as_user(const struct mlsup_user *u, mlsup_user_fn fn, void *arg, int timeout_ms, char *msg,
		      size_t msglen);

/* Milliseconds on the monotonic clock. */
long long mlsup_now_ms(void);

/* Wall-clock seconds with fractions. */
double mlsup_wall_time(void);

/* Waits for pid until deadline_ms (monotonic); kills it (and its group if group) when late.
 * Returns 1 with *status set when it ended in time, 0 when it was killed. */
int mlsup_wait_bounded(pid_t pid, long long deadline_ms, int group, int *status);

/* fork(2) for a child that runs or execs something: the child starts with every signal's
 * disposition at its default and an empty signal mask (slurmstepd blocks and handles signals; a
 * blocked or ignored SIGTERM or SIGALRM would survive exec and defeat a timeout), and no signal
 * reaches one of the parent's handlers in the child in between. */
pid_t mlsup_fork(void);

#ifdef __cplusplus
}
#endif
#endif
