#include "config/convert.h"

#include <algorithm>
#include <charconv>
#include <regex>

#include "config/evidence_read.h"
#include "config/slurm_time.h"
#include "util/strings.h"

namespace mlsup::config {
namespace {

using Converted = std::expected<void, std::string>;

std::string describe(const YAML::Node& node) {
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  if (node.IsNull()) return "nothing";
  return "\"" + node.Scalar() + "\"";
}

std::expected<std::string, std::string> scalar(const YAML::Node& node, std::string_view want) {
  if (node.IsScalar()) return node.Scalar();
  return std::unexpected("expected " + std::string(want) + ", got " + describe(node));
}

std::expected<long long, std::string> integer(const YAML::Node& node, long long min) {
  auto text = scalar(node, "an integer");
  if (!text) return std::unexpected(text.error());
  long long v = 0;
  const auto* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, v);
  if (text->empty() || ec != std::errc() || ptr != end) return std::unexpected("\"" + *text + "\" is not an integer");
  if (v < min) return std::unexpected(std::to_string(v) + " is too small (the least is " + std::to_string(min) + ")");
  return v;
}

std::expected<int, std::string> small_integer(const YAML::Node& node, long long min) {
  auto v = integer(node, min);
  if (!v) return std::unexpected(v.error());
  if (*v > 1'000'000'000) return std::unexpected(std::to_string(*v) + " is too large");
  return static_cast<int>(*v);
}

std::expected<Seconds, std::string> duration(const YAML::Node& node) {
  auto text = scalar(node, "a duration such as \"5m\"");
  if (!text) return std::unexpected(text.error());
  return parse_duration(*text);
}

std::expected<Millis, std::string> interval(const YAML::Node& node) {
  auto text = scalar(node, "a duration such as \"500ms\" or \"2s\"");
  if (!text) return std::unexpected(text.error());
  return parse_interval(*text);
}

std::expected<bool, std::string> boolean(const YAML::Node& node) {
  auto text = scalar(node, "true or false");
  if (!text) return std::unexpected(text.error());
  static const std::vector<std::pair<std::string, bool>> words = {
      {"true", true}, {"yes", true}, {"on", true}, {"false", false}, {"no", false}, {"off", false}};
  std::string lower = *text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const auto& [word, value] : words)
    if (word == lower) return value;
  return std::unexpected("\"" + *text + "\" is not true or false");
}

std::expected<Budget, std::string> budget(const YAML::Node& node) {
  auto text = scalar(node, "a budget such as \"5/6h\"");
  if (!text) return std::unexpected(text.error());
  if (*text == "unlimited") return Budget{.count = -1, .window = Seconds(0)};
  const auto slash = text->find('/');
  const std::string bad = "\"" + *text + "\" is not a budget (write restarts/window such as \"5/6h\", or \"unlimited\")";
  if (slash == std::string::npos) return std::unexpected(bad);
  int count = 0;
  const auto [ptr, ec] = std::from_chars(text->data(), text->data() + slash, count);
  if (slash == 0 || ec != std::errc() || ptr != text->data() + slash || count < 0) return std::unexpected(bad);
  const auto window = parse_duration(std::string_view(*text).substr(slash + 1));
  if (!window) return std::unexpected(bad);
  if (window->count() == 0) return std::unexpected("\"" + *text + "\" has a zero window");
  return Budget{.count = count, .window = *window};
}

std::expected<std::map<std::string, std::string>, std::string> string_map(const YAML::Node& node) {
  if (!node.IsMap() && !node.IsNull()) return std::unexpected("expected a mapping of names to values, got " + describe(node));
  static const std::regex identifier("[A-Za-z_][A-Za-z0-9_]*");
  std::map<std::string, std::string> out;
  for (const auto& item : node) {
    const std::string key = item.first.Scalar();
    if (!std::regex_match(key, identifier))
      return std::unexpected("\"" + key + "\" is not a variable name (letters, digits and '_', not starting with a digit)");
    if (item.second.IsNull()) {
      out[key] = "";
      continue;
    }
    auto value = scalar(item.second, "a single value for \"" + key + "\"");
    if (!value) return std::unexpected(value.error());
    out[key] = *value;
  }
  return out;
}

std::expected<std::vector<std::string>, std::string> string_list(const YAML::Node& node) {
  if (node.IsNull()) return std::vector<std::string>{};
  if (!node.IsSequence()) return std::unexpected("expected a list such as [\"--qos=high\"], got " + describe(node));
  std::vector<std::string> out;
  for (const auto& item : node) {
    auto value = scalar(item, "a single value in the list");
    if (!value) return std::unexpected(value.error());
    out.push_back(*value);
  }
  return out;
}

std::expected<std::string, std::string> choice(const YAML::Node& node, const KeySpec& spec) {
  auto text = scalar(node, "one of the choices");
  if (!text) return std::unexpected(text.error());
  std::vector<std::string> choices(spec.choices.begin(), spec.choices.end());
  if (std::find(choices.begin(), choices.end(), *text) != choices.end()) return *text;
  std::string message = "\"" + *text + "\" is not one of: " + util::join(choices, ", ");
  if (const auto near = util::did_you_mean(*text, choices); !near.empty()) message += " (did you mean \"" + near + "\"?)";
  return std::unexpected(message);
}

// A list of choices, each at most once; the first that is not one names itself.
std::expected<std::vector<std::string>, std::string> choice_list(const YAML::Node& node, const KeySpec& spec) {
  auto items = string_list(node);
  if (!items) return std::unexpected(items.error());
  std::vector<std::string> choices(spec.choices.begin(), spec.choices.end());
  for (std::size_t i = 0; i < items->size(); ++i) {
    const std::string& item = (*items)[i];
    if (std::find(items->begin(), items->begin() + static_cast<long>(i), item) != items->begin() + static_cast<long>(i))
      return std::unexpected("\"" + item + "\" is listed twice");
    if (std::find(choices.begin(), choices.end(), item) != choices.end()) continue;
    std::string message = "\"" + item + "\" is not one of: " + util::join(choices, ", ");
    if (const auto near = util::did_you_mean(item, choices); !near.empty()) message += " (did you mean \"" + near + "\"?)";
    return std::unexpected(message);
  }
  return items;
}

// Checks text with a parser whose error is already a full message; "" passes (unset).
template <typename Parse>
std::expected<std::string, std::string> checked_text(const YAML::Node& node, std::string_view want, Parse parse) {
  auto text = scalar(node, want);
  if (!text) return std::unexpected(text.error());
  if (text->empty()) return *text;
  if (auto parsed = parse(*text); !parsed) return std::unexpected(parsed.error());
  return *text;
}

template <typename T, typename U>
Converted store(std::expected<U, std::string> value, T* target) {
  if (!value) return std::unexpected(value.error());
  *target = static_cast<T>(*value);
  return {};
}

}  // namespace

