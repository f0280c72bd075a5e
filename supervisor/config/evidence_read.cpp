#include "config/evidence_read.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include "util/strings.h"

namespace mlsup::config {
namespace {

using Read = std::expected<EvidenceRuleSpec, RuleProblem>;

constexpr std::array<std::string_view, 5> kFields{"name", "pattern", "class", "blame", "action"};

// The list's words as strings, for join and did-you-mean.
std::vector<std::string> words(std::span<const std::string_view> list) { return {list.begin(), list.end()}; }

// The scalar under key, or a problem at where it is (or at the rule, when missing and required).
std::expected<std::string, RuleProblem> field(const YAML::Node& rule, std::string_view key, bool required,
                                              std::string fallback) {
  const YAML::Node value = rule[std::string(key)];
  if (!value) {
    if (required) return std::unexpected(RuleProblem{"the rule has no " + std::string(key) + ":", rule.Mark()});
    return fallback;
  }
  if (!value.IsScalar() || value.Scalar().empty())
    return std::unexpected(RuleProblem{std::string(key) + ": expected a single non-empty value", value.Mark()});
  return value.Scalar();
}

// A problem at the value of key when text is not one of list.
std::optional<RuleProblem> not_one_of(const YAML::Node& rule, std::string_view key, const std::string& text,
                                      std::span<const std::string_view> list) {
  if (std::find(list.begin(), list.end(), text) != list.end()) return std::nullopt;
  std::string message = std::string(key) + ": \"" + text + "\" is not one of: " + util::join(words(list), ", ");
  if (const auto near = util::did_you_mean(text, words(list)); !near.empty()) message += " (did you mean \"" + near + "\"?)";
  return RuleProblem{message, rule[std::string(key)].Mark()};
}

// A problem with the keys of rule: one that is no field.
std::optional<RuleProblem> unknown_key(const YAML::Node& rule) {
  for (const auto& item : rule) {
    const std::string key = item.first.Scalar();
    if (std::find(kFields.begin(), kFields.end(), key) != kFields.end()) continue;
    std::string message = "unknown key \"" + key + "\" (a rule has: name, pattern, class, blame, action)";
    if (const auto near = util::did_you_mean(key, words(kFields)); !near.empty()) message += " (did you mean \"" + near + "\"?)";
    return RuleProblem{message, item.first.Mark()};
  }
  return std::nullopt;
}

// A problem with the pattern: no regular expression, one that matches anything, or no group where the
// blame reads one.
std::optional<RuleProblem> bad_pattern(const YAML::Node& rule, const EvidenceRuleSpec& r) {
  try {
    const std::regex re(r.pattern, std::regex::ECMAScript);
    if (std::regex_search(std::string(), re))
      return RuleProblem{"pattern: matches an empty line, so it would match every line", rule["pattern"].Mark()};
    if (re.mark_count() == 0 && (r.blame == "node_in_line" || r.blame == "rank_in_line"))
      return RuleProblem{"blame: " + r.blame + " reads the pattern's first group ( ... ), and the pattern has none",
                         rule["blame"].Mark()};
  } catch (const std::regex_error& e) {
    return RuleProblem{"pattern: not a regular expression (ECMAScript): " + std::string(e.what()), rule["pattern"].Mark()};
  }
  return std::nullopt;
}

// One rule from its mapping.
Read read_rule(const YAML::Node& rule) {
  if (!rule.IsMap()) return std::unexpected(RuleProblem{"a rule is a mapping of name, pattern, class, blame, action", rule.Mark()});
  if (auto p = unknown_key(rule)) return std::unexpected(*p);
  EvidenceRuleSpec r;
  r.line = rule.Mark().line + 1;
  std::string* targets[] = {&r.name, &r.pattern, &r.cls, &r.blame, &r.action};
  for (std::size_t i = 0; i < kFields.size(); ++i) {
    auto v = field(rule, kFields[i], i < 3, *targets[i]);
    if (!v) return std::unexpected(v.error());
    *targets[i] = *v;
  }
  if (auto p = not_one_of(rule, "class", r.cls, kEvidenceClasses)) return std::unexpected(*p);
  if (auto p = not_one_of(rule, "blame", r.blame, kEvidenceBlames)) return std::unexpected(*p);
  if (auto p = not_one_of(rule, "action", r.action, kEvidenceActions)) return std::unexpected(*p);
  if (r.action == "retry_no_blame" && r.blame != "none")
    return std::unexpected(RuleProblem{"action: retry_no_blame blames no node, and blame is " + r.blame + "; drop one",
                                       rule["action"].Mark()});
  if (auto p = bad_pattern(rule, r)) return std::unexpected(*p);
  return r;
}

// Each rule of value, or each problem; a name given twice is one.
void read_all(const YAML::Node& value, std::vector<EvidenceRuleSpec>& out, std::vector<RuleProblem>& problems) {
  if (value.IsNull()) return;
  if (!value.IsSequence()) {
    problems.push_back({"expected a list of rules (each a mapping of name, pattern, class, blame, action)", value.Mark()});
    return;
  }
  for (const auto& item : value) {
    auto r = read_rule(item);
    if (!r) {
      problems.push_back(r.error());
      continue;
    }
    const bool twice = std::any_of(out.begin(), out.end(), [&](const auto& o) { return o.name == r->name; });
    if (twice) problems.push_back({"name: \"" + r->name + "\" names another rule already", item["name"].Mark()});
    else out.push_back(*r);
  }
}

}  // namespace

std::expected<std::vector<EvidenceRuleSpec>, RuleProblem> read_evidence_rules(const YAML::Node& value) {
  std::vector<EvidenceRuleSpec> out;
  std::vector<RuleProblem> problems;
  read_all(value, out, problems);
  if (!problems.empty()) return std::unexpected(problems.front());
  return out;
}

std::expected<std::vector<EvidenceRuleSpec>, Errors> load_evidence_rules_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::unexpected(Errors{{.file = path, .message = "cannot read the rules file"}});
  std::stringstream text;
  text << in.rdbuf();
  YAML::Node root;
  try {
    root = YAML::Load(text.str());
  } catch (const YAML::ParserException& e) {
    return std::unexpected(Errors{{.file = path, .line = e.mark.line + 1, .column = e.mark.column + 1,
                                   .message = "not valid YAML: " + e.msg}});
  }
  const bool in_config = root.IsMap() && root["evidence"] && root["evidence"].IsMap();
  const YAML::Node list = in_config ? root["evidence"]["rules"] : root;
  std::vector<EvidenceRuleSpec> out;
  std::vector<RuleProblem> problems;
  if (!list || (!list.IsSequence() && !in_config))
    problems.push_back({"expected a list of rules at the top, or a config's evidence.rules", root.Mark()});
  else read_all(list, out, problems);
  Errors errors;
  for (const auto& p : problems)
    errors.push_back({.file = path, .line = p.mark.line + 1, .column = p.mark.column + 1, .subject = "evidence.rules",
                      .message = p.message});
  if (!errors.empty()) return std::unexpected(errors);
  return out;
}

}  // namespace mlsup::config
