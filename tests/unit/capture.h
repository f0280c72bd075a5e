#pragma once
// Test helper: what a CLI verb prints on stdout while it runs, and the code it returns.
#include <iostream>
#include <sstream>
#include <string>

namespace mlsup::test {

struct Captured {
  int code = 0;
  std::string out;
};

// Runs verb() with std::cout sent to a string.
template <class Verb>
Captured capture(Verb verb) {
  std::ostringstream out;
  auto* saved = std::cout.rdbuf(out.rdbuf());
  Captured c;
  try {
    c.code = verb();
  } catch (...) {
    std::cout.rdbuf(saved);
    throw;
  }
  std::cout.rdbuf(saved);
  c.out = out.str();
  return c;
}

}  // namespace mlsup::test
