#include "config/environment_checks.h"

#include <filesystem>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "util/files.h"
#include "util/json.h"
#include "util/zone.h"

namespace mlsup::config {
namespace fs = std::filesystem;

std::optional<std::string> check_template_file(const Config& c) {
  if (c.template_path.empty()) return std::nullopt;
  std::error_code ec;
  if (!fs::exists(c.template_path, ec)) return "\"" + c.template_path + "\" does not exist (relative paths start at the config's folder)";
  if (!fs::is_regular_file(c.template_path, ec)) return "\"" + c.template_path + "\" is not a regular file";
  if (::access(c.template_path.c_str(), R_OK) != 0) return "\"" + c.template_path + "\" is not readable";
  return std::nullopt;
}

std::optional<std::string> check_checkpoint_owner(const Config& c) {
  const auto text = util::read_file(c.checkpoint.dir + "/.mlsup-campaign");
  if (!text) return std::nullopt;
  const auto claim = nlohmann::json::parse(*text, nullptr, false);
  const std::string owner_state = util::string_field(claim, "state_dir");
  if (owner_state.empty() || owner_state == c.state_dir) return std::nullopt;
  return "\"" + c.checkpoint.dir + "\" belongs to campaign \"" + util::string_field(claim, "name", "?") + "\" (state in " +
         owner_state + "); give this campaign a checkpoint directory of its own";
}

std::optional<std::string> check_window_zone(const Config& c) {
  if (c.window.hours.empty() && c.window.zone.empty()) return std::nullopt;
  if (const auto z = util::load_zone(c.window.zone); !z) return z.error().message;
  return std::nullopt;
}

}  // namespace mlsup::config
