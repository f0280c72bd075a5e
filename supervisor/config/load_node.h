#pragma once
// The config loader on a YAML tree already parsed (campaign sets build one per run by merging).
#include <yaml-cpp/yaml.h>

#include "config/load.h"

namespace mlsup::config {

// Validates the tree root as a campaign config; file names it in errors (each node's own mark gives
// the line and column), base_dir resolves relative paths.
std::expected<Config, Errors> load_config_node(const YAML::Node& root, const std::string& file, const std::string& base_dir,
                                               const LoadOptions& options = {});

}  // namespace mlsup::config
