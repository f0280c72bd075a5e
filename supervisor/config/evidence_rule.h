#pragma once
// A user's evidence rule as the config writes it (`evidence.rules`), and the words a rule may use:
// its class, whom it blames, what follows. decide/evidence_rules.h turns rules into matchers. Plain values.
#include <array>
#include <string>
#include <string_view>

namespace mlsup::config {

// What a match says caused the failure. "software" and the other classes that name no machine blame no node.
inline constexpr std::array<std::string_view, 10> kEvidenceClasses{
    "cuda_oom",  "host_oom",    "gpu_hardware", "gpu_fault", "network",
    "nccl_timeout", "nccl_error", "disk_full",  "shared_memory", "software"};

// Whom a match blames: nobody, the node whose address or host name the pattern's first group holds, the
// node of the rank that group holds, or the node whose own log holds the line.
inline constexpr std::array<std::string_view, 4> kEvidenceBlames{"none", "node_in_line", "rank_in_line", "node_of_log"};

// What follows a match: retry (excluding the node blamed), retry blaming no node whatever else points at
// one, stop without a change, stop and alert a person.
inline constexpr std::array<std::string_view, 4> kEvidenceActions{"retry", "retry_no_blame", "stop", "stop_alert"};

struct EvidenceRuleSpec {
  std::string name;
  std::string pattern;  // an ECMAScript regular expression, searched in each line
  std::string cls;      // one of kEvidenceClasses
  std::string blame = "none";
  std::string action = "retry";
  int line = 0;  // where the rule is written (1-based), for messages
  bool operator==(const EvidenceRuleSpec&) const = default;
};

}  // namespace mlsup::config
