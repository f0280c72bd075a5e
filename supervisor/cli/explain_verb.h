#pragma once
// `mlsup explain [CONFIG] [--attempt N] [--rules FILE] [--log FILE] [--json]`: the evidence rules
// (decide/evidence_rules.h) replayed on an attempt's output, or on any log, offline: which rule matched,
// on which line, and what it decides.
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace mlsup::cli {

struct ExplainOptions {
  std::string config;          // "" = none: --log is needed, and only --rules and the shipped rules apply
  std::optional<int> attempt;  // default: the newest attempt
  std::string rules;           // a file of rules tried first instead of the config's; "" = the config's
  std::string log;             // a log to read instead of the attempt's output
  bool json = false;
};

// Adds the `explain` verb and its options to app, filling o; the verb's subcommand.
CLI::App* add_explain_verb(CLI::App& app, ExplainOptions& o);

// Carries out the verb: 0 (a rule matched or none did), 2 (neither CONFIG nor --log), 3 (a config or a rules
// file with errors, a log that cannot be read), 1 (the attempt's output cannot be found).
int explain_verb(const ExplainOptions& o);

}  // namespace mlsup::cli