YAML::Mark error_mark(const KeySpec& spec, const YAML::Node& value) {
  if (spec.kind == Kind::EvidenceRules) {
    const auto rules = read_evidence_rules(value);
    return rules ? value.Mark() : rules.error().mark;
  }
  if (spec.kind != Kind::ChoiceList || !value.IsSequence()) return value.Mark();
  std::vector<std::string> seen;
  for (const auto& item : value) {
    const std::string name = item.IsScalar() ? item.Scalar() : "";
    const bool known = std::find(spec.choices.begin(), spec.choices.end(), name) != spec.choices.end();
    if (!item.IsScalar() || !known || std::find(seen.begin(), seen.end(), name) != seen.end()) return item.Mark();
    seen.push_back(name);
  }
  return value.Mark();
}

Converted convert(const KeySpec& spec, const YAML::Node& value, Config& config) {
  const Field field = spec.field(config);
  switch (spec.kind) {
    case Kind::String:
    case Kind::Path:
      return store(scalar(value, "a single value"), std::get<std::string*>(field));
    case Kind::Int:
      return store(small_integer(value, spec.min), std::get<int*>(field));
    case Kind::OptionalInt:
      if (value.IsNull()) {
        *std::get<std::optional<int>*>(field) = std::nullopt;
        return {};
      }
      return store(small_integer(value, spec.min), std::get<std::optional<int>*>(field));
    case Kind::Long:
      return store(integer(value, spec.min), std::get<long long*>(field));
    case Kind::Bool:
      return store(boolean(value), std::get<bool*>(field));
    case Kind::Duration:
      return store(duration(value), std::get<Seconds*>(field));
    case Kind::DurationOrAuto: {
      auto* target = std::get<AutoSeconds*>(field);
      if (value.IsScalar() && value.Scalar() == "auto") {
        target->automatic = true;
        return {};
      }
      target->automatic = false;
      auto seconds = duration(value);
      if (!seconds) return std::unexpected(seconds.error() + ", or \"auto\"");
      return store(std::move(seconds), &target->value);
    }
    case Kind::Interval:
      return store(interval(value), std::get<Millis*>(field));
    case Kind::SlurmTime:
      return store(checked_text(value, "a Slurm time such as \"20:00:00\"", parse_slurm_time), std::get<std::string*>(field));
    case Kind::ArraySpec:
      return store(checked_text(value, "an array spec such as \"1-10%1\"", parse_array_spec), std::get<std::string*>(field));
    case Kind::Choice:
      return store(choice(value, spec), std::get<std::string*>(field));
    case Kind::StringList:
      return store(string_list(value), std::get<std::vector<std::string>*>(field));
    case Kind::ChoiceList:
      return store(choice_list(value, spec), std::get<std::vector<std::string>*>(field));
    case Kind::StringMap:
      return store(string_map(value), std::get<std::map<std::string, std::string>*>(field));
    case Kind::Budget:
      return store(budget(value), std::get<Budget*>(field));
    case Kind::EvidenceRules: {
      auto rules = read_evidence_rules(value);
      if (!rules) return std::unexpected(rules.error().message);
      *std::get<std::vector<EvidenceRuleSpec>*>(field) = std::move(*rules);
      return {};
    }
  }
  return std::unexpected("internal error: unknown kind");
}

}  // namespace mlsup::config
