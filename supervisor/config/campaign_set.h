#pragma once
// Campaign sets: one YAML file (top-level key `runs:`) that lists runs, each a campaign config, a
// config with overrides, or a matrix of them, with dependencies, priorities and limits for the set.
// Expansion into campaign configs is pure (the configs' texts are handed in); see README.md.
#include <expected>
#include <map>
#include <optional>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "config/config.h"
#include "config/load.h"

namespace mlsup::config {

// One run of a set, expanded: its own campaign config, named after the run.
struct SetRun {
  std::string name;
  std::string entry;               // the `runs:` entry it comes from (a matrix entry gives several runs)
  Config config;
  std::vector<std::string> after;  // runs that must have completed before it starts (entries expanded)
  int priority = 0;                // among runs that may start, higher first
  Location at;                     // where its entry is written in the set file
};

struct CampaignSet {
  std::string file;  // as given
  std::string name;
  int max_running = 0;  // runs at once; 0 = no limit
  int max_nodes = 0;    // nodes of the runs at once; 0 = no limit
  std::vector<SetRun> runs;  // in file order; a matrix's runs in the order its values are crossed

  // The run named run; nullptr when there is none.
  const SetRun* find(std::string_view run) const;
};

// True when root is a campaign set rather than a campaign config: a mapping with `runs:`.
bool is_set(const YAML::Node& root);
// True when the file at path parses as a campaign set (false when it cannot be read or parsed).
bool is_set_file(const std::string& path);

// The config files the set's runs name, resolved against base_dir (the set's folder), each once.
std::vector<std::string> set_config_paths(const YAML::Node& root, const std::string& base_dir);

// Pure: the set in root (parsed from file, whose folder is base_dir) expanded into one campaign
// config per run. configs holds the text of each path set_config_paths named (absent: unreadable).
// Every problem is reported, each with file:line:column.
std::expected<CampaignSet, Errors> expand_set(const YAML::Node& root, const std::string& file, const std::string& base_dir,
                                              const std::map<std::string, std::string>& configs,
                                              const LoadOptions& options = {});

// Reads the set file at path and the configs it names, then expands it.
std::expected<CampaignSet, Errors> load_set_file(const std::string& path, const LoadOptions& options = {});

// "SET:RUN" split at its last ':' when the text names no file itself and SET is a file; nullopt otherwise.
std::optional<std::pair<std::string, std::string>> split_unit(const std::string& text);

// The run named run of the set file at set_file, as a campaign config; the set's errors, or that it
// has no such run.
std::expected<Config, Errors> load_set_run(const std::string& set_file, const std::string& run,
                                           const LoadOptions& options = {});

// Pure: base with over laid on it: mappings merge key by key (recursively), any other value of over
// (a scalar, a list) replaces base's, and a null in over removes the key (over null or undefined as a
// whole: base). Nodes keep their marks.
YAML::Node merge_nodes(const YAML::Node& base, const YAML::Node& over);

// One run of a matrix: its name's suffix ("lr_1e-4.bs_32") and the values as a tree of overrides.
struct MatrixCell {
  std::string suffix;
  YAML::Node overrides;
};
// Pure: the cross product of a matrix (dotted config keys -> lists of values), the first key varying
// slowest. Each value is named by its key's last part (the whole key where two last parts are alike)
// and the value, with characters a campaign name cannot hold made '_'.
std::vector<MatrixCell> matrix_cells(const YAML::Node& matrix);

}  // namespace mlsup::config
