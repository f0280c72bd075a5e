/* Running the health check: fork, become the user, exec with a clean environment, bounded. */
#define _GNU_SOURCE
#include "health.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define OUTPUT_MAX MLSUP_HEALTH_OUTPUT_MAX

static void child_exec(const struct mlsup_user *u, const char *path, char *const envp[], int out, int err)
{
	char msg[256] = "";
	char *argv[] = { (char *)path, NULL };
	int devnull;

	setpgid(0, 0);
	if (mlsup_become_user(u, msg, sizeof(msg)) == 0) {
		devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(out, 1);
		dup2(out, 2);
		if (chdir("/") == 0)
			execve(path, argv, envp);
		snprintf(msg, sizeof(msg), "cannot run %s: %s", path, strerror(errno));
	}
	{
		ssize_t w = write(err, msg, strlen(msg));
		(void)w;
	}
	_exit(127);
}

/* Copies the first non-empty line of buf into detail. */
static void first_line(const char *buf, char *detail, size_t len)
{
	const char *p = buf, *end;
	size_t n;

	while (*p == '\n' || *p == '\r' || *p == ' ')
		p++;
	end = strpbrk(p, "\r\n");
	n = end ? (size_t)(end - p) : strlen(p);
	if (n >= len)
		n = len - 1;
	memcpy(detail, p, n);
	detail[n] = '\0';
}

/* Reads what is available on fd into buf (bounded by OUTPUT_MAX, the rest is dropped). Returns
 * 1 after reading, 0 at end of file or on an error, -1 when nothing is available now. */
static int drain(int fd, char *buf, size_t *got)
{
	char sink[512];
	ssize_t n;

	if (*got < OUTPUT_MAX)
		n = read(fd, buf + *got, OUTPUT_MAX - *got);
	else
		n = read(fd, sink, sizeof(sink));
	if (n > 0 && *got < OUTPUT_MAX)
		*got += (size_t)n;
	if (n > 0)
		return 1;
	return n < 0 && (errno == EAGAIN || errno == EINTR) ? -1 : 0;
}

void mlsup_health_run(const struct mlsup_user *u, const char *path, char *const envp[], int timeout_s,
		      struct mlsup_health_result *out)
{
	long long deadline = mlsup_now_ms() + (long long)timeout_s * 1000;
	char buf[OUTPUT_MAX + 1], errbuf[256];
	int op[2], ep[2], status = 0, open_out = 1, exited = 0;
	size_t got = 0;
	ssize_t en;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	if (pipe2(op, O_CLOEXEC) < 0 || pipe2(ep, O_CLOEXEC) < 0) {
		snprintf(out->detail, sizeof(out->detail), "pipe: %s", strerror(errno));
		return;
	}
	pid = mlsup_fork(); /* signals at their defaults, none blocked */
	if (pid < 0) {
		snprintf(out->detail, sizeof(out->detail), "fork: %s", strerror(errno));
		close(op[0]); close(op[1]); close(ep[0]); close(ep[1]);
		return;
	}
	if (pid == 0) {
		close(op[0]);
		close(ep[0]);
		child_exec(u, path, envp, op[1], ep[1]);
	}
	setpgid(pid, pid);
	close(op[1]);
	close(ep[1]);
	fcntl(op[0], F_SETFL, O_NONBLOCK);
	fcntl(ep[0], F_SETFL, O_NONBLOCK);
	/* Read its output until it exits; a grandchild holding the pipe does not keep us waiting. */
	while (!exited && mlsup_now_ms() < deadline) {
		struct pollfd p = { .fd = op[0], .events = POLLIN };

		if (open_out && poll(&p, 1, 20) > 0)
			open_out = drain(op[0], buf, &got) != 0;
		else if (!open_out)
			poll(NULL, 0, 20);
		if (waitpid(pid, &status, WNOHANG) == pid)
			exited = 1;
	}
	if (exited && open_out)
		while (drain(op[0], buf, &got) > 0)
			;
	buf[got] = '\0';
	close(op[0]);
	if (!exited && !mlsup_wait_bounded(pid, deadline, 1, &status)) {
		out->ran = true;
		out->exit_code = 124;
		snprintf(out->detail, sizeof(out->detail), "timed out after %ds", timeout_s);
		close(ep[0]);
		return;
	}
	en = read(ep[0], errbuf, sizeof(errbuf) - 1);
	close(ep[0]);
	if (en > 0) {
		errbuf[en] = '\0';
		first_line(errbuf, out->detail, sizeof(out->detail));
		return;
	}
	out->ran = true;
	out->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	out->ok = out->exit_code == 0;
	first_line(buf, out->detail, sizeof(out->detail));
}
