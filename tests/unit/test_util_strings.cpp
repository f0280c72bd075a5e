#include <doctest/doctest.h>

#include "util/error.h"
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
