/* The node's facts, read as root in slurmstepd: getifaddrs and the GPU driver's /proc folder. */
#define _GNU_SOURCE
#include "node_facts.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GPU_DIRS_MAX 256 /* folders of gpu_dir looked at, at most */

/* The text of one interface address when the record keeps it; false otherwise. */
static bool address_text(const struct ifaddrs *ifa, char *out, size_t outlen)
{
	const struct sockaddr *sa = ifa->ifa_addr;
	bool up = ifa->ifa_flags & IFF_UP, loopback = ifa->ifa_flags & IFF_LOOPBACK;
	const void *bytes;

	if (!sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
		return false;
	bytes = sa->sa_family == AF_INET ? (const void *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr
					 : (const void *)&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
	if (!mlsup_address_kept(up, loopback, sa->sa_family == AF_INET6, bytes))
		return false;
	return inet_ntop(sa->sa_family, bytes, out, (socklen_t)outlen) != NULL;
}

static int gather_addresses(struct mlsup_node_facts *f, char *msg, size_t msglen)
{
	struct ifaddrs *all, *ifa;
	char text[MLSUP_ADDRESS_LEN];

	if (getifaddrs(&all) < 0) {
		snprintf(msg, msglen, "getifaddrs: %s", strerror(errno));
		return -1;
	}
	for (ifa = all; ifa; ifa = ifa->ifa_next) {
		if (address_text(ifa, text, sizeof(text)))
			mlsup_node_facts_add_address(f, text);
	}
	freeifaddrs(all);
	return 0;
}

/* Reads at most MLSUP_GPU_INFO_MAX bytes of <gpu folder>/information (a regular file, never
 * blocking on anything else) and parses it. Returns 0 for a GPU with a UUID. */
static int read_gpu(int dirfd, const char *folder, struct mlsup_gpu *g)
{
	char path[300], text[MLSUP_GPU_INFO_MAX];
	size_t len = 0;
	ssize_t n = 1;
	struct stat st;
	int fd;

	if (snprintf(path, sizeof(path), "%s/information", folder) >= (int)sizeof(path))
		return -1;
	fd = openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		while (len < sizeof(text) && (n = read(fd, text + len, sizeof(text) - len)) > 0)
			len += (size_t)n;
	}
	close(fd);
	return len ? mlsup_parse_gpu_info(text, len, g) : -1;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of gpu_dir's entries (not starting with '.'), sorted; *n of them. NULL on error. */
static char **folder_names(DIR *d, int *n)
{
	char **names = calloc(GPU_DIRS_MAX, sizeof(*names));
	struct dirent *e;

	*n = 0;
	while (names && *n < GPU_DIRS_MAX && (e = readdir(d)) != NULL) {
		if (e->d_name[0] != '.' && (names[*n] = strdup(e->d_name)) != NULL)
			(*n)++;
	}
	if (names)
		qsort(names, (size_t)*n, sizeof(*names), by_name);
	return names;
}

static int gather_gpus(const char *gpu_dir, struct mlsup_node_facts *f, char *msg, size_t msglen)
{
	DIR *d = opendir(gpu_dir);
	char **names;
	int n, i;

	if (!d && errno == ENOENT)
		return 0;
	if (!d) {
		snprintf(msg, msglen, "GPU info %s: %s", gpu_dir, strerror(errno));
		return -1;
	}
	names = folder_names(d, &n);
	for (i = 0; names && i < n; i++) {
		if (f->ngpus < MLSUP_GPU_MAX && read_gpu(dirfd(d), names[i], &f->gpus[f->ngpus]) == 0)
			f->ngpus++;
		free(names[i]);
	}
	free(names);
	closedir(d);
	mlsup_sort_gpus(f->gpus, f->ngpus);
	return 0;
}

int mlsup_node_facts_gather(const char *gpu_dir, struct mlsup_node_facts *f, char *msg, size_t msglen)
{
	char why_addr[256] = "", why_gpu[300] = "";
	int rc = 0;

	memset(f, 0, sizeof(*f));
	if (gather_addresses(f, why_addr, sizeof(why_addr)) < 0)
		rc = -1;
	if (gpu_dir[0] && gather_gpus(gpu_dir, f, why_gpu, sizeof(why_gpu)) < 0)
		rc = -1;
	if (msglen)
		snprintf(msg, msglen, "%s%s%s", why_addr, why_addr[0] && why_gpu[0] ? "; " : "", why_gpu);
	return rc;
}
