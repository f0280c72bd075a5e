#pragma once
// YAML -> validated Config. Every problem found is reported, each as file:line:column: key: what to do.
#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "util/error.h"

namespace mlsup::config {

using Errors = std::vector<util::Error>;

// What loading checks besides the config itself.
struct LoadOptions {
  bool template_file = true;  // the template file exists and can be read
  Config* partial = nullptr;  // when set, receives the config as read, even when it has errors (validate's report)
};

// Reads, parses and validates the config file at path.
std::expected<Config, Errors> load_config_file(const std::string& path, const LoadOptions& options = {});

// Parses and validates YAML text; file names it in errors, base_dir resolves relative paths.
std::expected<Config, Errors> load_config_text(std::string_view yaml, const std::string& file, const std::string& base_dir,
                                               const LoadOptions& options = {});

}  // namespace mlsup::config
