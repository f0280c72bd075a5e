// The checkpoint layouts are written down in four places: the config's choices (config/schema.cpp), the
// scan that judges them (checkpoint/checkpoints.cpp), the Python helper (python/mlsup_train/checkpoints.py)
// and the test trainer (examples/trainer/train.py, which does not import the helper). Each Python table's
// folders and pointers, written as its training writes them, must be what the scan finds complete at the step.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "checkpoint/checkpoints.h"
#include "config/schema.h"
#include "support.h"

using namespace mlsup;

namespace {

// One row of a Python LAYOUTS table: "name": Layout("folder", "pointer file", "pointer text"[, "last file"]).
struct PyLayout {
  std::string name, folder, pointer_file, pointer_text, last_file;
};

std::vector<PyLayout> python_layouts(const std::string& file) {
  std::ifstream in(test::source_dir() + "/" + file);
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  static const std::regex row(R"re("(\w+)": Layout\("([^"]*)", "([^"]*)", "([^"]*)"(?:, "([^"]*)")?\))re");
  std::vector<PyLayout> out;
  for (std::sregex_iterator it(all.begin(), all.end(), row), end; it != end; ++it)
    out.push_back({(*it)[1], (*it)[2], (*it)[3], (*it)[4], (*it)[5]});
  return out;
}

// Python's str.format of the patterns these tables use: {step} and {step:07d}.
std::string format_step(std::string pattern, long long step) {
  std::string padded = std::to_string(step);
  if (padded.size() < 7) padded.insert(0, 7 - padded.size(), '0');
  for (const auto& [tag, value] : {std::pair<std::string, std::string>{"{step:07d}", padded}, {"{step}", std::to_string(step)}})
    for (auto at = pattern.find(tag); at != std::string::npos; at = pattern.find(tag)) pattern.replace(at, tag.size(), value);
  return pattern;
}

}  // namespace

TEST_CASE("checkpoint layouts: the config's choices, the scan, the Python helper and the test trainer agree") {
  const auto* key = config::find_key("checkpoint.layout");
  REQUIRE(key != nullptr);
  const std::set<std::string> choices(key->choices.begin(), key->choices.end());
  for (const std::string file : {"python/mlsup_train/checkpoints.py", "examples/trainer/train.py"}) {
    const auto rows = python_layouts(file);
    std::set<std::string> names;
    for (const auto& r : rows) names.insert(r.name);
    CHECK_MESSAGE(names == choices, file);
    for (const auto& r : rows) {
      CAPTURE(file);
      CAPTURE(r.name);
      test::TempDir dir;
      const std::string folder = format_step(r.folder, 1234);
      dir.write(folder + "/COMPLETE", "1234\n");  // both write the marker a config may name
      if (!r.last_file.empty()) dir.write(folder + "/" + r.last_file, "{}\n");
      if (!r.pointer_file.empty()) dir.write(r.pointer_file, format_step(r.pointer_text, 1234));
      config::CheckpointSettings s;
      s.dir = dir.path();
      s.layout = r.name;
      s.complete_marker = r.name == "glob" ? "COMPLETE" : "";
      const auto scan = checkpoint::scan(s);
      CHECK(scan.pointer_problem.empty());
      REQUIRE(scan.checkpoints.size() == 1);
      CHECK(scan.checkpoints[0].step == 1234);
      CHECK(scan.checkpoints[0].complete);
      CHECK(scan.checkpoints[0].proven);
    }
  }
}
