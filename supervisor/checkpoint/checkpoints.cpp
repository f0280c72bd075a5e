// checkpoint.dir listed and read for judge.cpp: its entries, the pointer file's text, whether a marker
// exists, whether an entry is empty.
#include "checkpoint/checkpoints.h"

#include <filesystem>
#include <fstream>

#include "checkpoint/judge.h"

namespace mlsup::checkpoint {
namespace fs = std::filesystem;
namespace {

// The first bytes of a regular file (one more than kMaxPointerBytes at most), or why it cannot be read.
util::Result<std::string> read_small(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return util::fail("is not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return util::fail("cannot be read");
  std::string text(kMaxPointerBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return util::fail("cannot be read");
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

Entry entry_of(const fs::directory_entry& d) {
  std::error_code ec;
  Entry e{d.path().filename().string(), d.path()};
  e.is_dir = d.is_directory(ec);
  e.is_file = d.is_regular_file(ec);
  return e;
}

// The entries of dir, or why they cannot be listed.
util::Result<std::vector<Entry>> list(const std::string& dir) {
  const std::string what = "checkpoint.dir " + dir + " ";
  if (dir.empty()) return util::fail("checkpoint.dir is not set");
  std::error_code ec;
  const auto status = fs::status(dir, ec);
  if (status.type() == fs::file_type::not_found) return util::fail(what + "does not exist (no checkpoint yet)");
  if (ec) return util::fail(what + "cannot be read: " + ec.message());
  if (!fs::is_directory(status)) return util::fail(what + "is not a folder");
  std::vector<Entry> entries;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) entries.push_back(entry_of(*it));
  if (ec) return util::fail(what + "cannot be listed: " + ec.message());
  return entries;
}

bool path_exists(const fs::path& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

std::string emptiness(const Entry& e) {
  std::error_code ec;
  if (e.is_file) {
    const auto size = fs::file_size(e.path, ec);
    if (ec) return "cannot be read: " + ec.message();
    return size == 0 ? "is an empty file" : "";
  }
  fs::directory_iterator it(e.path, ec);
  if (ec) return "cannot be read: " + ec.message();
  return it == fs::directory_iterator() ? "is an empty folder" : "";
}

Scan scan_dir(const config::CheckpointSettings& s) {
  if (auto problem = settings_problem(s); !problem.empty()) return Scan{.dir_problem = problem};
  auto entries = list(s.dir);
  if (!entries) return Scan{.dir_problem = entries.error().message};
  Listing l{std::move(*entries), false, "", path_exists, emptiness};
  if (const auto file = pointer_file(s); !file.empty()) {
    const fs::path path = fs::path(s.dir) / file;
    l.pointer_exists = path_exists(path);
    if (l.pointer_exists) l.pointer_text = read_small(path);
  }
  return judge(s, l);
}

}  // namespace

Scan scan(const config::CheckpointSettings& settings) {
  try {
    return scan_dir(settings);
  } catch (const std::exception& e) {
    Scan out;
    out.dir_problem = "checkpoint.dir " + settings.dir + " cannot be scanned: " + e.what();
    return out;
  }
}

}  // namespace mlsup::checkpoint
