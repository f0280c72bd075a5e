#pragma once
// The evidence rules applied to an attempt's ending: which failures its output explains, and what the
// winning rule's finding changes: a stop instead of a retry, no node blamed, or the one node its line
// names. Pure: the output's tail, the job's nodes and the rules in; a finding and its bearing out.
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "decide/blame.h"
#include "decide/classify.h"
#include "decide/evidence_rules.h"
#include "decide/policy.h"

namespace mlsup::decide {

// True for the endings whose output is read for evidence: the training's failures, not a time limit,
// a preemption, a cancel, a completion or a hang (judged when it was cancelled).
bool explained_by_output(EndClass c);

// The finding that explains an ending of class c from output (the tail of the job's output that was
// read); nullopt when c is no such failure or no rule matches.
std::optional<Finding> explain_ending(EndClass c, std::span<const Rule> rules, std::string_view output);

// True when a finding stops the campaign instead of a retry (actions stop and stop_alert).
bool stops(const Finding& f);

// True when a finding holds no node responsible: retry_no_blame, or a software cause.
bool clears_nodes(const Finding& f);

// The decision of a finding that stops: the do-not-retry code, the rule and its line in the reason.
Decision stop_decision(const Finding& f);

// What a finding does to the blame: the nodes as without it (Slurm's view, the first-evidence rule),
// none, or the one node its line or log names.
enum class FindingBlame { AsBefore, NoNode, OneNode };
struct FindingNodes {
  FindingBlame blame = FindingBlame::AsBefore;
  std::string node;  // for OneNode
};

// The blame of finding f on a job that ran on nodes (Slurm's names, in order). A host in the line is
// known by a node's name, its short form, or one of its other names in names (node -> its NodeAddr and
// NodeHostname as Slurm gives them; a name two nodes share names neither); a rank through rank_nodes
// (rank -> node; [] when not known). A node's own log is the job's output only for a one-node job.
FindingNodes finding_nodes(const Finding& f, const std::vector<std::string>& nodes,
                           const std::map<std::string, std::vector<std::string>>& names = {},
                           const std::vector<std::string>& rank_nodes = {});

// One sentence that names the rule and quotes its line, for reasons and exclusions.
std::string finding_words(const Finding& f);

// A hang's evidence (hang_evidence()) weighed with the finding f over its output at the hang, whose
// blame is named: a line that names one of its nodes blames that node alone in place of the stacks and
// the heartbeats (a rank that died of a connection failure leaves the others waiting on it, not on the
// node it could not reach); a software cause clears them; a probe's silence stands either way. What
// it decided, in words ("" when it changed nothing).
std::string weigh_hang_output(std::vector<NodeEvidence>& evidence, const Finding& f, const FindingNodes& named);

}  // namespace mlsup::decide
