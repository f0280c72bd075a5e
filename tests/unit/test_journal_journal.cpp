#include <doctest/doctest.h>

#include <sys/mount.h>
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "journal/atomic_file.h"
#include "journal/journal.h"
#include "full_disk.h"
#include "support.h"

using namespace mlsup::journal;
using mlsup::test::FullDisk;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kHeader = "{\"mlsup_journal\":1,\"campaign\":\"demo\"}\n";

std::string content(const std::string& path) { return *read_file(path); }

Journal open_ok(const std::string& path) {
  auto j = Journal::open(path, "demo");
  REQUIRE_MESSAGE(j, (j ? "" : j.error().str()));
  return std::move(*j);
}

std::vector<std::string> types_of(const Journal& j) {
  std::vector<std::string> types;
  for (const auto& r : j.records()) types.push_back(r.type);
  return types;
}

}  // namespace

TEST_CASE("journal: open creates the file with its header") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.path() + "/journal.jsonl";
  const Journal j = open_ok(path);
  CHECK(j.records().empty());
  CHECK(j.warnings().empty());
  CHECK(content(path) == kHeader);
}

TEST_CASE("journal: appended records read back after reopening") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.path() + "/journal.jsonl";
  {
    Journal j = open_ok(path);
    const auto first = j.append("submit-intent", {{"attempt", 1}, {"tag", "mlsup:demo:1"}}, 1000.5);
    REQUIRE(first);
    CHECK(first->seq == 1);
    CHECK(first->data["type"] == "submit-intent");
    REQUIRE(j.append("submitted", {{"attempt", 1}, {"job_id", 42}}, 1001));
    REQUIRE(j.append("note", nullptr, 1002));
  }
  CHECK(content(path).find("{\"seq\":1,\"time\":1000.5,\"type\":\"submit-intent\",\"attempt\":1,") == kHeader.size());
  const Journal j = open_ok(path);
  REQUIRE(j.records().size() == 3);
  CHECK(j.records()[0].seq == 1);
  CHECK(j.records()[0].time == 1000.5);
  CHECK(j.records()[0].data["tag"] == "mlsup:demo:1");
  CHECK(j.records()[1].seq == 2);
  CHECK(j.records()[1].type == "submitted");
  CHECK(j.records()[1].data["job_id"] == 42);
  CHECK(j.records()[2].data == json{{"seq", 3}, {"time", 1002.0}, {"type", "note"}});
  CHECK(j.warnings().empty());
}

TEST_CASE("journal: append refuses fields that are not an object or that set seq, time or type") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.path() + "/journal.jsonl";
  Journal j = open_ok(path);
  CHECK_FALSE(j.append("x", json::array({1, 2}), 1));
  const auto reserved = j.append("x", {{"seq", 7}}, 1);
  REQUIRE_FALSE(reserved);
  CHECK(reserved.error().message.find("\"seq\"") != std::string::npos);
  CHECK(j.records().empty());
  CHECK(content(path) == kHeader);
}

TEST_CASE("journal: a truncated last line is dropped, warned about, and cut off before the next append") {
  mlsup::test::TempDir tmp;
  const std::string good = kHeader + "{\"seq\":1,\"time\":1,\"type\":\"a\"}\n{\"seq\":2,\"time\":2,\"type\":\"b\"}\n";
  const std::string path = tmp.write("journal.jsonl", good + "{\"seq\":3,\"ti");
  Journal j = open_ok(path);
  CHECK(types_of(j) == std::vector<std::string>{"a", "b"});
  REQUIRE(j.warnings().size() == 1);
  CHECK(j.warnings()[0].find(path + ":4: dropped an incomplete last record") == 0);
  const auto appended = j.append("c", {{"k", "v"}}, 3);
  REQUIRE(appended);
  CHECK(appended->seq == 3);
  CHECK(content(path).find("\"ti\n") == std::string::npos);
  const Journal again = open_ok(path);
  CHECK(again.warnings().empty());
  CHECK(types_of(again) == std::vector<std::string>{"a", "b", "c"});
  CHECK(again.records()[2].data["k"] == "v");
}

