#pragma once
// What the fuzz harnesses share: the input as text, a scratch folder per input, quiet streams, and
// a check that aborts (a finding) when a parser breaks its own contract.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>

namespace mlsup::fuzz {

// The input bytes as text (any bytes, NUL included).
inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Aborts with what was expected when cond is false: the fuzzer records the input as a crash.
inline void check(bool cond, const char* what) {
  if (cond) return;
  std::fprintf(stderr, "fuzz contract broken: %s\n", what);
  std::abort();
}

// A fresh folder under $TMPDIR (else /tmp) for one input; it and all it holds go at destruction.
class Scratch {
 public:
  Scratch() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/mlsup-fuzz.XXXXXX";
    check(::mkdtemp(pattern.data()) != nullptr, "a scratch folder can be made");
    dir_ = pattern;
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // The path of name inside the folder.
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Writes bytes to name (its parent folders made) and returns its path.
  std::string write(const std::string& name, std::string_view bytes) const {
    const auto file = dir_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream out(file, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    check(static_cast<bool>(out), "a scratch file can be written");
    return file.string();
  }

 private:
  std::filesystem::path dir_;
};

// Sends std::cout and std::cerr into a buffer while it lives (verbs that print are called quietly).
class Quiet {
 public:
  Quiet() : out_(std::cout.rdbuf(sink_.rdbuf())), err_(std::cerr.rdbuf(sink_.rdbuf())) {}
  Quiet(const Quiet&) = delete;
  Quiet& operator=(const Quiet&) = delete;
  ~Quiet() {
    std::cout.rdbuf(out_);
    std::cerr.rdbuf(err_);
  }

 private:
  std::ostringstream sink_;
  std::streambuf* out_;
  std::streambuf* err_;
};

}  // namespace mlsup::fuzz
