#include "render/lint.h"

#include <array>
#include <charconv>
#include <functional>
#include <optional>
#include <string>

#include "config/slurm_time.h"
#include "util/strings.h"

namespace mlsup::render {
namespace {

using config::Config;

util::Error warning(const Config& c, int line, int column, std::string subject, std::string message) {
  return {.file = c.template_path, .line = line, .column = column, .subject = std::move(subject), .message = std::move(message)};
}

// A line that is only a section tag ({{#x}}, {{/x}}, {{^x}}): it renders to nothing.
bool section_tag(std::string_view t) {
  return t.size() > 5 && t.substr(0, 2) == "{{" && std::string_view("#/^").find(t[2]) != std::string_view::npos &&
         t.ends_with("}}") && t.find("}}") == t.size() - 2;
}

// #SBATCH lines after the first command: sbatch stops reading options there.
void late_directives(const Config& c, std::string_view text, std::vector<util::Error>& out) {
  bool body = false;
  int line = 0;
  for (const auto& raw : util::split(text, '\n')) {
    const std::string_view t = util::trim(raw);
    ++line;
    if ((line == 1 && util::starts_with(t, "#!")) || section_tag(t)) continue;
    if (!body && !t.empty() && !util::starts_with(t, "#")) body = true;
    if (body && util::starts_with(t, "#SBATCH"))
      out.push_back(warning(c, line, 1, "#SBATCH", "comes after the script's first command, so sbatch ignores it; move it "
                                                   "up into the header, before any command"));
  }
}

std::optional<long long> integer(std::string_view text) {
  long long v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

// A shape option set both in the config and in the script, and whether the two values differ.
struct Overridden {
  std::string_view option;  // the #SBATCH long name
  std::string_view key;     // the config key that wins
  std::function<std::optional<std::string>(const Config&)> config_value;  // nullopt: not set in the config
  std::function<bool(const std::string&, const std::string&)> differ;
};

bool ints_differ(const std::string& a, const std::string& b) { return integer(a) != integer(b); }
bool times_differ(const std::string& a, const std::string& b) {
  const auto x = config::parse_slurm_time(a), y = config::parse_slurm_time(b);
  return !x || !y || *x != *y;
}
bool texts_differ(const std::string& a, const std::string& b) { return a != b; }

std::optional<std::string> text_of(const std::optional<int>& v) { return v ? std::optional(std::to_string(*v)) : std::nullopt; }
std::optional<std::string> set_text(const std::string& v) { return v.empty() ? std::nullopt : std::optional(v); }

const std::array<Overridden, 6>& overridden() {
  static const std::array<Overridden, 6> table{{
      {"nodes", "slurm.nodes", [](const Config& c) { return text_of(c.slurm.nodes); }, ints_differ},
      {"ntasks-per-node", "slurm.ntasks_per_node", [](const Config& c) { return text_of(c.slurm.ntasks_per_node); }, ints_differ},
      {"gpus-per-node", "slurm.gpus_per_node", [](const Config& c) { return text_of(c.slurm.gpus_per_node); }, ints_differ},
      {"cpus-per-task", "slurm.cpus_per_task", [](const Config& c) { return text_of(c.slurm.cpus_per_task); }, ints_differ},
      {"time", "slurm.time", [](const Config& c) { return set_text(c.slurm.time); }, times_differ},
      {"partition", "slurm.partition", [](const Config& c) { return set_text(c.slurm.partition); }, texts_differ},
  }};
  return table;
}

// Script options that the config's own value replaces without a word.
void overrides(const Config& c, const Directives& d, std::vector<util::Error>& out) {
  for (const auto& o : overridden()) {
    const auto* in_script = d.find(o.option);
    const auto in_config = o.config_value(c);
    if (!in_script || !in_config || !o.differ(in_script->value, *in_config)) continue;
    out.push_back(warning(c, in_script->line, 1, "--" + std::string(o.option),
                          "\"" + in_script->value + "\" here is overridden by " + std::string(o.key) + ": " + *in_config +
                              " in the config (the config wins); remove one of the two"));
  }
}

// {{...}} inside quotes: mlsup inserts values shell-quoted, so a quoted placeholder carries the quotes.
void quoted_placeholders(const Config& c, std::string_view text, std::vector<util::Error>& out) {
  int line = 0;
  for (const auto& raw : util::split(text, '\n')) {
    ++line;
    if (util::starts_with(util::trim(raw), "#")) continue;
    char quote = 0;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      const char ch = raw[i];
      if (quote == 0 && (ch == '"' || ch == '\'')) quote = ch;
      else if (quote != 0 && ch == quote) quote = 0;
      else if (quote == '"' && ch == '\\') ++i;
      else if (quote != 0 && raw.compare(i, 2, "{{") == 0) {
        out.push_back(warning(c, line, static_cast<int>(i) + 1, "{{",
                              "a placeholder inside quotes: mlsup inserts the value shell-quoted already, so a value "
                              "with a space or a quote would keep its quotes; remove the quotes around it"));
        break;
      }
    }
  }
}

// A webhook over plain http: the alerts (the campaign, its nodes, its errors) cross the network readable.
void clear_text_webhook(const Config& c, std::vector<util::Error>& out) {
  if (!util::starts_with(c.notify.webhook, "http://")) return;
  const auto at = c.written.find("notify.webhook");
  const config::Location where = at == c.written.end() ? config::Location{} : at->second;
  out.push_back({.file = c.source_file, .line = where.line, .column = where.column, .subject = "notify.webhook",
                 .message = "an http:// URL sends every alert across the network in clear text (the campaign, its "
                            "nodes, its errors); use https:// unless the receiver is on this host"});
}

}  // namespace

std::vector<util::Error> lint_template(const Config& c, std::string_view template_text, const Directives& directives) {
  std::vector<util::Error> out;
  late_directives(c, template_text, out);
  overrides(c, directives, out);
  quoted_placeholders(c, template_text, out);
  clear_text_webhook(c, out);
  return out;
}

}  // namespace mlsup::render
