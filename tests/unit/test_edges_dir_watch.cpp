// DirWatch: a file renamed into, or created in, a watched folder tells its key and name once per batch
// of events; a hidden (temporary) name, a forgotten key, another folder, or a closed watch tells nothing.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "edges/dir_watch.h"
#include "support.h"

using mlsup::edges::DirWatch;

namespace {

using Told = std::vector<std::pair<std::string, std::string>>;  // (key, name), in the order told

// A watch on its own io_context over a temporary folder, keeping what it tells.
struct Watched {
  mlsup::test::TempDir dir;
  boost::asio::io_context io;
  Told told;
  DirWatch watch{io, [this](const std::string& key, const std::string& name) { told.emplace_back(key, name); }};

  // Runs io for 300 ms (the events are read at once); the keys told in that time.
  std::set<std::string> run() {
    told.clear();
    io.restart();
    io.run_for(std::chrono::milliseconds(300));
    std::set<std::string> keys;
    for (const auto& [key, name] : told) keys.insert(key);
    return keys;
  }
  std::string at(const std::string& relative) const { return dir.path() + "/" + relative; }
};

}  // namespace

TEST_CASE("DirWatch: a record renamed into a watched folder (as the job's script writes it) tells its key") {
  Watched w;
  REQUIRE(w.watch.available());
  const auto ends = w.at("a/ends");  // not there yet: created by watch()
  REQUIRE(w.watch.watch("a.yaml", ends));
  CHECK(std::filesystem::is_directory(ends));
  REQUIRE(w.watch.watch("b.yaml", w.at("b/ends")));
  CHECK(w.watch.size() == 2);

  w.dir.write("a/ends/.1234.99", "exit_code=0\n");
  CHECK(w.run().empty());  // the writer's hidden temporary file
  REQUIRE(std::rename((ends + "/.1234.99").c_str(), (ends + "/1234").c_str()) == 0);
  CHECK(w.run() == std::set<std::string>{"a.yaml"});

  w.dir.write("elsewhere/1235", "exit_code=0\n");
  CHECK(w.run().empty());

  w.watch.forget("a.yaml");
  CHECK(w.watch.size() == 1);
  w.dir.write("a/ends/1236", "exit_code=0\n");
  w.dir.write("b/ends/1237", "exit_code=0\n");
  CHECK(w.run() == std::set<std::string>{"b.yaml"});
}

TEST_CASE("DirWatch: two keys on one folder are both told, and forgetting one keeps the other") {
  Watched w;
  REQUIRE(w.watch.watch("one", w.at("ends")));
  REQUIRE(w.watch.watch("two", w.at("ends")));
  w.dir.write("ends/1", "x");
  CHECK(w.run() == std::set<std::string>{"one", "two"});
  w.watch.forget("one");
  w.dir.write("ends/2", "x");
  CHECK(w.run() == std::set<std::string>{"two"});
}

TEST_CASE("DirWatch: closed, it tells nothing and leaves the io_context with no work") {
  Watched w;
  REQUIRE(w.watch.watch("a", w.at("ends")));
  w.watch.close();
  CHECK(w.watch.size() == 0);
  CHECK_FALSE(w.watch.watch("a", w.at("ends")));
  w.dir.write("ends/1", "x");
  const auto began = std::chrono::steady_clock::now();
  w.io.restart();
  w.io.run();  // returns at once: nothing is pending
  CHECK(std::chrono::steady_clock::now() - began < std::chrono::seconds(5));  // blocking, it would never return
  CHECK(w.told.empty());
}

TEST_CASE("DirWatch: the name told is the record's, once for a create and a rename read together") {
  Watched w;
  REQUIRE(w.watch.watch("a", w.at("ends")));
  w.dir.write("ends/.77.1", "x");
  REQUIRE(std::rename(w.at("ends/.77.1").c_str(), w.at("ends/77").c_str()) == 0);
  w.dir.write("ends/78", "x");
  w.run();
  CHECK(w.told == Told{{"a", "77"}, {"a", "78"}});
}
