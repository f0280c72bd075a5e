#ifndef MLSUP_PLUGIN_FORMAT_H
#define MLSUP_PLUGIN_FORMAT_H
/* The record lines and the names derived from Slurm's facts. Pure: no Slurm, no I/O. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MLSUP_LINE_MAX 1024
#define MLSUP_DETAIL_MAX 200

#define MLSUP_NODE_LINE_MAX 8192 /* the "node" record's line */
#define MLSUP_ADDRESS_MAX 32     /* addresses in it, at most */
#define MLSUP_ADDRESS_LEN 46     /* INET6_ADDRSTRLEN */
#define MLSUP_GPU_MAX 16         /* GPUs in it, at most */
#define MLSUP_GPU_INFO_MAX 4096  /* bytes of a GPU's information file read */

/* One GPU as its driver describes it (/proc/driver/nvidia/gpus/<bus>/information). */
struct mlsup_gpu {
	char uuid[96];   /* "GPU-5f1e2d3c-..." */
	char bus[32];    /* "0000:07:00.0" */
	char model[128]; /* "NVIDIA H100 80GB HBM3" */
};

/* What the "node" record tells of a node: its network addresses and its GPUs. */
struct mlsup_node_facts {
	char addresses[MLSUP_ADDRESS_MAX][MLSUP_ADDRESS_LEN];
	int naddresses;
	struct mlsup_gpu gpus[MLSUP_GPU_MAX];
	int ngpus;
};

/* Slurm's special step ids (slurm.h) written as these numbers: batch script -1, extern -2,
 * interactive -3, any other special id -4; ordinary steps as themselves. */
long mlsup_step_number(uint32_t step_id);

/* Decodes a wait status into an exit code and a signal (one of them 0). */
void mlsup_decode_status(int status, int *exit_code, int *signal);

/* Copies a node name into out (size outlen) as a safe file name: letters, digits, '.', '_', '-'
 * kept, anything else '_'; "" and names starting with '.' get a leading '_'. */
void mlsup_node_file_name(const char *node, char *out, size_t outlen);

/* Writes the task-exit line (with the trailing newline) into out. Returns its length, or -1 if
 * it does not fit. */
int mlsup_format_task_exit(char *out, size_t outlen, uint32_t job, uint32_t step_id, const char *node,
			   uint32_t rank, int local_rank, int status, double time);

/* Writes the health line; detail is the check's first output line, escaped. A detail cut to fit
 * (MLSUP_DETAIL_MAX bytes, or the room left in outlen) is marked "detail_truncated":true with its
 * full length in "detail_bytes": a long detail never costs the record. */
int mlsup_format_health(char *out, size_t outlen, uint32_t job, uint32_t step_id, const char *node, bool ok,
			int exit_code, const char *detail, double time);

/* The per-task heartbeat path: "<base>.d/<node file name>.<rank>". Returns -1 if it does not fit. */
int mlsup_heartbeat_path(char *out, size_t outlen, const char *base, const char *node, uint32_t rank);

/* The directory of the per-task heartbeats: "<base>.d". */
int mlsup_heartbeat_dir(char *out, size_t outlen, const char *base);

/* Parses the text (len bytes, not necessarily terminated) of a GPU's information file: the values of
 * its "Model", "GPU UUID" and "Bus Location" lines (after the first ':', spaces and tabs trimmed; a
 * line may end "\r\n"; a last line without its newline may be cut and is ignored; values too long
 * for their field are cut). Returns 0, or -1 when no UUID was found. */
int mlsup_parse_gpu_info(const char *text, size_t len, struct mlsup_gpu *out);

/* Orders GPUs by bus. */
void mlsup_sort_gpus(struct mlsup_gpu *gpus, int n);

/* Whether an interface address belongs in the "node" record: the interface is up and not loopback,
 * and an IPv6 address (ipv6; bytes: its 16 bytes) is not link-local (fe80::/10). */
bool mlsup_address_kept(bool up, bool loopback, bool ipv6, const unsigned char *bytes);

/* Adds an address (text) to f unless it is there already or f holds MLSUP_ADDRESS_MAX. Returns
 * whether it was added. */
bool mlsup_node_facts_add_address(struct mlsup_node_facts *f, const char *text);

/* Writes the "node" line: the addresses and GPUs of f (at most the caps), escaped. Entries that
 * would not fit in outlen are left out, the line stays whole. Returns its length, or -1 if not
 * even the line without entries fits. */
int mlsup_format_node(char *out, size_t outlen, uint32_t job, uint32_t step_id, const char *node,
		      const struct mlsup_node_facts *f, double time);

/* Escapes at most maxin bytes of s as the inside of a JSON string, stopping at a newline.
 * Returns the length written (out is always terminated). */
size_t mlsup_json_escape(char *out, size_t outlen, const char *s, size_t maxin);

#ifdef __cplusplus
}
#endif
#endif
