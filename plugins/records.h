#ifndef MLSUP_PLUGIN_RECORDS_H
#define MLSUP_PLUGIN_RECORDS_H
/* Appends record lines to $STATE_DIR/nodes/<job>/<node>.jsonl as the job's user. */
#include <stddef.h>
#include <stdint.h>

#include "asuser.h"

/* Appends one line (one write(2), O_APPEND) as user u. Directories are created with mkdirat
 * and opened with O_NOFOLLOW, the file with O_NOFOLLOW: nothing planted there is followed.
 * Returns 0, or -1 with the reason in msg. */
int mlsup_record_append(const struct mlsup_user *u, const char *state_dir, uint32_t job, const char *node,
			const char *line, size_t len, char *msg, size_t msglen);

#endif
