#pragma once
// Judging checkpoint.dir from what a listing of it found (checkpoints.cpp lists; judge.cpp reads no file).
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "checkpoint/checkpoints.h"
#include "config/config.h"
#include "util/error.h"

namespace mlsup::checkpoint {

// A pointer file holds one line; anything longer is not a pointer.
inline constexpr std::size_t kMaxPointerBytes = 4096;

// One entry of checkpoint.dir.
struct Entry {
  std::string name;
  std::filesystem::path path;
  bool is_dir = false;
  bool is_file = false;
};

// checkpoint.dir as listed, and what judging may ask of it beyond the listing.
struct Listing {
  std::vector<Entry> entries;
  bool pointer_exists = false;             // the layout's pointer file (pointer_file())
  util::Result<std::string> pointer_text;  // its first kMaxPointerBytes + 1 bytes, or why it cannot be read
  std::function<bool(const std::filesystem::path&)> exists;  // the path exists (a link itself counts)
  // "" when the entry has content, else what it is: "is an empty file", "is an empty folder", "cannot be read: ..."
  std::function<std::string(const Entry&)> emptiness;
};

// Why the settings cannot name checkpoints (an unknown layout, a step_regex that does not compile), or "".
std::string settings_problem(const config::CheckpointSettings& s);

// The layout's pointer file's name ("" when it has none).
std::string pointer_file(const config::CheckpointSettings& s);

// The text of the layout's pointer file naming checkpoint c (megatron: its step, or "release"; deepspeed:
// its folder's name); "" for a layout without a pointer file.
std::string pointer_text(const config::CheckpointSettings& s, const Checkpoint& c);

// The checkpoints of a listing by the settings' layout, each judged; the pointer's trust.
Scan judge(const config::CheckpointSettings& s, const Listing& l);

}  // namespace mlsup::checkpoint
