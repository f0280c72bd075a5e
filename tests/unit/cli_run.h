#pragma once
// Test helper: `mlsup ARGS...` run in this process, with its exit code, stdout and stderr.
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
  const auto said = capture([&] { return cli::run(static_cast<int>(argv.size()), argv.data()); });
  return {said.code, said.out, said.err};
}

}  // namespace mlsup::test
