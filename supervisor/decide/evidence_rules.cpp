#include "decide/evidence_rules.h"

#include <algorithm>

#include "util/strings.h"

namespace mlsup::decide {
namespace {

// The word's index in list, which follows the enum's order; 0 for an unknown word (checked at load).
template <typename E, std::size_t N>
E from_word(const std::array<std::string_view, N>& list, std::string_view word) {
  const auto at = std::find(list.begin(), list.end(), word);
  return static_cast<E>(at == list.end() ? 0 : at - list.begin());
}

// The first line (from 0) where rule matches, with the match; nullopt when none does.
std::optional<std::pair<std::size_t, std::smatch>> first_line(const Rule& rule, std::span<const std::string> lines) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!rule.needle.empty() && lines[i].find(rule.needle) == std::string::npos) continue;
    std::smatch m;
    if (std::regex_search(lines[i].begin(), lines[i].begin() + static_cast<long>(std::min(lines[i].size(), kLineChars)),
                          m, rule.pattern))
      return std::pair{i, m};
  }
  return std::nullopt;
}

// The match's first group that took part ("" when none did).
std::string first_group(const std::smatch& m) {
  for (std::size_t g = 1; g < m.size(); ++g)
    if (m[g].matched) return m[g].str();
  return "";
}

// What rule's match on line i says.
Finding finding(const Rule& rule, const std::string& line, std::size_t i, const std::smatch& m) {
  std::string quoted(util::trim(line));
  if (quoted.size() > kQuoteChars) quoted = quoted.substr(0, kQuoteChars - 3) + "...";
  return {rule.name, rule.precedence == Precedence::User, rule.cls, rule.blame, rule.action, i + 1, quoted, first_group(m)};
}

// True when a match of a rule of this precedence on line a beats one on line b of the same precedence.
bool earlier_wins(Precedence p) { return p == Precedence::Cause; }

}  // namespace

std::string_view blame_name(Blame b) { return config::kEvidenceBlames[static_cast<std::size_t>(b)]; }

std::string_view rule_action_name(RuleAction a) { return config::kEvidenceActions[static_cast<std::size_t>(a)]; }

RuleAction rule_action_named(std::string_view name) { return from_word<RuleAction>(config::kEvidenceActions, name); }

std::vector<Rule> user_rules(std::span<const config::EvidenceRuleSpec> specs) {
  std::vector<Rule> out;
  for (const auto& s : specs) {
    try {
      out.push_back({s.name, std::regex(s.pattern, std::regex::ECMAScript), "", s.cls,
                     from_word<Blame>(config::kEvidenceBlames, s.blame),
                     rule_action_named(s.action), Precedence::User});
    } catch (const std::regex_error&) {
    }
  }
  return out;
}

std::vector<Rule> all_rules(std::span<const config::EvidenceRuleSpec> specs) {
  auto out = user_rules(specs);
  const auto& shipped = shipped_rules();
  out.insert(out.end(), shipped.begin(), shipped.end());
  return out;
}

std::optional<Finding> match(std::span<const Rule> rules, std::span<const std::string> lines) {
  std::optional<Finding> best;
  Precedence best_at = Precedence::Generic;
  for (const auto& rule : rules) {
    if (best && (rule.precedence > best_at || (rule.precedence == best_at && !earlier_wins(best_at)))) continue;
    const auto hit = first_line(rule, lines);
    if (!hit) continue;
    if (best && rule.precedence == best_at && hit->first + 1 >= best->line_number) continue;
    best = finding(rule, lines[hit->first], hit->first, hit->second);
    best_at = rule.precedence;
  }
  return best;
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const auto end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.emplace_back(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return out;
}

}  // namespace mlsup::decide
