#include <doctest/doctest.h>

#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "journal/atomic_file.h"
#include "full_disk.h"
#include "support.h"

using namespace mlsup::journal;
using mlsup::test::FullDisk;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> names_in(const std::string& folder) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(folder)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("atomic_file: write_atomically replaces the content and leaves no temporary file") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.path() + "/state.json";
  REQUIRE(write_atomically(path, "one\n"));
  CHECK(*read_file(path) == "one\n");
  REQUIRE(write_atomically(path, "two\n", 0600));
  CHECK(*read_file(path) == "two\n");
  CHECK((fs::status(path).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));
  CHECK(names_in(tmp.path()) == std::vector<std::string>{"state.json"});
}

TEST_CASE("atomic_file: an empty text gives an empty file") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.path() + "/empty";
  REQUIRE(write_atomically(path, ""));
  CHECK(*read_file(path) == "");
}

TEST_CASE("atomic_file: read_file tells a missing file apart only through read_file_if_exists") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.path() + "/absent";
  const auto missing = read_file(path);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().file == path);
  CHECK(missing.error().message.find("No such file") != std::string::npos);
  const auto maybe = read_file_if_exists(path);
  REQUIRE(maybe);
  CHECK_FALSE(maybe->has_value());
}

TEST_CASE("atomic_file: a folder that does not exist is an error naming the path") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.path() + "/no/such/folder/file";
  const auto written = write_atomically(path, "x");
  REQUIRE_FALSE(written);
  CHECK(written.error().str().find(path) == 0);
}

TEST_CASE("atomic_file: on a full disk the write fails, the old content stays and no temporary file is left") {
  FullDisk disk;
  MESSAGE(std::string(disk.mounted() ? "full disk: a 64 KiB tmpfs" : "full disk: simulated with RLIMIT_FSIZE (mount not permitted)"));
  const std::string path = disk.folder() + "/state.json";
  REQUIRE(write_atomically(path, "old\n"));
  const auto before = names_in(disk.folder());
  disk.fill(100);
  const auto written = write_atomically(path, std::string(8192, 'n'));
  disk.make_room();
  REQUIRE_FALSE(written);
  CHECK(written.error().file == path);
  CHECK(written.error().message.find(disk.mounted() ? "No space left on device" : "File too large") != std::string::npos);
  CHECK(*read_file(path) == "old\n");
  CHECK(names_in(disk.folder()) == before);
  REQUIRE(write_atomically(path, "new\n"));
  CHECK(*read_file(path) == "new\n");
}

TEST_CASE("atomic_file: the file's mode is the one asked for less the umask, as for a file open(2) creates") {
  mlsup::test::TempDir tmp;
  const mode_t before = ::umask(077);  // a user who keeps state private
  const auto written = write_atomically(tmp.path() + "/private", "x", 0644);
  const auto created = tmp.path() + "/created";
  std::ofstream(created) << "x";
  ::umask(before);
  REQUIRE(written);
  struct stat st{};
  REQUIRE(::stat((tmp.path() + "/private").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  REQUIRE(::stat(created.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
}
