#pragma once
// Test helper: what a CLI verb prints on stdout and stderr while it runs, and the code it returns.
#include <iostream>
#include <sstream>
#include <string>

namespace mlsup::test {

struct Captured {
  int code = 0;
  std::string out;
  std::string err;
};

// Runs verb() with std::cout and std::cerr sent to strings.
template <class Verb>
Captured capture(Verb verb) {
  std::ostringstream out, err;
  auto* saved_out = std::cout.rdbuf(out.rdbuf());
  auto* saved_err = std::cerr.rdbuf(err.rdbuf());
  Captured c;
  try {
    c.code = verb();
  } catch (...) {
    std::cout.rdbuf(saved_out);
    std::cerr.rdbuf(saved_err);
    throw;
  }
  std::cout.rdbuf(saved_out);
  std::cerr.rdbuf(saved_err);
  c.out = out.str();
  c.err = err.str();
  return c;
}

}  // namespace mlsup::test
