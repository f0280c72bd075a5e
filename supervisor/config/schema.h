#pragma once
// The table of every config key: its path, kind, default as the reference config writes it, and the
// Config field it fills. Loading, validation, `mlsup validate` and the reference-config test all read it.
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/config.h"

namespace mlsup::config {

enum class Kind {
  String,      // any scalar, kept as text
  Path,        // text; relative paths resolve against the config file's folder; "" = derived default
  Int,         // integer >= min
  OptionalInt, // integer >= min, or null for "not set"
  Long,        // 64-bit integer >= min
  Bool,
  Duration,    // "90s", "5m", "2h", "1d"
  DurationOrAuto,  // a Duration, or "auto"
  Interval,    // a Duration that may have milliseconds: "500ms"
  SlurmTime,   // "20:00:00", "1-00:00:00", "90"
  ArraySpec,   // "1-10%1"
  Choice,      // one of choices
  StringList,  // a sequence of scalars
  ChoiceList,  // a sequence of choices, each at most once
  StringMap,   // a mapping of identifier -> scalar
  Budget,      // "5/6h" (count per window) or "unlimited"
  EvidenceRules,  // a list of mappings: name, pattern, class, blame, action (config/evidence_read.h)
};

using Field = std::variant<std::string*, int*, std::optional<int>*, long long*, bool*, Seconds*, Millis*,
                           std::vector<std::string>*, std::map<std::string, std::string>*, Budget*, AutoSeconds*,
                           std::vector<EvidenceRuleSpec>*>;

struct KeySpec {
  std::string_view path;                   // "slurm.signal_lead"
  Kind kind;
  Field (*field)(Config&);                 // where the value goes
  std::string_view doc;                    // one line, used by `mlsup validate --keys`
  long long min = 0;                       // Int, OptionalInt, Long
  std::vector<std::string_view> choices{};  // Choice, ChoiceList
};

// Every key, in the order the reference config shows them.
std::span<const KeySpec> schema();

// The spec for a full dotted path, or nullptr.
const KeySpec* find_key(std::string_view path);

// True when path is a group of keys (a YAML mapping of its own), such as "slurm" or "policy.budgets".
bool is_group(std::string_view path);

// The names directly under a group ("" is the top level), for did-you-mean.
std::vector<std::string> names_under(std::string_view group);

// A Config with every default, before paths are resolved.
Config defaults();

// The failure classes that have restart budgets.
std::span<const std::string_view> budget_classes();

}  // namespace mlsup::config
