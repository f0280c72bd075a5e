// DirWatch: a file renamed into, or created in, a watched folder tells its key and name once per batch
// of events; a hidden (temporary) name, a forgotten key, another folder, or a closed watch tells nothing.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "edges/dir_watch.h"
#include "support.h"

using mlsup::edges::DirWatch;

namespace {

// Runs io for 300 ms (the events are read at once) and returns the tells by key so far.
std::map<std::string, int> run_for(boost::asio::io_context& io, const std::map<std::string, int>& told) {
  io.restart();
  io.run_for(std::chrono::milliseconds(300));
  return told;
}

}  // namespace

TEST_CASE("DirWatch: a record renamed into a watched folder (as the job's script writes it) tells its key") {
  mlsup::test::TempDir dir;
  boost::asio::io_context io;
  std::map<std::string, int> told;
  DirWatch watch(io, [&](const std::string& key, const std::string&) { ++told[key]; });
  REQUIRE(watch.available());
  const auto ends = dir.path() + "/a/ends";  // not there yet: created by watch()
  REQUIRE(watch.watch("a.yaml", ends));
  CHECK(std::filesystem::is_directory(ends));
  REQUIRE(watch.watch("b.yaml", dir.path() + "/b/ends"));
  CHECK(watch.size() == 2);

  dir.write("a/ends/.1234.99", "exit_code=0\n");
  CHECK(run_for(io, told).empty());  // the writer's hidden temporary file
  REQUIRE(std::rename((ends + "/.1234.99").c_str(), (ends + "/1234").c_str()) == 0);
  const auto first = run_for(io, told);
  CHECK(first.size() == 1);
  CHECK(first.count("a.yaml") == 1);

  told.clear();
  dir.write("elsewhere/1235", "exit_code=0\n");
  CHECK(run_for(io, told).empty());

  watch.forget("a.yaml");
  CHECK(watch.size() == 1);
  dir.write("a/ends/1236", "exit_code=0\n");
  dir.write("b/ends/1237", "exit_code=0\n");
  const auto after = run_for(io, told);
  CHECK(after.count("a.yaml") == 0);
  CHECK(after.count("b.yaml") == 1);
}

TEST_CASE("DirWatch: two keys on one folder are both told, and forgetting one keeps the other") {
  mlsup::test::TempDir dir;
  boost::asio::io_context io;
  std::map<std::string, int> told;
  DirWatch watch(io, [&](const std::string& key, const std::string&) { ++told[key]; });
  REQUIRE(watch.watch("one", dir.path() + "/ends"));
  REQUIRE(watch.watch("two", dir.path() + "/ends"));
  dir.write("ends/1", "x");
  auto both = run_for(io, told);
  CHECK(both.count("one") == 1);
  CHECK(both.count("two") == 1);
  told.clear();
  watch.forget("one");
  dir.write("ends/2", "x");
  auto rest = run_for(io, told);
  CHECK(rest.count("one") == 0);
  CHECK(rest.count("two") == 1);
}

TEST_CASE("DirWatch: closed, it tells nothing and leaves the io_context with no work") {
  mlsup::test::TempDir dir;
  boost::asio::io_context io;
  std::map<std::string, int> told;
  DirWatch watch(io, [&](const std::string& key, const std::string&) { ++told[key]; });
  REQUIRE(watch.watch("a", dir.path() + "/ends"));
  watch.close();
  CHECK(watch.size() == 0);
  CHECK_FALSE(watch.watch("a", dir.path() + "/ends"));
  dir.write("ends/1", "x");
  const auto began = std::chrono::steady_clock::now();
  io.restart();
  io.run();  // returns at once: nothing is pending
  CHECK(std::chrono::steady_clock::now() - began < std::chrono::seconds(1));
  CHECK(told.empty());
}

TEST_CASE("DirWatch: the name told is the record's, once for a create and a rename read together") {
  mlsup::test::TempDir dir;
  boost::asio::io_context io;
  std::vector<std::pair<std::string, std::string>> told;
  DirWatch watch(io, [&](const std::string& key, const std::string& name) { told.emplace_back(key, name); });
  REQUIRE(watch.watch("a", dir.path() + "/ends"));
  dir.write("ends/.77.1", "x");
  REQUIRE(std::rename((dir.path() + "/ends/.77.1").c_str(), (dir.path() + "/ends/77").c_str()) == 0);
  dir.write("ends/78", "x");
  io.run_for(std::chrono::milliseconds(300));
  CHECK(told == std::vector<std::pair<std::string, std::string>>{{"a", "77"}, {"a", "78"}});
}
