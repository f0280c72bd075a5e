#ifndef MLSUP_PLUGIN_NODE_FACTS_H
#define MLSUP_PLUGIN_NODE_FACTS_H
/* Gathers what the "node" record tells: the node's network addresses and its GPUs. */
#include <stddef.h>

#include "format.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills f: the kept addresses of getifaddrs (mlsup_address_kept, no duplicates, in its order)
 * and the GPUs of gpu_dir ("" = none; one folder per GPU holding "information"; those with a
 * UUID, sorted by bus, at most MLSUP_GPU_MAX). A missing gpu_dir means no GPUs. Returns 0, or -1
 * with what could not be read in msg (f then holds what could). */
int mlsup_node_facts_gather(const char *gpu_dir, struct mlsup_node_facts *f, char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif
#endif
