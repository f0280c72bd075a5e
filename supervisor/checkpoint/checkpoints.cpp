#include "checkpoint/checkpoints.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <fnmatch.h>
#include <fstream>
#include <regex>
#include <string_view>
#include <tuple>

#include "util/error.h"
#include "util/strings.h"

namespace mlsup::checkpoint {
namespace fs = std::filesystem;
namespace {

// A pointer file holds one line; anything longer is not a pointer.
constexpr std::size_t kMaxPointerBytes = 4096;

// Writers build checkpoints under names like these and rename them when done.
constexpr std::array<std::string_view, 3> kWorkInProgress{"tmp", ".saving", "partial"};

// One entry of checkpoint.dir.
struct Entry {
  std::string name;
  fs::path path;
  bool is_dir = false;
  bool is_file = false;
};

// The entry a pointer file names, and its step.
struct Pointer {
  std::string target;
  long long step = 0;
};

// A layout's pointer file as read: absent, unusable (problem), or usable (pointer).
struct PointerRead {
  bool exists = false;
  std::optional<Pointer> pointer;
  std::string problem;
};

// What the glob layout needs from the settings, compiled once.
struct Naming {
  std::string glob;
  std::regex step_regex;
};

// An entry that names a checkpoint, with its step.
struct Candidate {
  Entry entry;
  long long step = 0;
};

using StepOf = std::optional<long long> (*)(const Entry&, const Naming&);
using ParsePointer = util::Result<Pointer> (*)(std::string_view text);

// A layout: which entries are checkpoints and their steps; the pointer file, if the layout has one, and
// the file its writer puts in a checkpoint last, if it has one (each proves a save finished).
struct Layout {
  std::string_view name;
  StepOf step_of;
  std::string_view pointer_file;  // "" = none
  ParsePointer parse_pointer;
  std::string_view last_file;     // "" = none
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A decimal number made only of digits, that fits a long long.
std::optional<long long> number(std::string_view digits) {
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), is_digit)) return std::nullopt;
  long long n = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return n;
}

std::string_view trailing_digits(std::string_view name) {
  std::size_t start = name.size();
  while (start > 0 && is_digit(name[start - 1])) --start;
  return name.substr(start);
}

// The number after prefix, when the rest of name is at least min_digits digits.
std::optional<long long> number_after(std::string_view name, std::string_view prefix, std::size_t min_digits) {
  if (!util::starts_with(name, prefix) || name.size() < prefix.size() + min_digits) return std::nullopt;
  return number(name.substr(prefix.size()));
}

std::string quoted(std::string_view text) {
  constexpr std::size_t kShown = 40;
  if (text.size() <= kShown) return "\"" + std::string(text) + "\"";
  return "\"" + std::string(text.substr(0, kShown)) + "...\"";
}

std::optional<long long> megatron_step(const Entry& e, const Naming&) {
  if (!e.is_dir) return std::nullopt;
  return number_after(e.name, "iter_", 7);
}

std::optional<long long> deepspeed_step(const Entry& e, const Naming&) {
  if (!e.is_dir) return std::nullopt;
  return number(trailing_digits(e.name));
}

std::optional<long long> hf_step(const Entry& e, const Naming&) {
  if (!e.is_dir) return std::nullopt;
  return number_after(e.name, "checkpoint-", 1);
}

std::optional<long long> glob_step(const Entry& e, const Naming& naming) {
  if (!e.is_dir && !e.is_file) return std::nullopt;
  if (::fnmatch(naming.glob.c_str(), e.name.c_str(), 0) != 0) return std::nullopt;
  std::smatch match;
  if (!std::regex_search(e.name, match, naming.step_regex) || match.size() < 2 || !match[1].matched) return std::nullopt;
  return number(match.str(1));
}

std::string megatron_folder(long long step) {
  std::string digits = std::to_string(step);
  if (digits.size() < 7) digits.insert(0, 7 - digits.size(), '0');
  return "iter_" + digits;
}

