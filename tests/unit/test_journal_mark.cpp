// A journal opened from a mark: only the records after it are read, and a mark of another file's
// content is refused.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "journal/atomic_file.h"
#include "journal/journal.h"
#include "support.h"

using namespace mlsup::journal;
using nlohmann::json;

namespace {

Journal opened(const std::string& path, std::vector<Record>* sunk = nullptr) {
  std::function<void(Record&&)> sink = [&](Record&& r) {
    if (sunk) sunk->push_back(std::move(r));
  };
  auto j = Journal::open(path, "demo", sink);
  REQUIRE_MESSAGE(j, (j ? "" : j.error().str()));
  return std::move(*j);
}

void append_n(Journal& j, int n, int from) {
  for (int i = 0; i < n; ++i) REQUIRE(j.append("note", json{{"i", from + i}}, 100.0 + from + i));
}

// A journal at path of before records, then after more; the mark taken between them.
Mark marked(const std::string& path, int before, int after) {
  auto j = opened(path);
  append_n(j, before, 0);
  const Mark mark = j.mark();
  append_n(j, after, before);
  return mark;
}

}  // namespace

TEST_CASE("journal mark: open from it reads only the records after it, with their seq, line and the count") {
  mlsup::test::TempDir dir;
  const std::string path = dir.path() + "/journal.jsonl";
  Mark mark;
  {
    auto j = opened(path);
    CHECK(j.mark().bytes == 0);  // no record yet: nothing to resume from
    j.set_epoch(3);
    append_n(j, 5, 0);
    mark = j.mark();
    append_n(j, 2, 5);
  }
  CHECK(mark.count == 5);
  CHECK(mark.last_seq == 5);
  CHECK(mark.newest_epoch == 3);
  CHECK(mark.bytes < std::filesystem::file_size(path));
  CHECK(json::parse(mark.last_line)["i"] == 4);
  REQUIRE(Journal::continues(path, mark));
  std::vector<Record> after;
  std::function<void(Record&&)> sink = [&](Record&& r) { after.push_back(std::move(r)); };
  auto j = Journal::open(path, "demo", sink, mark);
  REQUIRE_MESSAGE(j, (j ? "" : j.error().str()));
  REQUIRE(after.size() == 2);
  CHECK(after[0].seq == 6);
  CHECK(after[0].line == 7);  // the header is line 1
  CHECK(after[1].data["i"] == 6);
  CHECK(j->count() == 7);
  CHECK(j->newest_epoch() == 3);
  REQUIRE(j->append("note", json{{"i", 7}}, 200));  // appends go on where the file ends
  const auto all = Journal::read_only(path, "demo");
  CHECK(all.second.empty());
  REQUIRE(all.first.size() == 8);
  CHECK(all.first.back().seq == 8);
  CHECK(j->mark().count == 8);
  CHECK(j->mark().bytes == std::filesystem::file_size(path));
}

TEST_CASE("journal mark: a journal replaced, cut or of another campaign does not continue it") {
  mlsup::test::TempDir dir;
  const std::string path = dir.path() + "/journal.jsonl";
  const Mark mark = marked(path, 4, 0);
  CHECK(Journal::continues(path, mark));
  const std::string text = *read_file(path);
  SUBCASE("cut before the mark") {
    REQUIRE(write_atomically(path, text.substr(0, text.size() - 10)));
    CHECK_FALSE(Journal::continues(path, mark));
  }
  SUBCASE("a new journal of the same length with other records") {
    std::filesystem::remove(path);
    auto j = opened(path);
    append_n(j, 4, 100);  // same sizes, other values ("i": 100.. against 0..)
    CHECK_FALSE(Journal::continues(path, mark));
    std::function<void(Record&&)> sink = [](Record&&) {};
    CHECK_FALSE(Journal::open(path, "demo", sink, mark));
  }
  SUBCASE("another campaign's header") {
    std::string other = text;
    other.replace(other.find("demo"), 4, "omed");
    REQUIRE(write_atomically(path, other));
    std::function<void(Record&&)> sink = [](Record&&) {};
    CHECK(Journal::continues(path, mark));  // the bytes at the mark are the same ...
    CHECK_FALSE(Journal::open(path, "demo", sink, mark));  // ... but the header is checked
  }
}

TEST_CASE("journal mark: a torn record after the mark is dropped and cut off before the next append, as a whole read does") {
  mlsup::test::TempDir dir;
  const std::string path = dir.path() + "/journal.jsonl";
  const Mark mark = marked(path, 3, 1);
  std::ofstream(path, std::ios::app) << "{\"seq\":5,\"ti";  // a crash while the next was written
  std::vector<Record> after;
  std::function<void(Record&&)> sink = [&](Record&& r) { after.push_back(std::move(r)); };
  auto j = Journal::open(path, "demo", sink, mark);
  REQUIRE(j);
  CHECK(after.size() == 1);
  CHECK(j->warnings().size() == 1);
  REQUIRE(j->append("note", json{{"i", 9}}, 300));
  const auto all = Journal::read_only(path, "demo");
  CHECK(all.second.empty());
  CHECK(all.first.size() == 5);
}

TEST_CASE("journal mark: read_only from it lists the records after it and what it cannot read, and changes nothing") {
  mlsup::test::TempDir dir;
  const std::string path = dir.path() + "/journal.jsonl";
  const Mark mark = marked(path, 4, 2);
  std::ofstream(path, std::ios::app) << "not a record\n{\"seq\":9,\"ti";  // a bad line, then a torn one
  const auto size = std::filesystem::file_size(path);
  const auto [records, problems] = Journal::read_only(path, "demo", mark);
  REQUIRE(records.size() == 2);
  CHECK(records[0].seq == 5);
  CHECK(records[0].line == 6);  // the header is line 1
  CHECK(records[1].data["i"] == 5);
  REQUIRE(problems.size() == 2);
  CHECK(problems[0].line == 8);
  CHECK(problems[0].message.find("not a journal record") != std::string::npos);
  CHECK(problems[1].line == 9);
  CHECK(problems[1].message.find("incomplete last record") != std::string::npos);
  CHECK(std::filesystem::file_size(path) == size);  // nothing cut off
  const auto all = Journal::read_only(path, "demo");
  CHECK(all.first.size() == 6);
  CHECK(all.second.size() == 2);
  CHECK(all.second[0].line == 8);  // the same lines as a whole read names
  CHECK(Journal::read_only(path, "other", mark).second.size() == 3);  // the header is checked
}
