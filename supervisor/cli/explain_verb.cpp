#include "cli/explain_verb.h"

#include <expected>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/exit_codes.h"
#include "cli/logs_verb.h"
#include "config/evidence_read.h"
#include "config/load.h"
#include "decide/evidence_rules.h"
#include "store/read_campaign.h"
#include "util/files.h"
#include "util/json.h"

namespace mlsup::cli {
namespace {

using decide::RuleAction;

// What each action does, for people (in RuleAction order).
constexpr std::string_view kMeaning[] = {
    "resubmit, excluding the node blamed",
    "resubmit, blaming no node whatever else points at one",
    "stop the campaign, changing nothing",
    "stop the campaign and alert",
};

// What the finding's action does, for people.
std::string meaning(const decide::Finding& f) {
  if (f.action == RuleAction::Retry && f.blame == decide::Blame::None) return "resubmit";
  return std::string(kMeaning[static_cast<std::size_t>(f.action)]);
}

// The rules to try: the rules file's or the config's, then the shipped ones; nullopt after telling why not.
std::optional<std::vector<decide::Rule>> rules_of(const ExplainOptions& o, const config::Config* c) {
  if (o.rules.empty()) return decide::all_rules(c ? c->evidence.rules : std::vector<config::EvidenceRuleSpec>{});
  const auto specs = config::load_evidence_rules_file(o.rules);
  if (!specs) {
    for (const auto& e : specs.error()) std::cerr << e.str() << "\n";
    return std::nullopt;
  }
  return decide::all_rules(*specs);
}

// The finding as JSON (null fields left out when nothing matched).
nlohmann::json as_json(const std::optional<decide::Finding>& f, const std::string& log, std::size_t lines,
                       std::optional<int> attempt) {
  nlohmann::json j{{"log", log}, {"lines", lines}, {"matched", f.has_value()}};
  if (attempt) j["attempt"] = *attempt;
  if (!f) return j;
  j.update({{"rule", f->rule}, {"user_rule", f->user}, {"line_number", f->line_number}, {"line", f->line},
            {"class", f->cls}, {"blame", decide::blame_name(f->blame)}, {"captured", f->captured},
            {"action", decide::rule_action_name(f->action)}});
  return j;
}

// The finding for people.
void print(const std::optional<decide::Finding>& f, const std::string& log, std::size_t lines) {
  if (!f) {
    std::cout << "no rule matches any of the " << lines << " lines of " << log
              << ": the ending is classed by its exit and Slurm's word alone\n";
    return;
  }
  std::cout << "rule:   " << f->rule << (f->user ? " (yours)" : " (shipped)") << "\n"
            << "line " << f->line_number << " of " << log << ":\n  " << f->line << "\n"
            << "class:  " << f->cls << "\n"
            << "blame:  " << decide::blame_name(f->blame)
            << (f->captured.empty() ? "" : " (the pattern's first group: " + f->captured + ")") << "\n"
            << "action: " << decide::rule_action_name(f->action) << ": " << meaning(*f) << "\n";
}

// The keys of the `ended` record that tell the evidence rules' finding at the ending.
constexpr const char* kAtEnding[] = {"evidence_rule", "evidence_class", "evidence_action", "evidence_line",
                                     "evidence_quote", "no_node_blamed"};

// What the journal says the supervisor found at attempt's ending ({} when no rule explained it);
// nullopt when it has not ended.
std::optional<nlohmann::json> at_ending(const config::Config& c, int attempt) {
  for (const auto& r : store::read_journal(c).records) {
    const auto number = r.data.find("attempt");
    if (r.type != "ended" || number == r.data.end() || !number->is_number_integer() || number->get<int>() != attempt) continue;
    nlohmann::json found = nlohmann::json::object();
    for (const char* key : kAtEnding)
      if (r.data.contains(key)) found[key] = r.data[key];
    return found;
  }
  return std::nullopt;
}

// The journal's word on the ending, for people.
void print_at_ending(const nlohmann::json& found) {
  if (found.empty()) {
    std::cout << "at its ending: no rule explained it (or it was no failure); it was judged by its exit and Slurm's word\n";
    return;
  }
  std::cout << "at its ending: rule " << util::json_text(found.value("evidence_rule", nlohmann::json(""))) << ", line "
            << util::json_text(found.value("evidence_line", nlohmann::json(0))) << " of the output's tail read: "
            << util::json_text(found.value("evidence_action", nlohmann::json(""))) << "\n";
}

// The log to read and the attempt it is of; nullopt with the exit code after telling why not.
std::expected<std::pair<std::string, std::optional<int>>, int> log_of(const ExplainOptions& o, const config::Config* c) {
  if (!o.log.empty()) return std::pair{o.log, std::optional<int>()};
  const auto out = attempt_output(*c, o.attempt);
  if (!out) {
    std::cerr << "mlsup explain: " << out.error().message << "\n";
    return std::unexpected(out.error().code);
  }
  std::cerr << "mlsup explain: attempt " << out->attempt << "'s output: " << out->path << " (from " << out->source << ")\n";
  return std::pair{out->path, std::optional<int>(out->attempt)};
}

}  // namespace

CLI::App* add_explain_verb(CLI::App& app, ExplainOptions& o) {
  auto* cmd = app.add_subcommand(
      "explain", "replay the evidence rules on an attempt's output, or on any log (--log), offline: which rule matched, "
                 "on which line, and what it decides; --rules tries your rules before the shipped ones");
  cmd->add_option("CONFIG", o.config, "campaign config (YAML) or SET:RUN: its evidence.rules and its attempts' output");
  cmd->add_option("--attempt", o.attempt, "the attempt whose output to read (default: the newest)")->check(CLI::PositiveNumber);
  cmd->add_option("--rules", o.rules,
                  "a YAML file of rules (a list of name, pattern, class, blame, action, or a config's evidence.rules) "
                  "tried before the shipped ones, instead of the config's");
  cmd->add_option("--log", o.log, "a log file to read instead of the attempt's output");
  cmd->add_flag("--json", o.json, "print one JSON object");
  return cmd;
}

int explain_verb(const ExplainOptions& o) {
  if (o.config.empty() && o.log.empty()) {
    std::cerr << "mlsup explain: name a campaign config, or a log with --log\n";
    return kUsage;
  }
  std::optional<config::Config> c;
  if (!o.config.empty()) {
    auto loaded = config::load_config_file(o.config, {.template_file = false});
    if (!loaded) {
      for (const auto& e : loaded.error()) std::cerr << e.str() << "\n";
      return kBadInput;
    }
    c = std::move(*loaded);
  }
  const auto rules = rules_of(o, c ? &*c : nullptr);
  if (!rules) return kBadInput;
  const auto log = log_of(o, c ? &*c : nullptr);
  if (!log) return log.error();
  const auto text = util::read_file(log->first);
  if (!text) {
    std::cerr << "mlsup explain: cannot read " << log->first << "\n";
    return kBadInput;
  }
  const auto lines = decide::split_lines(*text);
  const auto found = decide::match(*rules, lines);
  const auto recorded = c && log->second ? at_ending(*c, *log->second) : std::nullopt;
  if (o.json) {
    auto j = as_json(found, log->first, lines.size(), log->second);
    if (recorded) j["at_ending"] = *recorded;
    std::cout << util::dump_json(j) << "\n";
    return kOk;
  }
  print(found, log->first, lines.size());
  if (recorded) print_at_ending(*recorded);
  return kOk;
}

}  // namespace mlsup::cli