util::Result<Pointer> megatron_pointer(std::string_view text) {
  if (text == "release") return Pointer{"release", 0};
  const auto step = number(text);
  if (!step) return util::fail("holds " + quoted(text) + ", which is neither a step number nor \"release\"");
  return Pointer{megatron_folder(*step), *step};
}

util::Result<Pointer> deepspeed_pointer(std::string_view text) {
  if (text == "." || text == ".." || text.find_first_of("/ \t") != std::string_view::npos)
    return util::fail("holds " + quoted(text) + ", which is not a folder name");
  return Pointer{std::string(text), number(trailing_digits(text)).value_or(0)};
}

constexpr std::array<Layout, 4> kLayouts{{
    {"megatron", megatron_step, "latest_checkpointed_iteration.txt", megatron_pointer, ""},
    {"deepspeed", deepspeed_step, "latest", deepspeed_pointer, ""},
    {"hf", hf_step, "", nullptr, "trainer_state.json"},  // HF Trainer writes it after the model and optimizer
    {"glob", glob_step, "", nullptr, ""},
}};

const Layout* find_layout(std::string_view name) {
  for (const auto& layout : kLayouts)
    if (layout.name == name) return &layout;
  return nullptr;
}

util::Result<Naming> make_naming(const config::CheckpointSettings& s, const Layout& layout) {
  if (layout.name != "glob") return Naming{};
  const std::string what = "checkpoint.step_regex \"" + s.step_regex + "\" ";
  try {
    Naming naming{s.glob, std::regex(s.step_regex)};
    if (naming.step_regex.mark_count() < 1) return util::fail(what + "has no group for the step number");
    return naming;
  } catch (const std::regex_error& e) {
    return util::fail(what + "is not a valid regular expression (" + e.what() + ")");
  }
}

// Names that are never checkpoints: hidden entries and a writer's work in progress.
bool ignored(std::string_view name) {
  if (name.empty() || name.front() == '.') return true;
  std::string lower(name);
  for (char& c : lower)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return std::any_of(kWorkInProgress.begin(), kWorkInProgress.end(),
                     [&](std::string_view w) { return lower.find(w) != std::string::npos; });
}

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

util::Result<Pointer> parse_pointer_file(const Layout& layout, const fs::path& path) {
  const auto text = read_small(path);
  if (!text) return std::unexpected(text.error());
  if (text->size() > kMaxPointerBytes)
    return util::fail("is larger than " + std::to_string(kMaxPointerBytes) + " bytes; a pointer file holds one line");
  const auto value = util::trim(*text);
  if (value.empty()) return util::fail("is empty");
  if (std::any_of(value.begin(), value.end(), [](char c) { return (c >= 0 && c < ' ') || c == 0x7f; }))
    return util::fail("is not one line of text");
  return layout.parse_pointer(value);
}

PointerRead read_pointer(const Layout& layout, const fs::path& dir) {
  PointerRead read;
  if (layout.pointer_file.empty()) return read;
  const fs::path path = dir / layout.pointer_file;
  std::error_code ec;
  read.exists = fs::exists(fs::symlink_status(path, ec));
  if (!read.exists) return read;
  auto pointer = parse_pointer_file(layout, path);
  if (pointer) read.pointer = *pointer;
  else read.problem = std::string(layout.pointer_file) + " " + pointer.error().message;
  return read;
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

std::vector<Candidate> candidates(const std::vector<Entry>& entries, const Layout& layout, const Naming& naming,
                                  const PointerRead& read) {
  std::vector<Candidate> out;
  for (const auto& e : entries) {
    if (ignored(e.name)) continue;
    std::optional<long long> step;
    if (read.pointer && e.is_dir && e.name == read.pointer->target) step = read.pointer->step;
    else step = layout.step_of(e, naming);
    if (step) out.push_back({e, *step});
  }
  return out;
}

std::string marker_problem(const Entry& e, const std::string& marker) {
  if (!e.is_dir) return "is a file, so it cannot hold " + marker;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(e.path / marker, ec))) return "has no " + marker + " inside";
  return "";
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

