// The exit-code table is the one source: README's table and --help say exactly what it says.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "decide/exit_codes.h"
#include "support.h"

using namespace mlsup;

namespace {

// README's exit-code table rows: "| `N` | meaning |" -> (N, meaning).
std::vector<std::pair<int, std::string>> readme_rows() {
  std::ifstream in(test::source_dir() + "/README.md");
  std::vector<std::pair<int, std::string>> rows;
  static const std::regex row(R"(^\| `(\d+)` \| (.*) \|$)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, row)) rows.emplace_back(std::stoi(m[1].str()), m[2].str());
  }
  return rows;
}

}  // namespace

TEST_CASE("exit codes: README's table is the table, row for row") {
  const auto readme = readme_rows();
  const auto table = decide::exit_codes();
  REQUIRE(readme.size() == table.size());
  for (std::size_t i = 0; i < table.size(); ++i) {
    CAPTURE(i);
    CHECK(readme[i].first == static_cast<int>(table[i].code));
    CHECK(readme[i].second == table[i].meaning);
  }
}

TEST_CASE("exit codes: --help lists every code with its meaning, in order, once") {
  const std::string help = decide::exit_code_help();
  std::size_t at = 0;
  for (const auto& row : decide::exit_codes()) {
    const auto found = help.find(std::string(row.meaning), at);
    CAPTURE(row.code);
    REQUIRE(found != std::string::npos);
    CHECK(help.substr(help.rfind('\n', found) + 1, 2 + std::to_string(static_cast<int>(row.code)).size()) ==
          "  " + std::to_string(static_cast<int>(row.code)));
    at = found;
  }
  int previous = -1;
  for (const auto& row : decide::exit_codes()) {
    CHECK(static_cast<int>(row.code) > previous);
    previous = static_cast<int>(row.code);
  }
}

TEST_CASE("exit codes: several campaigns' codes combine to the most severe, as README orders them") {
  const std::vector<int> none;
  CHECK(decide::most_severe(none) == 0);
  CHECK(decide::most_severe(std::vector<int>{0, 0, 0}) == 0);
  CHECK(decide::most_severe(std::vector<int>{0, 10, 6}) == 10);
  CHECK(decide::most_severe(std::vector<int>{11, 3, 14}) == 3);
  CHECK(decide::most_severe(std::vector<int>{5, 6, 0}) == 5);
  CHECK(decide::most_severe(std::vector<int>{14, 1}) == 1);
  // README says the order in one sentence: "... from the least severe: 0, 6, 5, ...".
  std::ifstream in(test::source_dir() + "/README.md");
  const std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string order;
  for (int code : decide::by_severity())  // the codes run and tick can end with (not the command line's own)
    if (code != decide::kUsage && code != decide::kNotStopped && code != decide::kAlreadyEnded &&
        code != decide::kNotExcluded)
      order += (order.empty() ? "" : ", ") + std::string("`") + std::to_string(code) + "`";
  CAPTURE(order);
  CHECK(readme.find("from the least severe: " + order + ".") != std::string::npos);
}
