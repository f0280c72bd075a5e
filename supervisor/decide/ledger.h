#pragma once
// The exclusion ledger: nodes kept out of new jobs, each with its reason and expiry, capped so
// that the job stays schedulable. Pure: entries come from the journal.
#include <string>
#include <vector>

namespace mlsup::decide {

struct Exclusion {
  std::string node;
  std::string reason;
  double since = 0;  // unix seconds
  double until = 0;  // expiry
  std::vector<std::string> gpus;  // the UUIDs of the GPUs it holds responsible ([] = none known): the exclusion follows them
  std::string ended_by;           // what ended it before its time, in words ("" = nothing did)
};

// The nodes to pass as --exclude at now: unexpired entries, the newest first when more than cap
// (cap < 0: no limit), one entry per node.
std::vector<std::string> excluded_nodes(const std::vector<Exclusion>& ledger, double now, int cap);

// An exclusion's reason for people, with the GPUs it carries and how it ended early where it has them.
std::string exclusion_words(const std::string& reason, const std::vector<std::string>& gpus, const std::string& ended_by);

// The most nodes that may be excluded: the configured cap, or (0) as many as leave the job's node
// count among the usable nodes of the partition.
int exclusion_cap(int configured, int usable_nodes, int job_nodes);

}  // namespace mlsup::decide
