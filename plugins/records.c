/* Writing records: in a child that is the job's user, never following a planted symlink. */
#define _GNU_SOURCE
#include "records.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"

#define RECORD_TIMEOUT_MS 5000

struct append_job {
	const char *state_dir;
	uint32_t job;
	const char *node;
	const char *line;
	size_t len;
};

/* Opens (creating if missing) the directory name under dirfd without following a symlink. */
static int open_subdir(int dirfd, const char *name, const char *shown, char *msg, size_t msglen)
{
	int fd;

	if (mkdirat(dirfd, name, 0755) < 0 && errno != EEXIST) {
		snprintf(msg, msglen, "mkdir %s: %s", shown, strerror(errno));
		return -1;
	}
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR))
		snprintf(msg, msglen, "open %s: a symlink or not a directory (not followed)", shown);
	else if (fd < 0)
		snprintf(msg, msglen, "open %s: %s", shown, strerror(errno));
	return fd;
}

static int append_in_child(void *arg, char *msg, size_t msglen)
{
	const struct append_job *a = arg;
	char jobname[16], file[300];
	int sfd, nfd, jfd, fd, rc = -1;
	struct stat st;
	ssize_t w;

	snprintf(jobname, sizeof(jobname), "%u", a->job);
	mlsup_node_file_name(a->node, file, sizeof(file) - 8);
	strcat(file, ".jsonl");
	sfd = open(a->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd < 0) {
		snprintf(msg, msglen, "state directory %s: %s", a->state_dir, strerror(errno));
		return -1;
	}
	nfd = open_subdir(sfd, "nodes", "nodes/", msg, msglen);
	close(sfd);
	if (nfd < 0)
		return -1;
	jfd = open_subdir(nfd, jobname, "nodes/<job>", msg, msglen);
	close(nfd);
	if (jfd < 0)
		return -1;
	fd = openat(jfd, file, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	close(jfd);
	if (fd < 0) {
		snprintf(msg, msglen, "open nodes/%s/%s: %s%s", jobname, file, strerror(errno),
			 errno == ELOOP ? " (a symlink, not followed)" : "");
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(msg, msglen, "nodes/%s/%s is not a regular file", jobname, file);
		goto out;
	}
	w = write(fd, a->line, a->len);
	if (w != (ssize_t)a->len) {
		snprintf(msg, msglen, "write nodes/%s/%s: %s", jobname, file, w < 0 ? strerror(errno) : "short write");
		goto out;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

int mlsup_record_append(const struct mlsup_user *u, const char *state_dir, uint32_t job, const char *node,
			const char *line, size_t len, char *msg, size_t msglen)
{
	struct append_job a = { state_dir, job, node, line, len };

	return mlsup_run_as_user(u, append_in_child, &a, RECORD_TIMEOUT_MS, msg, msglen);
}