TEST_CASE("journal: a garbled last line (zeros left by a crash) is dropped like a truncated one") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.write("journal.jsonl", kHeader + "{\"seq\":1,\"time\":1,\"type\":\"a\"}\n");
  { std::ofstream(path, std::ios::app | std::ios::binary) << std::string(5, '\0') << "\n"; }
  Journal j = open_ok(path);
  CHECK(types_of(j) == std::vector<std::string>{"a"});
  REQUIRE(j.warnings().size() == 1);
  CHECK(j.warnings()[0].find(":3: dropped a garbled last record") != std::string::npos);
  REQUIRE(j.append("b", {}, 2));
  CHECK(types_of(open_ok(path)) == std::vector<std::string>{"a", "b"});
}

TEST_CASE("journal: a garbled line in the middle is an error and the file is left alone") {
  mlsup::test::TempDir tmp;
  const std::string text = kHeader + "{\"seq\":1,\"time\":1,\"type\":\"a\"}\n{\"seq\":2,\"ti\n{\"seq\":3,\"time\":3,\"type\":\"c\"}\n";
  const std::string path = tmp.write("journal.jsonl", text);
  const auto j = Journal::open(path, "demo");
  REQUIRE_FALSE(j);
  CHECK(j.error().file == path);
  CHECK(j.error().line == 3);
  CHECK(j.error().message.find("damaged") != std::string::npos);
  CHECK(content(path) == text);
}

TEST_CASE("journal: sequence numbers that do not increase in the middle are an error") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.write("journal.jsonl", kHeader + "{\"seq\":2,\"time\":1,\"type\":\"a\"}\n"
                                                                "{\"seq\":2,\"time\":2,\"type\":\"b\"}\n"
                                                                "{\"seq\":3,\"time\":3,\"type\":\"c\"}\n");
  const auto j = Journal::open(path, "demo");
  REQUIRE_FALSE(j);
  CHECK(j.error().line == 3);
}

TEST_CASE("journal: a foreign header, a newer version or another campaign is an error") {
  mlsup::test::TempDir tmp;
  const auto error_for = [&](const std::string& text) {
    const std::string path = tmp.write("journal.jsonl", text);
    const auto j = Journal::open(path, "demo");
    REQUIRE_FALSE(j);
    CHECK(content(path) == text);
    return j.error().message;
  };
  CHECK(error_for("{\"other\":1}\n").find("not an mlsup journal") == 0);
  CHECK(error_for("hello\n").find("not an mlsup journal") == 0);
  CHECK(error_for("{\"mlsup_journal\":0,\"campaign\":\"demo\"}\n").find("not an mlsup journal") == 0);
  CHECK(error_for("{\"mlsup_journal\":2,\"campaign\":\"demo\"}\n").find("written by a newer mlsup (journal version 2") == 0);
  CHECK(error_for("{\"mlsup_journal\":1,\"campaign\":\"other\"}\n").find("belongs to campaign \"other\"") == 0);
  CHECK(error_for("{\"mlsup_journal\":1,\"camp").find("the header line is incomplete") == 0);
}

TEST_CASE("journal: an empty file gets its header back, with a warning") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.write("journal.jsonl", "");
  const Journal j = open_ok(path);
  CHECK(j.warnings().size() == 1);
  CHECK(content(path) == kHeader);
}

TEST_CASE("journal: an append on a full disk leaves the file exactly as before") {
  FullDisk disk;
  MESSAGE(std::string(disk.mounted() ? "full disk: a 64 KiB tmpfs" : "full disk: simulated with RLIMIT_FSIZE (mount not permitted)"));
  const std::string path = disk.folder() + "/journal.jsonl";
  Journal j = open_ok(path);
  REQUIRE(j.append("a", {{"n", 1}}, 1));
  REQUIRE(j.append("b", {{"n", 2}}, 2));
  const std::string before = content(path);
  disk.fill(before.size() + 100);
  const auto failed = j.append("big", {{"blob", std::string(16384, 'z')}}, 3);
  disk.make_room();
  REQUIRE_FALSE(failed);
  CHECK(failed.error().file == path);
  CHECK(content(path) == before);
  CHECK(types_of(j) == std::vector<std::string>{"a", "b"});
  const auto next = j.append("c", {}, 4);
  REQUIRE(next);
  CHECK(next->seq == 3);
  CHECK(types_of(open_ok(path)) == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("journal: each record knows its line in the file, after a repair and an append") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.path() + "/journal.jsonl";
  std::ofstream(path) << kHeader << R"({"seq":1,"time":1,"type":"a"})" << "\n" << R"({"seq":2,"time":2,"type":"b"})" << "\n"
                      << R"({"seq":3,"ti)";
  Journal j = open_ok(path);
  const auto lines = [&] {
    std::vector<int> out;
    for (const auto& r : j.records()) out.push_back(r.line);
    return out;
  };
  CHECK(lines() == std::vector<int>{2, 3});
  REQUIRE(j.append("c", {}, 3));  // the torn line is cut off first
  CHECK(lines() == std::vector<int>{2, 3, 4});
  const Journal again = open_ok(path);
  std::vector<int> reread;
  for (const auto& r : again.records()) reread.push_back(r.line);
  CHECK(reread == lines());
}

