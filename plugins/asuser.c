/* Forked children that give up root, with bounded waits. */
#define _GNU_SOURCE
#include "asuser.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

long long mlsup_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

double mlsup_wall_time(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int mlsup_become_user(const struct mlsup_user *u, char *msg, size_t msglen)
{
	/* slurmstepd may have dropped only its effective ids (user_init): take root back first. */
	if (geteuid() != 0 && getuid() == 0 && seteuid(0) < 0) {
		snprintf(msg, msglen, "seteuid(0): %s", strerror(errno));
		return -1;
	}
	if (geteuid() == 0) {
		if (u->ngids > 0 ? setgroups((size_t)u->ngids, u->gids) : setgroups(1, &u->gid)) {
			snprintf(msg, msglen, "setgroups: %s", strerror(errno));
			return -1;
		}
		if (setresgid(u->gid, u->gid, u->gid) < 0 || setresuid(u->uid, u->uid, u->uid) < 0) {
			snprintf(msg, msglen, "cannot become uid %u gid %u: %s", (unsigned)u->uid, (unsigned)u->gid,
				 strerror(errno));
			return -1;
		}
	}
	if (getuid() != u->uid || geteuid() != u->uid || getegid() != u->gid) {
		snprintf(msg, msglen, "running as uid %u, not the job's uid %u", (unsigned)geteuid(), (unsigned)u->uid);
		return -1;
	}
	return 0;
}

int mlsup_wait_bounded(pid_t pid, long long deadline_ms, int group, int *status)
{
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return 1;
		if (r < 0 && errno != EINTR) {
			*status = 0; /* reaped elsewhere: nothing more to learn */
			return 1;
		}
		if (mlsup_now_ms() >= deadline_ms)
			break;
		poll(NULL, 0, 10);
	}
	if (group)
		kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	/* A child stuck in the kernel (a hung file system) may never die: do not wait for it. */
	for (int i = 0; i < 100 && waitpid(pid, status, WNOHANG) == 0; i++)
		poll(NULL, 0, 10);
	return 0;
}

pid_t mlsup_fork(void)
{
	sigset_t all, old;
	pid_t pid;
	int s;

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid != 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		return pid;
	}
	for (s = 1; s < NSIG; s++)
		signal(s, SIG_DFL); /* fails harmlessly for SIGKILL, SIGSTOP and libc's own */
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	return 0;
}

static void child_run(const struct mlsup_user *u, mlsup_user_fn fn, void *arg, int fd)
{
	char msg[512] = "";
	int rc;

	umask(022);
	rc = mlsup_become_user(u, msg, sizeof(msg));
	if (rc == 0)
		rc = fn(arg, msg, sizeof(msg));
	if (rc != 0 && msg[0]) {
		ssize_t w = write(fd, msg, strlen(msg));
		(void)w;
	}
	_exit(rc == 0 ? 0 : 1);
}

int mlsup_run_as_user(const struct mlsup_user *u, mlsup_user_fn fn, void *arg, int timeout_ms, char *msg,
		      size_t msglen)
{
	long long deadline = mlsup_now_ms() + timeout_ms;
	int fds[2], status = 0;
	size_t got = 0;
	pid_t pid;

	msg[0] = '\0';
	if (pipe2(fds, O_CLOEXEC) < 0) {
		snprintf(msg, msglen, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = mlsup_fork();
	if (pid < 0) {
		snprintf(msg, msglen, "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		child_run(u, fn, arg, fds[1]);
	}
	close(fds[1]);
	for (;;) {
		struct pollfd p = { .fd = fds[0], .events = POLLIN };
		long long left = deadline - mlsup_now_ms();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		n = read(fds[0], msg + got, msglen - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got >= msglen - 1)
			break;
	}
	msg[got] = '\0';
	close(fds[0]);
	if (!mlsup_wait_bounded(pid, deadline, 0, &status)) {
		snprintf(msg, msglen, "gave up after %d ms", timeout_ms);
		return -1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (!msg[0])
		snprintf(msg, msglen, "child ended with status %d", status);
	return -1;
}
