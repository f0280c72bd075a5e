#include "decide/evidence_ending.h"

#include <algorithm>
#include <array>

#include "decide/evidence_nodes.h"
#include "decide/exit_codes.h"

namespace mlsup::decide {
namespace {

// The classes whose output is read: the training's own failures (Slurm's OOM kill among them).
constexpr std::array kExplained{EndClass::Failed, EndClass::OutOfMemory};

// The classes of cause that say the software, not a machine, failed.
constexpr std::array<std::string_view, 1> kSoftware{"software"};

}  // namespace

bool explained_by_output(EndClass c) { return std::find(kExplained.begin(), kExplained.end(), c) != kExplained.end(); }

std::optional<Finding> explain_ending(EndClass c, std::span<const Rule> rules, std::string_view output) {
  if (!explained_by_output(c) || output.empty()) return std::nullopt;
  const auto lines = split_lines(output);
  return match(rules, lines);
}

bool stops(const Finding& f) { return f.action == RuleAction::Stop || f.action == RuleAction::StopAlert; }

bool clears_nodes(const Finding& f) {
  return f.action == RuleAction::RetryNoBlame || std::find(kSoftware.begin(), kSoftware.end(), f.cls) != kSoftware.end();
}

std::string finding_words(const Finding& f) {
  return "the output shows " + f.cls + " (evidence rule " + f.rule + ", line " + std::to_string(f.line_number) +
         " of its tail: \"" + f.line + "\")";
}

Decision stop_decision(const Finding& f) {
  return {Action::Stop, kNoRetry, 0,
          finding_words(f) + ": another attempt would fail the same way; fix the cause, then `mlsup resume`"};
}

FindingNodes finding_nodes(const Finding& f, const std::vector<std::string>& nodes,
                           const std::map<std::string, std::vector<std::string>>& names,
                           const std::vector<std::string>& rank_nodes) {
  if (clears_nodes(f)) return {FindingBlame::NoNode, ""};
  Placement where;
  for (const auto& n : rank_nodes)  // a rank placed on a node outside the job names none
    where.rank_nodes.push_back(std::find(nodes.begin(), nodes.end(), n) == nodes.end() ? "" : n);
  for (const auto& n : nodes) {
    const auto it = names.find(n);
    where.addresses[n] = it == names.end() ? std::vector<std::string>{} : it->second;
  }
  if (nodes.size() == 1) where.log_node = nodes.front();
  if (auto node = blamed_node(f, where)) return {FindingBlame::OneNode, std::move(*node)};
  if (stops(f)) return {FindingBlame::NoNode, ""};  // a stop names no node it cannot place
  return {FindingBlame::AsBefore, ""};
}

std::string weigh_hang_output(std::vector<NodeEvidence>& evidence, const Finding& f, const FindingNodes& named) {
  if (named.blame == FindingBlame::AsBefore) return "";
  for (auto& e : evidence) {
    e.waited_on.clear();
    e.heartbeat_stale_first = false;
    if (named.blame == FindingBlame::OneNode && e.name == named.node) e.named_by_output = finding_words(f) + ": " + e.name + " is kept out";
  }
  return named.blame == FindingBlame::OneNode ? named.node + " blamed alone" : "no node is held responsible (a probe's silence aside)";
}

}  // namespace mlsup::decide
