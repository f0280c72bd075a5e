#include "decide/hang_stacks.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <optional>
#include <tuple>

#include "util/strings.h"

namespace mlsup::decide {
namespace {

struct Frame {
  std::string path, line, function;
};

struct Thread {
  bool current = false;
  std::vector<Frame> frames;  // innermost first
};

// "  File "PATH", line N in FUNC"; nullopt for any other line.
std::optional<Frame> parse_frame(std::string_view line) {
  line = util::trim(line);
  if (!util::starts_with(line, "File \"")) return std::nullopt;
  const auto close = line.find("\", line ", 6);
  const auto in = line.find(" in ", close == std::string_view::npos ? line.size() : close);
  if (close == std::string_view::npos || in == std::string_view::npos) return std::nullopt;
  return Frame{std::string(line.substr(6, close - 6)), std::string(line.substr(close + 8, in - close - 8)),
               std::string(line.substr(in + 4))};
}

// The last two parts of a path: enough to tell a frame, short enough to read.
std::string short_path(const std::string& path) {
  const auto last = path.rfind('/');
  if (last == std::string::npos || last == 0) return path;
  const auto before = path.rfind('/', last - 1);
  return before == std::string::npos ? path : path.substr(before + 1);
}

std::vector<Thread> parse_threads(const std::vector<std::string>& lines) {
  std::vector<Thread> threads;
  for (const auto& l : lines) {
    const bool current = util::starts_with(l, "Current thread 0x");
    if ((current || util::starts_with(l, "Thread 0x")) && l.find("(most recent call first)") != std::string::npos) {
      threads.push_back({current, {}});
      continue;
    }
    if (auto frame = parse_frame(l); frame && !threads.empty()) threads.back().frames.push_back(std::move(*frame));
  }
  return threads;
}

// The main thread: the one whose outermost frame is a script's top level, else the one that took the signal.
const Thread* main_thread(const std::vector<Thread>& threads) {
  for (const auto& t : threads)
    if (!t.frames.empty() && t.frames.back().function == "<module>") return &t;
  for (const auto& t : threads)
    if (t.current && !t.frames.empty()) return &t;
  for (const auto& t : threads)
    if (!t.frames.empty()) return &t;
  return nullptr;
}

// Where a frame is inside a collective or a wait: its file's folder, or its function's name.
constexpr std::array<std::string_view, 5> kWaitingPaths = {"/torch/distributed/", "/torch/autograd/", "/torch/_tensor.py",
                                                           "/torch/nn/parallel/", "/torch/cuda/streams.py"};
constexpr std::array<std::string_view, 10> kWaitingFunctions = {"wait",     "barrier",   "all_reduce",     "allreduce",
                                                                "all_gather", "broadcast", "reduce_scatter", "all_to_all",
                                                                "synchronize", "recv"};

bool waiting_frame(const Frame& f) {
  const auto in_path = [&](std::string_view p) { return f.path.find(p) != std::string::npos; };
  return std::any_of(kWaitingPaths.begin(), kWaitingPaths.end(), in_path) ||
         std::find(kWaitingFunctions.begin(), kWaitingFunctions.end(), f.function) != kWaitingFunctions.end();
}

// "file:line in function", the file by its last two parts.
std::string frame_text(const Frame& f) { return short_path(f.path) + ":" + f.line + " in " + f.function; }

// "rank=R node=N pid=P" after "mlsup stacks:".
void parse_header(std::string_view line, RankStacks& out) {
  if (!util::starts_with(line, "mlsup stacks:")) return;
  for (const auto& word : util::split(line.substr(13), ' ')) {
    const auto eq = word.find('=');
    if (eq == std::string::npos) continue;
    const auto key = word.substr(0, eq), value = word.substr(eq + 1);
    if (key == "node") out.node = value;
    else if (key == "pid") out.pid = value;
    else if (key == "rank" && !value.empty() && std::all_of(value.begin(), value.end(), ::isdigit) && value.size() < 9)
      out.rank = std::stoi(value);
  }
}

// 0, 1, 2, 5 -> "0-2, 5".
std::string ranges(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    parts.push_back(std::to_string(ranks[i]) + (j > i ? "-" + std::to_string(ranks[j]) : ""));
    i = j + 1;
  }
  return util::join(parts, ", ");
}

std::string ranks_text(const std::vector<int>& ranks) {
  return (ranks.size() == 1 ? "rank " : "ranks ") + ranges(ranks);
}

std::vector<int> ranks_where(const std::vector<RankStacks>& ranks, bool (*pick)(const RankStacks&)) {
  std::vector<int> out;
  for (const auto& r : ranks)
    if (pick(r)) out.push_back(r.rank);
  return out;
}

// Each place and its ranks, the most ranks first.
std::vector<std::pair<std::string, std::vector<int>>> places(const std::vector<RankStacks>& ranks) {
  std::map<std::string, std::vector<int>> by;
  for (const auto& r : ranks) by[r.dumped ? r.where : "no stack"].push_back(r.rank);
  std::vector<std::pair<std::string, std::vector<int>>> out(by.begin(), by.end());
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.second.size() != b.second.size() ? a.second.size() > b.second.size() : a.second.front() < b.second.front();
  });
  return out;
}

