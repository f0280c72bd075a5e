// The one table of event kinds: README's list is the table, row by row; names are unique and sorted.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "events/kinds.h"

using namespace mlsup;

namespace {

// The rows of README's "## Event kinds" table: {kind, told when}.
std::vector<std::pair<std::string, std::string>> readme_rows() {
  std::ifstream in(std::string(MLSUP_SOURCE_DIR) + "/README.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  const auto from = all.find("\n## Event kinds\n");
  REQUIRE(from != std::string::npos);
  const auto to = all.find("\n## ", from + 1);
  std::istringstream section(all.substr(from, to - from));
  static const std::regex row(R"(^\| `([a-z-]+)` \| (.*) \|$)");
  std::vector<std::pair<std::string, std::string>> out;
  std::smatch m;
  for (std::string line; std::getline(section, line);)
    if (std::regex_match(line, m, row)) out.emplace_back(m[1], m[2]);
  return out;
}

}  // namespace

TEST_CASE("event kinds: README lists the table's kinds, in its order and words") {
  std::vector<std::pair<std::string, std::string>> table;
  for (const auto& k : events::kEventKinds) table.emplace_back(k.name, k.tells);
  CHECK(readme_rows() == table);
}

TEST_CASE("event kinds: each name once, in order; an older name maps to a kind of the table") {
  std::set<std::string_view> seen;
  std::string_view last;
  for (const auto& k : events::kEventKinds) {
    CHECK(seen.insert(k.name).second);
    CHECK(last < k.name);
    last = k.name;
  }
  for (const auto& [old, now] : events::kEventKindsRenamed) {
    CHECK(!events::is_event_kind(old));
    CHECK(events::is_event_kind(now));
    CHECK(events::current_event_kind(old) == now);
  }
  CHECK(events::EventKind("attempt-ended").name() == "attempt-ended");
}
