#include <doctest/doctest.h>

#include "util/error.h"
#include "util/json.h"
#include "util/strings.h"

using namespace mlsup::util;

TEST_CASE("shell_quote leaves safe words bare and single-quotes the rest") {
  CHECK(shell_quote("train.py") == "train.py");
  CHECK(shell_quote("/data/ckpt/iter_0000100") == "/data/ckpt/iter_0000100");
  CHECK(shell_quote("--lr=3e-4") == "--lr=3e-4");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("a b") == "'a b'");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  CHECK(shell_quote("$HOME") == "'$HOME'");
  CHECK(shell_quote("~/x") == "'~/x'");
}

TEST_CASE("did_you_mean suggests near names only") {
  const std::vector<std::string> names{"poll_interval", "slurm", "heartbeat", "name"};
  CHECK(did_you_mean("polll_interval", names) == "poll_interval");
  CHECK(did_you_mean("heartbaet", names) == "heartbeat");
  CHECK(did_you_mean("checkpoint", names) == "");
  CHECK(did_you_mean("x", names) == "");
}

TEST_CASE("split, join and trim") {
  CHECK(split("a,b,,c", ',') == std::vector<std::string>{"a", "b", "", "c"});
  CHECK(split("", ',') == std::vector<std::string>{""});
  CHECK(join({"a", "b"}, ", ") == "a, b");
  CHECK(trim("  x \t\n") == "x");
  CHECK(edit_distance("kitten", "sitting") == 3);
}

TEST_CASE("Error::str leaves out unknown parts") {
  CHECK(Error{.file = "c.yaml", .line = 3, .column = 5, .subject = "name", .message = "bad"}.str() == "c.yaml:3:5: name: bad");
  CHECK(Error{.file = "c.yaml", .subject = "name", .message = "bad"}.str() == "c.yaml: name: bad");
  CHECK(Error{.message = "bad"}.str() == "bad");
}

TEST_CASE("valid_utf8 keeps well-formed text and spells out every other byte") {
  CHECK(valid_utf8("12 saving\n") == "12 saving\n");
  CHECK(valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  CHECK(valid_utf8("12 \xff\xfe") == "12 \\xff\\xfe");
  CHECK(valid_utf8("\xc0\xaf") == "\\xc0\\xaf");              // overlong
  CHECK(valid_utf8("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate
  CHECK(valid_utf8("\xe2\x82") == "\\xe2\\x82");              // cut short
  CHECK(valid_utf8("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  CHECK(valid_utf8(std::string("a\0b", 3)) == std::string("a\0b", 3));
}

TEST_CASE("dump_json never throws; the field readers fall back on a wrong type") {
  const nlohmann::json j = {{"s", "bad \xff"}, {"n", 2.5}, {"x", "text"}};
  CHECK(dump_json(j) == "{\"n\":2.5,\"s\":\"bad \xef\xbf\xbd\",\"x\":\"text\"}");  // U+FFFD
  CHECK(json_text(j["x"]) == "text");
  CHECK(json_text(j["n"]) == "2.5");
  CHECK(string_field(j, "n", "?") == "?");
  CHECK(string_field(j, "x") == "text");
  CHECK(number_field(j, "x", -1) == -1);
  CHECK(number_field(j, "n") == 2.5);
  CHECK(number_field(nlohmann::json::array(), "n", 7) == 7);
}
