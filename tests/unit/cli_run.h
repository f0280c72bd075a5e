#pragma once
// Test helper: `mlsup ARGS...` run in this process, with its exit code, stdout and stderr.
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "capture.h"
#include "cli/app.h"

namespace mlsup::test {

struct Said {
  int code = 0;
  std::string out, err;
};

// `mlsup ARGS...` in this process: its exit code, stdout and stderr.
inline Said mlsup_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "mlsup");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream err;
  auto* saved = std::cerr.rdbuf(err.rdbuf());
  const auto out = capture([&] { return cli::run(static_cast<int>(argv.size()), argv.data()); });
  std::cerr.rdbuf(saved);
  return {out.code, out.out, err.str()};
}

}  // namespace mlsup::test
