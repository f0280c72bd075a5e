#include "render/directives.h"

#include <array>
#include <utility>

#include "util/strings.h"

namespace mlsup::render {
namespace {

// sbatch's short options that mlsup needs to understand, and their long names.
constexpr std::array<std::pair<char, std::string_view>, 16> kShortOptions{{
    {'N', "nodes"}, {'n', "ntasks"}, {'t', "time"}, {'a', "array"}, {'o', "output"}, {'e', "error"},
    {'J', "job-name"}, {'x', "exclude"}, {'p', "partition"}, {'c', "cpus-per-task"}, {'w', "nodelist"},
    {'A', "account"}, {'q', "qos"}, {'G', "gpus"}, {'D', "chdir"}, {'C', "constraint"},
}};

// sbatch options that take no value.
constexpr std::array<std::string_view, 12> kFlags{
    "exclusive", "requeue", "no-requeue", "hold", "overcommit", "contiguous",
    "parsable", "wait", "spread-job", "use-min-nodes", "no-kill", "test-only"};

bool is_flag(std::string_view option) {
  for (auto f : kFlags)
    if (f == option) return true;
  return false;
}

std::string long_name(char short_option) {
  for (const auto& [c, name] : kShortOptions)
    if (c == short_option) return std::string(name);
  return std::string(1, short_option);
}

// Splits a directive's text into words, honouring single and double quotes; '#' starts a comment.
util::Result<std::vector<std::string>> words(std::string_view text) {
  std::vector<std::string> out;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : text) {
    if (quote) {
      if (c == quote) quote = 0; else word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      if (in_word) out.push_back(std::exchange(word, {}));
      in_word = false;
    } else if (c == '#' && !in_word) {
      break;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote) return util::fail(std::string("unclosed ") + quote + " quote");
  if (in_word) out.push_back(word);
  return out;
}

// Turns the words of one #SBATCH line into directives.
util::Result<void> options(const std::vector<std::string>& ws, int line, std::vector<Directive>& out) {
  for (std::size_t i = 0; i < ws.size(); ++i) {
    const std::string& w = ws[i];
    std::string option, value;
    bool has_value = false;
    if (util::starts_with(w, "--")) {
      const auto eq = w.find('=');
      option = w.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      if (eq != std::string::npos) value = w.substr(eq + 1), has_value = true;
    } else if (w.size() >= 2 && w[0] == '-') {
      option = long_name(w[1]);
      if (w.size() > 2) value = w.substr(2), has_value = true;
    } else {
      return util::fail("\"" + w + "\" is not an option (options start with - or --)");
    }
    if (!has_value && !is_flag(option) && i + 1 < ws.size() && !util::starts_with(ws[i + 1], "-")) value = ws[++i];
    out.push_back({option, value, line});
  }
  return {};
}

}  // namespace

const Directive* Directives::find(std::string_view option) const {
  for (auto it = items.rbegin(); it != items.rend(); ++it)
    if (it->option == option) return &*it;
  return nullptr;
}

util::Result<Directives> parse_directives(const std::string& name, std::string_view script) {
  Directives result;
  int line = 0;
  for (const auto& raw : util::split(script, '\n')) {
    ++line;
    const std::string_view text = util::trim(raw);
    if (line == 1 && util::starts_with(text, "#!")) continue;
    if (text.empty()) continue;
    if (!util::starts_with(text, "#")) break;
    if (!util::starts_with(text, "#SBATCH")) continue;
    auto ws = words(text.substr(7));
    auto ok = ws ? options(*ws, line, result.items) : util::Result<void>(std::unexpected(ws.error()));
    if (!ok) {
      return std::unexpected(util::Error{.file = name, .line = line, .column = 1, .subject = "#SBATCH",
                                         .message = ok.error().message});
    }
  }
  return result;
}

}  // namespace mlsup::render
