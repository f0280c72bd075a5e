#pragma once
// Reads `scontrol -o show job` / `show node` output: one record per line of Key=Value fields.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "slurm_model/types.h"

namespace mlsup::slurm {

using Record = std::map<std::string, std::string>;

// Splits one-line records into fields; a word without "Key=" belongs to the previous value.
std::vector<Record> parse_records(std::string_view text);

// A Job from a `scontrol -o show job` record.
Job job_from_record(const Record& r);

// A Node from a `scontrol -o show node` record.
Node node_from_record(const Record& r);

}  // namespace mlsup::slurm
