// Judging checkpoint.dir as listed (checkpoints.cpp lists it): which entries are checkpoints by the
// layout's names, which are complete, and whether the pointer file can be trusted. Reads no file.
#include "checkpoint/judge.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <fnmatch.h>
#include <map>
#include <regex>
#include <string_view>
#include <tuple>

#include "util/error.h"
#include "util/strings.h"

namespace mlsup::checkpoint {
namespace fs = std::filesystem;
namespace {

// Writers build checkpoints under names like these and rename them when done.
constexpr std::array<std::string_view, 3> kWorkInProgress{"tmp", ".saving", "partial"};

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

// pattern compiled, once per thread and pattern (a regex costs more to build than a folder to list;
// status builds one per campaign for each scan). Throws std::regex_error as std::regex does.
const std::regex& compiled(const std::string& pattern) {
  thread_local std::map<std::string, std::regex> cache;
  if (const auto it = cache.find(pattern); it != cache.end()) return it->second;
  if (cache.size() >= 64) cache.clear();  // a bound: configs are few
  return cache.emplace(pattern, std::regex(pattern)).first->second;
}

util::Result<Naming> make_naming(const config::CheckpointSettings& s, const Layout& layout) {
  if (layout.name != "glob") return Naming{};
  const std::string what = "checkpoint.step_regex \"" + s.step_regex + "\" ";
  try {
    Naming naming{s.glob, compiled(s.step_regex)};
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

util::Result<Pointer> parse_pointer_file(const Layout& layout, const util::Result<std::string>& text) {
  if (!text) return std::unexpected(text.error());
  if (text->size() > kMaxPointerBytes)
    return util::fail("is larger than " + std::to_string(kMaxPointerBytes) + " bytes; a pointer file holds one line");
  const auto value = util::trim(*text);
  if (value.empty()) return util::fail("is empty");
  if (std::any_of(value.begin(), value.end(), [](char c) { return (c >= 0 && c < ' ') || c == 0x7f; }))
    return util::fail("is not one line of text");
  return layout.parse_pointer(value);
}

PointerRead read_pointer(const Layout& layout, const Listing& l) {
  PointerRead read;
  if (layout.pointer_file.empty()) return read;
  read.exists = l.pointer_exists;
  if (!read.exists) return read;
  auto pointer = parse_pointer_file(layout, l.pointer_text);
  if (pointer) read.pointer = *pointer;
  else read.problem = std::string(layout.pointer_file) + " " + pointer.error().message;
  return read;
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

std::string marker_problem(const Entry& e, const std::string& marker, const Listing& l) {
  if (!e.is_dir) return "is a file, so it cannot hold " + marker;
  if (!l.exists(e.path / marker)) return "has no " + marker + " inside";
  return "";
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
Checkpoint judge_one(const Candidate& c, const config::CheckpointSettings& s, const Layout& layout, const PointerRead& read,
                     const Listing& l) {
  std::string why;
  bool proof = true;
  if (!s.complete_marker.empty()) why = marker_problem(c.entry, s.complete_marker, l);
  else if (!layout.last_file.empty()) why = marker_problem(c.entry, std::string(layout.last_file), l);
  else {
    why = l.emptiness(c.entry);
    if (why.empty()) why = pointer_rule(c, layout, read);
    proof = !layout.pointer_file.empty() && read.pointer;  // the pointer's word; pointer_problem may take it back
  }
  return Checkpoint{c.entry.path.string(), c.step, why.empty(), why, why.empty() && proof};
}

// Why the pointer cannot be trusted, once the checkpoints are judged; "" when it can.
std::string pointer_problem(const PointerRead& read, const Layout& layout, const Scan& scan, const fs::path& dir,
                            const Listing& l) {
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
  const bool exists = l.exists(dir / target);
  return file + " names " + target + ", which " + (exists ? "is not a checkpoint folder" : "does not exist");
}

}  // namespace

std::string settings_problem(const config::CheckpointSettings& s) {
  const Layout* layout = find_layout(s.layout);
  if (!layout) return "checkpoint.layout \"" + s.layout + "\" is not one of megatron, deepspeed, hf, glob";
  const auto naming = make_naming(s, *layout);
  return naming ? "" : naming.error().message;
}

std::string pointer_file(const config::CheckpointSettings& s) {
  const Layout* layout = find_layout(s.layout);
  return layout ? std::string(layout->pointer_file) : "";
}

std::string pointer_text(const config::CheckpointSettings& s, const Checkpoint& c) {
  const Layout* layout = find_layout(s.layout);
  if (!layout || layout->pointer_file.empty()) return "";
  const std::string name = fs::path(c.path).filename().string();
  if (layout->name == "megatron") return name == "release" ? name : std::to_string(c.step);
  return name;
}

Scan judge(const config::CheckpointSettings& s, const Listing& l) {
  Scan out;
  if (out.dir_problem = settings_problem(s); !out.dir_problem.empty()) return out;
  const Layout& layout = *find_layout(s.layout);
  const auto naming = make_naming(s, layout);
  const auto read = read_pointer(layout, l);
  for (const auto& c : candidates(l.entries, layout, *naming, read)) out.checkpoints.push_back(judge_one(c, s, layout, read, l));
  std::sort(out.checkpoints.begin(), out.checkpoints.end(),
            [](const Checkpoint& a, const Checkpoint& b) { return std::tie(a.step, a.path) < std::tie(b.step, b.path); });
  if (read.pointer) out.pointer_step = read.pointer->step;
  out.pointer_problem = pointer_problem(read, layout, out, s.dir, l);
  if (!out.pointer_problem.empty() && s.complete_marker.empty())
    for (auto& c : out.checkpoints) c.proven = false;  // a pointer that cannot be trusted proves nothing
  return out;
}

std::optional<Checkpoint> newest_complete(const Scan& scan) {
  const auto found = std::find_if(scan.checkpoints.rbegin(), scan.checkpoints.rend(),
                                  [](const Checkpoint& c) { return c.complete; });
  if (found == scan.checkpoints.rend()) return std::nullopt;
  return *found;
}

}  // namespace mlsup::checkpoint
