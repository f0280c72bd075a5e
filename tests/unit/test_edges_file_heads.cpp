// FileHeads: a heartbeat file unchanged since its last read is not opened again; any change of its
// inode, size or write time, or a write too close to the read to trust its time, reads it again.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdio>
#include <ctime>
#include <fstream>

#include "edges/file_heads.h"
#include "support.h"

using mlsup::edges::FileHeads;

namespace {

// Sets path's write time to seconds before now.
void age(const std::string& path, double seconds) {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  const timespec t{now.tv_sec - static_cast<time_t>(seconds), 0};
  const timespec times[2] = {t, t};
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

}  // namespace

TEST_CASE("FileHeads: a file written long before its read is not opened again until it changes") {
  mlsup::test::TempDir dir;
  const auto path = dir.write("hb", "5\n");
  age(path, 60);
  FileHeads heads;
  REQUIRE(heads.read(path, 256));
  CHECK(heads.read(path, 256)->text == "5\n");
  CHECK(heads.opened() == 1);
  CHECK(heads.read(path, 256)->written == doctest::Approx(static_cast<double>(std::time(nullptr) - 60)).epsilon(0.001));
  std::ofstream(path) << "6\n";  // the same size, a new write time
  age(path, 30);
  CHECK(heads.read(path, 256)->text == "6\n");
  CHECK(heads.opened() == 2);
  const std::string beside = dir.write("hb.new", "7\n");  // replaced by a rename: the same size and time, another inode
  age(beside, 30);
  REQUIRE(std::rename(beside.c_str(), path.c_str()) == 0);
  CHECK(heads.read(path, 256)->text == "7\n");
  CHECK(heads.opened() == 3);
  std::ofstream(path) << "70\n";  // another size, the same time
  age(path, 30);
  CHECK(heads.read(path, 256)->text == "70\n");
  CHECK(heads.opened() == 4);
}

TEST_CASE("FileHeads: a file written within kRacy seconds of its read is read every time; a missing one is nullopt") {
  mlsup::test::TempDir dir;
  const auto path = dir.write("hb", "5\n");
  FileHeads heads;
  CHECK(heads.read(path, 256)->text == "5\n");
  CHECK(heads.read(path, 256)->text == "5\n");
  CHECK(heads.opened() == 2);  // its time could hide a same-size write within the same tick of the clock
  CHECK_FALSE(heads.read(dir.path() + "/none", 256));
  std::remove(path.c_str());
  CHECK_FALSE(heads.read(path, 256));
}

TEST_CASE("FileHeads: a file not read in the last look is forgotten, so its next read opens it") {
  mlsup::test::TempDir dir;
  const auto a = dir.write("a", "1\n");
  const auto b = dir.write("b", "2\n");
  age(a, 60);
  age(b, 60);
  FileHeads heads;
  heads.read(a, 256);
  heads.read(b, 256);
  heads.forget_unread();
  heads.read(a, 256);  // b is not in this look
  heads.forget_unread();
  CHECK(heads.opened() == 2);
  heads.read(a, 256);
  heads.read(b, 256);
  CHECK(heads.opened() == 3);
}

TEST_CASE("FileHeads: a longer file's head says its size, as util::read_head does") {
  mlsup::test::TempDir dir;
  const auto path = dir.write("hb", std::string(300, 'x'));
  FileHeads heads;
  CHECK(heads.read(path, 256)->text == std::string(256, 'x') + "\n... 300 bytes");
}
