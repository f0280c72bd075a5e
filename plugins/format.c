/* Record lines: one JSON object per line, "v":1 first, written by one write(2). */
#include "format.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

/* Slurm's special step ids (slurm.h, 22.05); repeated here so this file needs no Slurm header. */
#define STEP_BATCH 0xfffffffbu
#define STEP_EXTERN 0xfffffffcu
#define STEP_INTERACTIVE 0xfffffffau
#define STEP_FIRST_SPECIAL 0xfffffff0u

long mlsup_step_number(uint32_t step_id)
{
	if (step_id == STEP_BATCH)
		return -1;
	if (step_id == STEP_EXTERN)
		return -2;
	if (step_id == STEP_INTERACTIVE)
		return -3;
	if (step_id >= STEP_FIRST_SPECIAL)
		return -4;
	return (long)step_id;
}

void mlsup_decode_status(int status, int *exit_code, int *signal)
{
	*exit_code = 0;
	*signal = 0;
	if (WIFEXITED(status))
		*exit_code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		*signal = WTERMSIG(status);
}

static bool safe_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
	       c == '_' || c == '-';
}

void mlsup_node_file_name(const char *node, char *out, size_t outlen)
{
	size_t i = 0, o = 0;

	if (outlen == 0)
		return;
	if ((node[0] == '\0' || node[0] == '.') && o + 1 < outlen)
		out[o++] = '_';
	for (; node[i] && o + 1 < outlen; i++)
		out[o++] = safe_char(node[i]) ? node[i] : '_';
	out[o] = '\0';
}

/* mlsup_json_escape, also counting the input bytes it consumed into *used. */
static size_t escape_counted(char *out, size_t outlen, const char *s, size_t maxin, size_t *used)
{
	size_t i, o = 0;

	*used = 0;
	if (outlen == 0)
		return 0;
	for (i = 0; s[i] && s[i] != '\n' && i < maxin; i++) {
		unsigned char c = (unsigned char)s[i];
		char buf[8];
		size_t n;

		if (c == '"' || c == '\\') {
			buf[0] = '\\';
			buf[1] = (char)c;
			n = 2;
		} else if (c < 0x20 || c == 0x7f) {
			n = (size_t)snprintf(buf, sizeof(buf), "\\u%04x", c);
		} else if (c >= 0x80) {
			buf[0] = '?'; /* not necessarily valid UTF-8: keep the line valid JSON */
			n = 1;
		} else {
			buf[0] = (char)c;
			n = 1;
		}
		if (o + n + 1 > outlen)
			break;
		memcpy(out + o, buf, n);
		o += n;
	}
	out[o] = '\0';
	*used = i;
	return o;
}

size_t mlsup_json_escape(char *out, size_t outlen, const char *s, size_t maxin)
{
	size_t used;

	return escape_counted(out, outlen, s, maxin, &used);
}

static int fitted(int n, size_t outlen)
{
	return (n < 0 || (size_t)n >= outlen) ? -1 : n;
}

int mlsup_format_task_exit(char *out, size_t outlen, uint32_t job, uint32_t step_id, const char *node,
			   uint32_t rank, int local_rank, int status, double time)
{
	char name[256];
	int code, sig;

	mlsup_json_escape(name, sizeof(name), node, sizeof(name));
	mlsup_decode_status(status, &code, &sig);
	return fitted(snprintf(out, outlen,
			       "{\"v\":1,\"kind\":\"task-exit\",\"job\":%u,\"step\":%ld,\"node\":\"%s\","
			       "\"rank\":%u,\"local_rank\":%d,\"exit_code\":%d,\"signal\":%d,\"time\":%.6f}\n",
			       job, mlsup_step_number(step_id), name, rank, local_rank, code, sig, time),
		      outlen);
}

/* The marker of a cut detail: its full length, so that a reader knows what it misses. */
#define TRUNCATED_FMT ",\"detail_truncated\":true,\"detail_bytes\":%zu"
#define TRUNCATED_ROOM 64

int mlsup_format_health(char *out, size_t outlen, uint32_t job, uint32_t step_id, const char *node, bool ok,
			int exit_code, const char *detail, double time)
{
	char name[256], text[MLSUP_DETAIL_MAX * 6 + 1], mark[TRUNCATED_ROOM] = "";
	const char *d = detail ? detail : "";
	size_t full = strcspn(d, "\n"), used, room;
	int fixed;

	mlsup_json_escape(name, sizeof(name), node, sizeof(name));
	/* The line without its detail, to learn how much of the detail fits (escapes grow it). */
	fixed = snprintf(NULL, 0,
			 "{\"v\":1,\"kind\":\"health\",\"job\":%u,\"step\":%ld,\"node\":\"%s\","
			 "\"ok\":%s,\"exit_code\":%d,\"detail\":\"\",\"time\":%.6f}\n",
			 job, mlsup_step_number(step_id), name, ok ? "true" : "false", exit_code, time);
	if (fixed < 0 || (size_t)fixed + TRUNCATED_ROOM >= outlen)
		return -1;
	room = outlen - (size_t)fixed - TRUNCATED_ROOM;
	escape_counted(text, room < sizeof(text) ? room : sizeof(text), d, MLSUP_DETAIL_MAX, &used);
	if (used < full)
		snprintf(mark, sizeof(mark), TRUNCATED_FMT, full);
	return fitted(snprintf(out, outlen,
			       "{\"v\":1,\"kind\":\"health\",\"job\":%u,\"step\":%ld,\"node\":\"%s\","
			       "\"ok\":%s,\"exit_code\":%d,\"detail\":\"%s\"%s,\"time\":%.6f}\n",
			       job, mlsup_step_number(step_id), name, ok ? "true" : "false", exit_code, text, mark, time),
		      outlen);
}

int mlsup_heartbeat_dir(char *out, size_t outlen, const char *base)
{
	return fitted(snprintf(out, outlen, "%s.d", base), outlen);
}

int mlsup_heartbeat_path(char *out, size_t outlen, const char *base, const char *node, uint32_t rank)
{
	char name[256];

	mlsup_node_file_name(node, name, sizeof(name));
	return fitted(snprintf(out, outlen, "%s.d/%s.%u", base, name, rank), outlen);
}
