/* Plugstack arguments: a table of keys, each with its parser; explicit defaults. */
#include "config.h"

#include "format.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*parse_fn)(struct mlsup_config *cfg, const char *value, char *err, size_t errlen);

static int parse_bool(const char *value, bool *out)
{
	if (!strcmp(value, "yes") || !strcmp(value, "true") || !strcmp(value, "1")) {
		*out = true;
		return 0;
	}
	if (!strcmp(value, "no") || !strcmp(value, "false") || !strcmp(value, "0")) {
		*out = false;
		return 0;
	}
	return -1;
}

/* Copies an absolute path that fits into dst (size bytes); else says why not (key, and what else it may be). */
static int set_path(char *dst, size_t size, const char *key, const char *value, const char *or_else, char *err,
		    size_t errlen)
{
	size_t n = strlen(value);

	if (value[0] != '/' || n >= size) {
		snprintf(err, errlen, "%s: \"%s\" is not an absolute path%s", key, value, or_else);
		return -1;
	}
	memcpy(dst, value, n + 1);
	return 0;
}

static int set_health_check(struct mlsup_config *cfg, const char *value, char *err, size_t errlen)
{
	if (value[0] == '\0') {
		cfg->health_check[0] = '\0';
		return 0;
	}
	return set_path(cfg->health_check, sizeof(cfg->health_check), "health_check", value, "", err, errlen);
}

static int set_health_timeout(struct mlsup_config *cfg, const char *value, char *err, size_t errlen)
{
	char *end = NULL;
	long v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (errno || end == value || *end != '\0' || v < 1 || v > 3600) {
		snprintf(err, errlen, "health_timeout: \"%s\" is not a number of seconds from 1 to 3600", value);
		return -1;
	}
	cfg->health_timeout = (int)v;
	return 0;
}

#define GPU_INFO_DEFAULT "/proc/driver/nvidia/gpus"

static int set_gpu_info(struct mlsup_config *cfg, const char *value, char *err, size_t errlen)
{
	if (!strcmp(value, "none")) {
		cfg->gpu_info[0] = '\0';
		return 0;
	}
	return set_path(cfg->gpu_info, sizeof(cfg->gpu_info), "gpu_info", value, " or none", err, errlen);
}

#define BOOL_SETTER(field)                                                                          \
	static int set_##field(struct mlsup_config *cfg, const char *value, char *err, size_t errlen) \
	{                                                                                           \
		if (parse_bool(value, &cfg->field) == 0)                                            \
			return 0;                                                                   \
		snprintf(err, errlen, #field ": \"%s\" is not yes or no", value);                  \
		return -1;                                                                          \
	}
BOOL_SETTER(health_fail_job)
BOOL_SETTER(heartbeat_per_task)
BOOL_SETTER(records)
BOOL_SETTER(allow_root)
BOOL_SETTER(node_facts)

static const struct {
	const char *key;
	parse_fn parse;
} keys[] = {
	{ "health_check", set_health_check },
	{ "health_timeout", set_health_timeout },
	{ "health_fail_job", set_health_fail_job },
	{ "heartbeat_per_task", set_heartbeat_per_task },
	{ "records", set_records },
	{ "allow_root", set_allow_root },
	{ "node_facts", set_node_facts },
	{ "gpu_info", set_gpu_info },
};

const char *mlsup_config_known_keys(void)
{
	return "health_check, health_timeout, health_fail_job, heartbeat_per_task, records, allow_root, node_facts, "
	       "gpu_info";
}

const char *mlsup_user_refusal(const struct mlsup_config *cfg, bool known, unsigned uid)
{
	if (!known)
		return "the job's uid or gid is unknown";
	if (uid == 0 && !cfg->allow_root)
		return "the job runs as root (allow_root=yes in plugstack.conf permits it)";
	return NULL;
}

void mlsup_config_defaults(struct mlsup_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->health_timeout = 30;
	cfg->health_fail_job = false;
	cfg->heartbeat_per_task = true;
	cfg->records = true;
	cfg->allow_root = false;
	cfg->node_facts = true;
	snprintf(cfg->gpu_info, sizeof(cfg->gpu_info), "%s", GPU_INFO_DEFAULT);
}

int mlsup_config_gpu_dir(const struct mlsup_config *cfg, const char *node, char *out, size_t outlen)
{
	char name[256];
	const char *p;
	size_t o = 0, n;

	if (outlen == 0)
		return -1;
	mlsup_node_file_name(node, name, sizeof(name));
	for (p = cfg->gpu_info; *p; p += n) {
		bool is_node = p[0] == '%' && p[1] == 'n';
		const char *piece = is_node ? name : p;
		size_t len = is_node ? strlen(name) : 1;

		n = is_node ? 2 : 1;
		if (o + len >= outlen) {
			out[0] = '\0';
			return -1;
		}
		memcpy(out + o, piece, len);
		o += len;
	}
	out[o] = '\0';
	return 0;
}

static int apply_word(struct mlsup_config *cfg, const char *word, char *err, size_t errlen)
{
	const char *eq = strchr(word, '=');
	size_t keylen, i;

	if (!eq) {
		snprintf(err, errlen, "argument \"%s\" is not key=value (known keys: %s)", word,
			 mlsup_config_known_keys());
		return -1;
	}
	keylen = (size_t)(eq - word);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strlen(keys[i].key) == keylen && !strncmp(keys[i].key, word, keylen))
			return keys[i].parse(cfg, eq + 1, err, errlen);
	}
	snprintf(err, errlen, "unknown key \"%.*s\" (known: %s)", (int)keylen, word, mlsup_config_known_keys());
	return -1;
}

int mlsup_config_parse(struct mlsup_config *cfg, int argc, char *const argv[], char *err, size_t errlen)
{
	int i;

	mlsup_config_defaults(cfg);
	if (errlen)
		err[0] = '\0';
	for (i = 0; i < argc; i++) {
		if (apply_word(cfg, argv[i], err, errlen) < 0) {
			mlsup_config_defaults(cfg);
			return -1;
		}
	}
	return 0;
}
