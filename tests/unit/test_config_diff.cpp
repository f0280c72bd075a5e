// A reload's changes, and the keys a live campaign keeps.
#include <doctest/doctest.h>

#include "config/diff.h"
#include "config/schema.h"

using namespace mlsup::config;

TEST_CASE("changed_keys: the keys whose values differ, in the schema's order, of every kind") {
  const Config a = defaults();
  Config b = a;
  CHECK(changed_keys(a, b).empty());
  b.poll_interval = Millis(250);
  b.slurm.extra_args = {"--qos=high"};
  b.policy.budgets["failed"].count = 99;
  b.name = "other";
  CHECK(changed_keys(a, b) == std::vector<std::string>{"name", "slurm.extra_args", "policy.budgets.failed", "poll_interval"});
}

TEST_CASE("reload_refusal: a live campaign keeps its name and where its files are; anything else may change") {
  CHECK_FALSE(reload_refusal({}).has_value());
  CHECK_FALSE(reload_refusal({"poll_interval", "policy.budgets.failed", "template"}).has_value());
  for (const char* key : {"name", "state_dir", "checkpoint.dir", "heartbeat.dir"}) {
    CAPTURE(key);
    const auto why = reload_refusal({"poll_interval", key});
    REQUIRE(why.has_value());
    CHECK(why->rfind(std::string(key) + " changed", 0) == 0);
    CHECK(why->find("stop it first") != std::string::npos);
  }
}
