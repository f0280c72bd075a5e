// Campaign sets, the edge: the set file and the configs it names read from disk.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/campaign_set.h"
#include "util/strings.h"

namespace mlsup::config {
namespace fs = std::filesystem;
namespace {

std::optional<std::string> read_text(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return std::nullopt;
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

bool is_set_file(const std::string& path) {
  const auto text = read_text(path);
  // A set has a top-level "runs" key: a file without the word is no set, and is not parsed twice
  // (status and tick over a folder of 1,000 configs ask this of each before loading it).
  if (!text || text->find("runs") == std::string::npos) return false;
  try {
    return is_set(YAML::Load(*text));
  } catch (const YAML::Exception&) {
    return false;
  }
}

std::expected<CampaignSet, Errors> load_set_file(const std::string& path, const LoadOptions& options) {
  const auto text = read_text(path);
  if (!text) return std::unexpected(Errors{{.file = path, .message = "cannot read the campaign set file"}});
  YAML::Node root;
  try {
    root = YAML::Load(*text);
  } catch (const YAML::ParserException& e) {
    return std::unexpected(
        Errors{{.file = path, .line = e.mark.line + 1, .column = e.mark.column + 1, .message = "not valid YAML: " + e.msg}});
  }
  const auto dir = fs::absolute(path).parent_path().string();
  std::map<std::string, std::string> configs;
  for (const auto& p : set_config_paths(root, dir))
    if (auto t = read_text(p)) configs[p] = std::move(*t);
  return expand_set(root, path, dir, configs, options);
}

std::optional<std::pair<std::string, std::string>> split_unit(const std::string& text) {
  const auto colon = text.rfind(':');
  std::error_code ec;
  if (colon == std::string::npos || colon == 0 || fs::exists(text, ec)) return std::nullopt;
  const auto file = text.substr(0, colon);
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  return std::pair{file, text.substr(colon + 1)};
}

std::expected<Config, Errors> load_set_run(const std::string& set_file, const std::string& run, const LoadOptions& options) {
  auto set = load_set_file(set_file, options);
  if (!set) return std::unexpected(set.error());
  if (const SetRun* r = set->find(run)) return r->config;
  std::vector<std::string> names;
  for (const auto& r : set->runs) names.push_back(r.name);
  return std::unexpected(Errors{{.file = set_file, .subject = run,
                                 .message = "no such run in the set (its runs: " + util::join(names, ", ") + ")"}});
}

}  // namespace mlsup::config
