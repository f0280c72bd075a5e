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

/* Escapes at most maxin bytes of s as the inside of a JSON string, stopping at a newline.
 * Returns the length written (out is always terminated). */
size_t mlsup_json_escape(char *out, size_t outlen, const char *s, size_t maxin);

#ifdef __cplusplus
}
#endif
#endif
