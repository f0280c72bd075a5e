#include "config/load.h"
#include "config/load_node.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "config/campaign_set.h"
#include "config/convert.h"
#include "config/schema.h"
#include "config/slurm_time.h"
#include "config/validate.h"
#include "util/strings.h"

namespace mlsup::config {
namespace fs = std::filesystem;
namespace {

struct Walk {
  const std::string& file;
  Config& config;
  Errors& errors;

  void error_at(const YAML::Mark& mark, std::string subject, std::string message) {
    errors.push_back({.file = file, .line = mark.line + 1, .column = mark.column + 1,
                      .subject = std::move(subject), .message = std::move(message)});
  }

  // Reports an unknown key, suggesting the nearest known name of the same group.
  void unknown(const YAML::Node& key, const std::string& group, const std::string& path) {
    std::string message = "unknown key";
    const auto near = util::did_you_mean(key.Scalar(), names_under(group));
    if (!near.empty()) message += " (did you mean \"" + near + "\"?)";
    else message += " (known here: " + util::join(names_under(group), ", ") + ")";
    error_at(key.Mark(), path, message);
  }

  // Visits every key of a mapping that stands for group ("" = the top level).
  void mapping(const YAML::Node& node, const std::string& group) {
    if (!node.IsMap()) {
      error_at(node.Mark(), group.empty() ? "config" : group, "expected a mapping of keys, got something else");
      return;
    }
    std::set<std::string> seen;
    for (const auto& item : node) {
      const std::string name = item.first.Scalar();
      const std::string path = group.empty() ? name : group + "." + name;
      if (!seen.insert(name).second) {
        error_at(item.first.Mark(), path, "is given twice; keep one");
        continue;
      }
      if (const KeySpec* spec = find_key(path)) {
        config.written[path] = {item.first.Mark().line + 1, item.first.Mark().column + 1};
        if (auto ok = convert(*spec, item.second, config); !ok) error_at(error_mark(*spec, item.second), path, ok.error());
      } else if (is_group(path)) {
        mapping(item.second, path);
      } else {
        unknown(item.first, group, path);
      }
    }
  }
};

std::string resolve(const std::string& base_dir, const std::string& path, const std::string& fallback) {
  if (path.empty()) return fallback;
  fs::path p = path;
  if (path == "~" || util::starts_with(path, "~/")) {
    const char* home = std::getenv("HOME");
    p = fs::path(home ? home : "/") / path.substr(std::min<std::size_t>(2, path.size()));
  }
  if (p.is_relative()) p = fs::path(base_dir) / p;
  return p.lexically_normal().string();
}

// Resolves paths against the config's folder, fills derived defaults and parsed forms.
void finalize(Config& c) {
  c.template_path = resolve(c.base_dir, c.template_path, "");
  c.state_dir = resolve(c.base_dir, c.state_dir, (fs::path(c.base_dir) / ".mlsup" / c.name).string());
  c.checkpoint.dir = resolve(c.base_dir, c.checkpoint.dir, c.dir().checkpoints());
  c.heartbeat.dir = resolve(c.base_dir, c.heartbeat.dir, c.dir().heartbeats());
  c.switches.kill = resolve(c.base_dir, c.switches.kill, c.dir().kill_switch());
  c.switches.save = resolve(c.base_dir, c.switches.save, c.dir().save_switch());
  c.notify.ca_file = resolve(c.base_dir, c.notify.ca_file, "");
  if (!c.is_set("policy.exclusion_unexplained_ttl")) c.policy.exclusion_unexplained_ttl = c.policy.exclusion_ttl;
  // The stacks' signal by default is never the pre-timeout one (set both to the same and validate says so).
  if (!c.is_set("heartbeat.stacks_signal") && c.heartbeat.stacks_signal == c.slurm.signal)
    c.heartbeat.stacks_signal = c.slurm.signal == "USR2" ? "USR1" : "USR2";
  if (!c.slurm.time.empty()) c.slurm.time_limit = parse_slurm_time(c.slurm.time).value_or(std::nullopt);
  if (!c.slurm.array.empty()) {
    if (auto spec = parse_array_spec(c.slurm.array)) c.slurm.array_spec = *spec;
  }
}

// Drops the checks' errors (from first_check on) that involve a key the walk could not read: such a key
// holds its default, and a check of it would echo the walk's error in other words.
void drop_echoes(Errors& errors, std::size_t first_check) {
  std::vector<std::string> unread;
  for (std::size_t i = 0; i < first_check; ++i)
    if (!errors[i].subject.empty()) unread.push_back(errors[i].subject);
  const auto echoes = [&](const util::Error& e) {
    for (const auto& key : unread)
      if (util::starts_with(e.subject, key) || e.message.find(key) != std::string::npos) return true;
    return false;
  };
  errors.erase(std::remove_if(errors.begin() + static_cast<std::ptrdiff_t>(first_check), errors.end(), echoes), errors.end());
}

}  // namespace

std::expected<Config, Errors> load_config_text(std::string_view yaml, const std::string& file, const std::string& base_dir,
                                               const LoadOptions& options) {
  Errors errors;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::ParserException& e) {
    errors.push_back({.file = file, .line = e.mark.line + 1, .column = e.mark.column + 1, .subject = "",
                      .message = "not valid YAML: " + e.msg});
    return std::unexpected(errors);
  }
  return load_config_node(root, file, base_dir, options);
}

std::expected<Config, Errors> load_config_node(const YAML::Node& root, const std::string& file, const std::string& base_dir,
                                               const LoadOptions& options) {
  Config config = defaults();
  config.source_file = file;
  config.base_dir = fs::absolute(base_dir).lexically_normal().string();
  Errors errors;
  if (root.IsNull()) {
    errors.push_back({.file = file, .message = "the config is empty; it needs at least `name:` and `template:`"});
    return std::unexpected(errors);
  }
  Walk{file, config, errors}.mapping(root, "");
  finalize(config);
  const auto read = errors.size();
  if (root.IsMap()) validate(config, errors, options);
  drop_echoes(errors, read);
  if (options.partial) *options.partial = config;
  if (!errors.empty()) return std::unexpected(errors);
  return config;
}

std::expected<Config, Errors> load_config_file(const std::string& path, const LoadOptions& options) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    return std::unexpected(Errors{{.file = path, .message = "a folder, not a config file: name one of its *.yaml files "
                                                           "(run, tick, status, events, stop and save take a folder)"}});
  if (const auto unit = split_unit(path)) return load_set_run(unit->first, unit->second, options);
  if (is_set_file(path)) {
    const auto set = load_set_file(path, options);
    if (!set) return std::unexpected(set.error());
    std::vector<std::string> runs;
    for (const auto& r : set->runs) runs.push_back(path + ":" + r.name);
    return std::unexpected(Errors{{.file = path, .message = "a campaign set, not one campaign: name one of its runs as " +
                                                           util::join(runs, ", ") +
                                                           " (run, tick, status, events, stop, save and validate take the set)"}});
  }
  std::ifstream in(path);
  if (!in) {
    return std::unexpected(Errors{{.file = path, .message = "cannot read the config file: " +
                                                           std::string(std::strerror(errno))}});
  }
  std::stringstream text;
  text << in.rdbuf();
  return load_config_text(text.str(), path, fs::absolute(path).parent_path().string(), options);
}

}  // namespace mlsup::config
