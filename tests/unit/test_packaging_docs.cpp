// The man page and the bash completion are written by hand: every verb the program has, each verb's
// options, and every exit code of the table must be in them (so a new verb or option fails here).
#include <doctest/doctest.h>

#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.h"
#include "cli/app.h"
#include "decide/exit_codes.h"
#include "util/strings.h"

using namespace mlsup;

namespace {

std::string read_source(const std::string& relative) {
  std::ifstream in(std::string(MLSUP_SOURCE_DIR) + "/" + relative);
  REQUIRE_MESSAGE(in.good(), relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// What `mlsup ARGS...` prints on stdout and stderr together.
std::string said(std::vector<std::string> args) {
  const auto r = test::mlsup_cli(std::move(args));
  return r.out + r.err;
}

// The verbs, as a mistyped one lists them ("the commands are a, b, c;").
std::vector<std::string> verbs() {
  const auto text = said({"no-such-verb"});
  const std::string lead = "the commands are ";
  const auto from = text.find(lead);
  REQUIRE(from != std::string::npos);
  const auto to = text.find(';', from);
  std::vector<std::string> out;
  std::stringstream list(text.substr(from + lead.size(), to - from - lead.size()));
  for (std::string name; std::getline(list, name, ',');) out.push_back(name.substr(name.find_first_not_of(' ')));
  return out;
}

// The long options of one verb's --help, but --help itself.
std::set<std::string> options_of(const std::string& verb) {
  const auto text = said({verb, "--help"});
  std::set<std::string> out;
  const std::regex option("--[a-z][a-z-]*");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), option); it != std::sregex_iterator(); ++it)
    if (it->str() != "--help") out.insert(it->str());
  return out;
}

std::string roff(const std::string& s) { return std::regex_replace(s, std::regex("-"), "\\-"); }

}  // namespace

TEST_CASE("packaging: the man page has every verb, each verb's options and every exit code") {
  const auto man = read_source("packaging/mlsup.1");
  const auto names = verbs();
  CHECK(names.size() == 19);
  for (const auto& verb : names) {
    CHECK_MESSAGE(man.find(".BI \"" + verb + " ") != std::string::npos, verb);
    for (const auto& option : options_of(verb))
      CHECK_MESSAGE(man.find(roff(option)) != std::string::npos, (verb + " " + option));
  }
  CHECK(man.find(".B \\-\\-version") != std::string::npos);
  for (const auto& row : decide::exit_codes()) {
    const auto entry = ".B " + std::to_string(static_cast<int>(row.code)) + "\n";
    CHECK_MESSAGE(man.find(entry) != std::string::npos, row.meaning);
  }
}

TEST_CASE("packaging: the bash completion offers every verb and each verb's options") {
  const auto completion = read_source("packaging/mlsup.bash-completion");
  const auto line = completion.substr(completion.find("local verbs=\""));
  const auto listed = line.substr(0, line.find('\n'));
  for (const auto& verb : verbs()) {
    const bool offered = listed.find(" " + verb) != std::string::npos || listed.find("\"" + verb) != std::string::npos;
    CHECK_MESSAGE(offered, verb);
    for (const auto& option : options_of(verb))
      CHECK_MESSAGE(completion.find(option) != std::string::npos, (verb + " " + option));
  }
}