// The ranks singled out, and how.
std::pair<std::vector<int>, std::string> single_out(const std::vector<RankStacks>& ranks) {
  const auto dumped = ranks_where(ranks, [](const RankStacks& r) { return r.dumped; });
  const auto missing = ranks_where(ranks, [](const RankStacks& r) { return !r.dumped; });
  if (dumped.empty()) return {{}, "no rank left a stack (a training without the helper's faulthandler does not)"};
  if (!missing.empty())
    return {missing, ranks_text(missing) + " left no stack while the others did: gone, or stuck where no signal reaches"};
  const auto waiting = ranks_where(ranks, [](const RankStacks& r) { return r.waiting; });
  const auto busy = ranks_where(ranks, [](const RankStacks& r) { return !r.waiting; });
  if (!waiting.empty() && !busy.empty())
    return {busy, ranks_text(waiting) + (waiting.size() == 1 ? " waits" : " wait") + " in a collective while " +
                      ranks_text(busy) + " stopped outside one"};
  const auto all = places(ranks);
  if (all.size() == 1) return {{}, "every rank stopped at the same place: no rank is singled out"};
  if (all.front().second.size() * 2 <= ranks.size()) return {{}, "no place holds most ranks: no rank is singled out"};
  std::vector<int> rest;
  for (std::size_t i = 1; i < all.size(); ++i) rest.insert(rest.end(), all[i].second.begin(), all[i].second.end());
  std::sort(rest.begin(), rest.end());
  return {rest, ranks_text(rest) + " stopped elsewhere than the " + std::to_string(all.front().second.size()) + " others"};
}

}  // namespace

RankStacks parse_rank_stacks(std::string_view text) {
  RankStacks out;
  auto lines = util::split(text, '\n');
  if (!lines.empty()) parse_header(util::trim(lines.front()), out);
  std::size_t from = 1;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (util::starts_with(lines[i], kStacksAsked)) from = i + 1;
  const auto threads = parse_threads({lines.begin() + static_cast<std::ptrdiff_t>(std::min(from, lines.size())), lines.end()});
  const Thread* main = main_thread(threads);
  if (!main) return out;
  out.dumped = true;
  for (const auto& f : main->frames) out.stack.push_back(frame_text(f));
  out.where = out.stack.front();
  out.waiting = waiting_frame(main->frames.front());
  return out;
}

StacksVerdict judge_stacks(const std::vector<RankStacks>& ranks) {
  StacksVerdict v;
  for (const auto& [where, rs] : places(ranks)) v.groups.push_back(ranks_text(rs) + ": " + where);
  std::tie(v.waited_on, v.why) = single_out(ranks);
  for (const int w : v.waited_on)
    for (const auto& r : ranks)
      if (r.rank == w && !r.node.empty() && std::find(v.nodes.begin(), v.nodes.end(), r.node) == v.nodes.end())
        v.nodes.push_back(r.node);
  return v;
}

}  // namespace mlsup::decide
