#pragma once
// Reads `evidence.rules` (a list of mappings: name, pattern, class, blame, action) from YAML, each
// problem with the line and column of the value at fault: a pattern that is no regular expression, a
// class, blame or action that is no known word, a pattern that matches every line, a rule blaming by a
// group its pattern lacks.
#include <expected>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "config/evidence_rule.h"
#include "config/load.h"

namespace mlsup::config {

struct RuleProblem {
  std::string message;
  YAML::Mark mark;
};

// The rules of value (a list, or null for none); the first problem found otherwise.
std::expected<std::vector<EvidenceRuleSpec>, RuleProblem> read_evidence_rules(const YAML::Node& value);

// The rules of a file of their own: a list at its top, or a config's `evidence.rules`; every problem
// as file:line:column.
std::expected<std::vector<EvidenceRuleSpec>, Errors> load_evidence_rules_file(const std::string& path);

}  // namespace mlsup::config