// The pointer rule: a folder newer than the one the pointer names is a save that has not finished.
std::string pointer_rule(const Candidate& c, const Layout& layout, const PointerRead& read) {
  if (layout.pointer_file.empty() || !read.problem.empty()) return "";
  const std::string file(layout.pointer_file);
  if (!read.exists) return "there is no " + file + " yet: no save has finished";
  if (c.step > read.pointer->step)
    return "is newer than " + file + " (step " + std::to_string(read.pointer->step) +
           "): a save in progress, or one that did not finish";
  return "";
}

// The marker decides when one is set, else the layout's last file, else content and the pointer rule.
Checkpoint judge(const Candidate& c, const config::CheckpointSettings& s, const Layout& layout, const PointerRead& read) {
  std::string why;
  bool proof = true;
  if (!s.complete_marker.empty()) why = marker_problem(c.entry, s.complete_marker);
  else if (!layout.last_file.empty()) why = marker_problem(c.entry, std::string(layout.last_file));
  else {
    why = emptiness(c.entry);
    if (why.empty()) why = pointer_rule(c, layout, read);
    proof = !layout.pointer_file.empty() && read.pointer;  // the pointer's word; pointer_problem may take it back
  }
  return Checkpoint{c.entry.path.string(), c.step, why.empty(), why, why.empty() && proof};
}

// Why the pointer cannot be trusted, once the checkpoints are judged; "" when it can.
std::string pointer_problem(const PointerRead& read, const Layout& layout, const Scan& scan, const fs::path& dir) {
  const std::string file(layout.pointer_file);
  if (!read.problem.empty()) return read.problem + "; checkpoints are judged by their content";
  if (file.empty() || (!read.exists && scan.checkpoints.empty())) return "";
  if (!read.exists) return file + " does not exist: no save has finished";
  const std::string& target = read.pointer->target;
  const std::string path = (dir / target).string();
  const auto found = std::find_if(scan.checkpoints.begin(), scan.checkpoints.end(),
                                  [&](const Checkpoint& c) { return c.path == path; });
  if (found != scan.checkpoints.end())
    return found->complete ? "" : file + " names " + target + ", which is incomplete (" + found->why_incomplete + ")";
  std::error_code ec;
  const bool exists = fs::exists(fs::symlink_status(dir / target, ec));
  return file + " names " + target + ", which " + (exists ? "is not a checkpoint folder" : "does not exist");
}

Scan scan_dir(const config::CheckpointSettings& s) {
  Scan out;
  const Layout* layout = find_layout(s.layout);
  if (!layout) {
    out.dir_problem = "checkpoint.layout \"" + s.layout + "\" is not one of megatron, deepspeed, hf, glob";
    return out;
  }
  const auto naming = make_naming(s, *layout);
  if (!naming) {
    out.dir_problem = naming.error().message;
    return out;
  }
  const auto entries = list(s.dir);
  if (!entries) {
    out.dir_problem = entries.error().message;
    return out;
  }
  const auto read = read_pointer(*layout, s.dir);
  for (const auto& c : candidates(*entries, *layout, *naming, read)) out.checkpoints.push_back(judge(c, s, *layout, read));
  std::sort(out.checkpoints.begin(), out.checkpoints.end(),
            [](const Checkpoint& a, const Checkpoint& b) { return std::tie(a.step, a.path) < std::tie(b.step, b.path); });
  if (read.pointer) out.pointer_step = read.pointer->step;
  out.pointer_problem = pointer_problem(read, *layout, out, s.dir);
  if (!out.pointer_problem.empty() && s.complete_marker.empty())
    for (auto& c : out.checkpoints) c.proven = false;  // a pointer that cannot be trusted proves nothing
  return out;
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

std::optional<Checkpoint> newest_complete(const Scan& scan) {
  const auto found = std::find_if(scan.checkpoints.rbegin(), scan.checkpoints.rend(),
                                  [](const Checkpoint& c) { return c.complete; });
  if (found == scan.checkpoints.rend()) return std::nullopt;
  return *found;
}

}  // namespace mlsup::checkpoint