TEST_CASE("journal: the event log skips a truncated tail and the next event still lands on its own line") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.path() + "/events.jsonl";
  CHECK(EventLog::read(path).empty());
  EventLog log(path);
  REQUIRE(log.append({{"event", "submitted"}, {"attempt", 1}}));
  REQUIRE(log.append({{"event", "ended"}, {"attempt", 1}}));
  CHECK_FALSE(log.append(json::array()));
  { std::ofstream(path, std::ios::app) << "{\"event\":\"resub"; }
  auto events = EventLog::read(path);
  REQUIRE(events.size() == 2);
  CHECK(events[0]["event"] == "submitted");
  CHECK(events[1]["event"] == "ended");
  REQUIRE(log.append({{"event", "resubmitted"}}));
  events = EventLog::read(path);
  REQUIRE(events.size() == 3);
  CHECK(events[2]["event"] == "resubmitted");
}

TEST_CASE("journal: opened with a sink, each record read goes to it in order, none kept; appends are kept") {
  mlsup::test::TempDir tmp;
  const std::string path = tmp.path() + "/journal.jsonl";
  {
    auto j = open_ok(path);
    for (int i = 0; i < 5; ++i) REQUIRE(j.append("note", {{"n", i}}, 100.0 + i));
  }
  std::ofstream(path, std::ios::app) << "{\"seq\":6,\"ti";  // a torn last line: dropped as before
  std::vector<Record> seen;
  auto j = Journal::open(path, "demo", [&seen](Record&& r) { seen.push_back(std::move(r)); });
  REQUIRE(j);
  REQUIRE(seen.size() == 5);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    CHECK(seen[i].seq == static_cast<long long>(i) + 1);
    CHECK(seen[i].line == static_cast<int>(i) + 2);
    CHECK(seen[i].data["n"] == i);
  }
  CHECK(j->records().empty());
  CHECK(j->take().empty());
  CHECK(j->warnings().size() == 1);
  REQUIRE(j->append("note", {{"n", 5}}, 200));
  const auto later = j->take();
  REQUIRE(later.size() == 1);
  CHECK(later[0].seq == 6);
  CHECK(seen.size() == 5);  // the sink was for the reading only
}

TEST_CASE("event log: rotated at its size into path.1..path.4, read back oldest first; the oldest part dropped") {
  mlsup::test::TempDir dir;
  const std::string path = dir.path() + "/events.jsonl";
  EventLog log(path, 200);
  for (int i = 0; i < 60; ++i) REQUIRE(log.append({{"event", "e"}, {"n", i}, {"pad", std::string(20, 'x')}}));
  CHECK(std::filesystem::exists(path + ".1"));
  CHECK(std::filesystem::exists(path + ".4"));
  CHECK_FALSE(std::filesystem::exists(path + ".5"));
  const auto parts = rotated_parts(path);
  REQUIRE(parts.size() == 4);
  CHECK(parts.front() == path + ".4");
  const auto events = EventLog::read(path);
  REQUIRE(events.size() > 10);
  CHECK(events.back()["n"] == 59);
  for (std::size_t i = 1; i < events.size(); ++i) CHECK(events[i]["n"].get<int>() == events[i - 1]["n"].get<int>() + 1);
  CHECK(events.front()["n"].get<int>() > 0);  // the oldest part is gone
}
