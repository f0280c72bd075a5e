/* Record lines: one JSON object per line, "v":1 first, written by one write(2). */
#include "format.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
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

#define GPU_FIELD(label, field) { label, offsetof(struct mlsup_gpu, field), sizeof(((struct mlsup_gpu *)0)->field) }

/* The lines of a GPU's information file that the record keeps, by their label. */
static const struct {
	const char *label;
	size_t offset, size;
} gpu_fields[] = {
	GPU_FIELD("Model", model),
	GPU_FIELD("GPU UUID", uuid),
	GPU_FIELD("Bus Location", bus),
};

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Narrows [*b, *e) to exclude blanks at both ends. */
static void trim(const char **b, const char **e)
{
	while (*b < *e && blank(**b))
		(*b)++;
	while (*e > *b && blank((*e)[-1]))
		(*e)--;
}

/* Stores the value of one line (no newline) into g when its label is kept and not yet seen. */
static void parse_gpu_line(const char *line, const char *end, struct mlsup_gpu *g)
{
	const char *colon = memchr(line, ':', (size_t)(end - line));
	const char *kb = line, *ke = colon, *vb, *ve = end;
	size_t i, n;

	if (!colon)
		return;
	vb = colon + 1;
	trim(&kb, &ke);
	trim(&vb, &ve);
	for (i = 0; i < sizeof(gpu_fields) / sizeof(gpu_fields[0]); i++) {
		char *dst = (char *)g + gpu_fields[i].offset;

		if (strlen(gpu_fields[i].label) != (size_t)(ke - kb) || memcmp(gpu_fields[i].label, kb, (size_t)(ke - kb)))
			continue;
		if (dst[0])
			return;
		n = (size_t)(ve - vb) < gpu_fields[i].size ? (size_t)(ve - vb) : gpu_fields[i].size - 1;
		memcpy(dst, vb, n);
		dst[n] = '\0';
		return;
	}
}

int mlsup_parse_gpu_info(const char *text, size_t len, struct mlsup_gpu *out)
{
	const char *nul = memchr(text, '\0', len);
	const char *p = text, *end = nul ? nul : text + len, *nl;

	memset(out, 0, sizeof(*out));
	while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		parse_gpu_line(p, nl, out);
		p = nl + 1;
	}
	return out->uuid[0] ? 0 : -1;
}

static int by_bus(const void *a, const void *b)
{
	return strcmp(((const struct mlsup_gpu *)a)->bus, ((const struct mlsup_gpu *)b)->bus);
}

void mlsup_sort_gpus(struct mlsup_gpu *gpus, int n)
{
	if (n > 1)
		qsort(gpus, (size_t)n, sizeof(*gpus), by_bus);
}

bool mlsup_address_kept(bool up, bool loopback, bool ipv6, const unsigned char *bytes)
{
	if (!up || loopback)
		return false;
	return !ipv6 || !(bytes[0] == 0xfe && (bytes[1] & 0xc0) == 0x80);
}

bool mlsup_node_facts_add_address(struct mlsup_node_facts *f, const char *text)
{
	size_t n = strlen(text);
	int i;

	if (f->naddresses >= MLSUP_ADDRESS_MAX || n >= MLSUP_ADDRESS_LEN)
		return false;
	for (i = 0; i < f->naddresses; i++) {
		if (!strcmp(f->addresses[i], text))
			return false;
	}
	memcpy(f->addresses[f->naddresses++], text, n + 1);
	return true;
}

/* A line being built: text in buf, len bytes so far, cap the buffer's size. */
struct line {
	char *buf;
	size_t len, cap;
};

/* Appends the formatted text if it fits with keep bytes left over; the line is unchanged if not. */
static bool put(struct line *l, size_t keep, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len + keep >= l->cap)
		return false;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, l->cap - l->len - keep, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= l->cap - l->len - keep) {
		l->buf[l->len] = '\0';
		return false;
	}
	l->len += (size_t)n;
	return true;
}

#define GPUS_OPEN "],\"gpus\":["
#define NODE_TAIL "],\"time\":%.6f}\n"

/* Appends one GPU object (comma first unless first) if it fits with keep bytes left over. */
static bool put_gpu(struct line *l, size_t keep, const struct mlsup_gpu *g, bool first)
{
	char uuid[sizeof(g->uuid) * 6], bus[sizeof(g->bus) * 6], model[sizeof(g->model) * 6];

	mlsup_json_escape(uuid, sizeof(uuid), g->uuid, sizeof(g->uuid));
	mlsup_json_escape(bus, sizeof(bus), g->bus, sizeof(g->bus));
	mlsup_json_escape(model, sizeof(model), g->model, sizeof(g->model));
	return put(l, keep, "%s{\"uuid\":\"%s\",\"bus\":\"%s\",\"model\":\"%s\"}", first ? "" : ",", uuid, bus, model);
}

int mlsup_format_node(char *out, size_t outlen, uint32_t job, uint32_t step_id, const char *node,
		      const struct mlsup_node_facts *f, double time)
{
	struct line l = { out, 0, outlen };
	char name[256], addr[MLSUP_ADDRESS_LEN * 6];
	int tail = snprintf(NULL, 0, NODE_TAIL, time), i;
	size_t keep_tail = (size_t)(tail < 0 ? 0 : tail), keep = keep_tail + strlen(GPUS_OPEN);

	mlsup_json_escape(name, sizeof(name), node, sizeof(name));
	if (!put(&l, keep, "{\"v\":1,\"kind\":\"node\",\"job\":%u,\"step\":%ld,\"node\":\"%s\",\"addresses\":[", job,
		 mlsup_step_number(step_id), name))
		return -1;
	for (i = 0; i < f->naddresses && i < MLSUP_ADDRESS_MAX; i++) {
		mlsup_json_escape(addr, sizeof(addr), f->addresses[i], MLSUP_ADDRESS_LEN);
		if (!put(&l, keep, "%s\"%s\"", i ? "," : "", addr))
			break;
	}
	put(&l, keep_tail, GPUS_OPEN);
	for (i = 0; i < f->ngpus && i < MLSUP_GPU_MAX; i++) {
		if (!put_gpu(&l, keep_tail, &f->gpus[i], i == 0))
			break;
	}
	return put(&l, 0, NODE_TAIL, time) ? (int)l.len : -1;
}
