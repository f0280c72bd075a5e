#pragma once
// What an attempt's output says about its failure: a table of rules, each a pattern searched in every
// line and what its match means (a class, whom it blames, what follows). The shipped table covers the
// common failures of GPU training (CUDA, NCCL, Gloo, the OOM killer, full disks); a config's own rules
// (`evidence.rules`) are tried first. Pure: lines in, a finding out.
#include <cstddef>
#include <optional>
#include <regex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/evidence_rule.h"

namespace mlsup::decide {

// Whom a match blames (config::kEvidenceBlames names them, in this order).
enum class Blame { None, NodeInLine, RankInLine, NodeOfLog };
// What follows a match (config::kEvidenceActions names them, in this order).
enum class RuleAction { Retry, RetryNoBlame, Stop, StopAlert };
// Which rule wins when several match: a user's first (in the order written), then machine faults (in
// the table's order), then specific causes (the earliest line), then generic ones (in the table's order).
enum class Precedence { User, Machine, Cause, Generic };

struct Rule {
  std::string name;
  std::regex pattern;        // ECMAScript, searched in each line
  std::string needle;        // a literal the line must hold before the pattern is tried; "" = none
  std::string cls;           // one of config::kEvidenceClasses
  Blame blame = Blame::None;
  RuleAction action = RuleAction::Retry;
  Precedence precedence = Precedence::User;
};

// What matched, where, and what it means: what the engine decides and the events and the report tell.
struct Finding {
  std::string rule;              // the rule's name
  bool user = false;             // one of the config's rules
  std::string cls;
  Blame blame = Blame::None;
  RuleAction action = RuleAction::Retry;
  std::size_t line_number = 0;   // 1-based, in the lines given
  std::string line;              // the line, trimmed, at most kQuoteChars
  std::string captured;          // the pattern's first group: a host or address, a rank; "" when none
};

inline constexpr std::size_t kQuoteChars = 300;
inline constexpr std::size_t kLineChars = 4096;  // a line's first bytes that patterns see (a regex's depth is bounded)

// The name of a blame or an action, as the config writes it.
std::string_view blame_name(Blame b);
std::string_view rule_action_name(RuleAction a);
// The action a name stands for (as rule_action_name gives it); retry for no action's name.
RuleAction rule_action_named(std::string_view name);

// The shipped rules, in their order.
const std::vector<Rule>& shipped_rules();

// A config's rules as matchers, in their order (their patterns were checked when the config loaded; one
// that does not compile is left out).
std::vector<Rule> user_rules(std::span<const config::EvidenceRuleSpec> specs);

// The user's rules followed by the shipped ones.
std::vector<Rule> all_rules(std::span<const config::EvidenceRuleSpec> specs);

// The finding of the winning rule over lines (see Precedence); nullopt when no rule matches any line.
std::optional<Finding> match(std::span<const Rule> rules, std::span<const std::string> lines);

// text split into lines ('\n', a trailing '\r' dropped), for match().
std::vector<std::string> split_lines(std::string_view text);

}  // namespace mlsup::decide
