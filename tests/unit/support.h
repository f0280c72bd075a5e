#pragma once
// Test helpers: a private temporary folder with files in it, removed at the end of the test.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace mlsup::test {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "mlsup-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes text to name inside the folder and returns its full path.
  std::string write(const std::string& name, const std::string& text) const {
    const auto file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
    return file.string();
  }

  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// The project's source folder, for tests that read shipped files.
inline std::string source_dir() { return MLSUP_SOURCE_DIR; }

}  // namespace mlsup::test
