// The plugin's record files of a job read from its folder (the parsing is node_records.cpp's, pure).
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "observe/node_records.h"

namespace mlsup::observe {
namespace {

constexpr std::uintmax_t kMaxFileBytes = 16u << 20;  // a node writes a few hundred bytes per task

}  // namespace

NodeRecords read_node_records(const std::string& state_dir, std::uint32_t job_id) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(state_dir) / "nodes" / std::to_string(job_id);
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(dir, ec))) return {};
  std::vector<fs::path> paths;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".jsonl" && it->is_regular_file(ec) && !it->is_symlink(ec)) paths.push_back(it->path());
  const std::string listing_problem = ec ? dir.string() + ": " + ec.message() : "";
  std::sort(paths.begin(), paths.end());
  std::vector<NodeFile> files;
  for (const auto& path : paths) {
    NodeFile f{path.stem().string(), "", ""};
    std::ifstream in(path, std::ios::binary);
    if (in) {
      f.text.resize(std::min<std::uintmax_t>(fs::file_size(path, ec), kMaxFileBytes));
      in.read(f.text.data(), static_cast<std::streamsize>(f.text.size()));
      f.text.resize(static_cast<std::size_t>(in.gcount()));
    }
    if (!in && !in.eof()) f.problem = path.string() + ": cannot be read";
    files.push_back(std::move(f));
  }
  NodeRecords all = combine_node_records(files);
  if (!listing_problem.empty()) all.problems.insert(all.problems.begin(), listing_problem);
  return all;
}

}  // namespace mlsup::observe
