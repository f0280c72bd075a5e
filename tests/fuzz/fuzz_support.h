#pragma once
// What the fuzz harnesses share: the input as text, a scratch folder, quiet streams, and
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

// The folder where a harness puts the files it hands to a parser: one per process, made at the first
// call under $TMPDIR, else /dev/shm (memory: no disk write, no sync, per input), else /tmp, and removed
// at exit. Each input overwrites the files it uses, so no input sees another's.
class Scratch {
 public:
  static const Scratch& once() {
    static const Scratch scratch;
    return scratch;
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  // The path of name inside the folder.
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Writes bytes to name, replacing it (its parent folders made), and returns its path.
  std::string write(const std::string& name, std::string_view bytes) const {
    const auto file = dir_ / name;
    std::error_code ec;
    if (!std::filesystem::is_directory(file.parent_path(), ec)) std::filesystem::create_directories(file.parent_path());
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    check(static_cast<bool>(out), "a scratch file can be written");
    return file.string();
  }

 private:
  Scratch() {
    const char* tmpdir = std::getenv("TMPDIR");
    for (const std::string& base : {std::string(tmpdir ? tmpdir : ""), std::string("/dev/shm"), std::string("/tmp")}) {
      std::string pattern = base + "/mlsup-fuzz.XXXXXX";
      if (base.empty() || ::mkdtemp(pattern.data()) == nullptr) continue;
      dir_ = pattern;
      return;
    }
    check(false, "a scratch folder can be made");
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

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
