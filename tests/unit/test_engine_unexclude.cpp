// `mlsup unexclude` and `mlsup exclusions`: the request refused for a node not excluded now; its record
// replayed (the same state every time, through the replay snapshot too); a whole campaign with the fake
// Slurm whose next attempt no longer excludes the node; the exclusions' view with their evidence.
#include <doctest/doctest.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/exclusions_verb.h"
#include "cli_run.h"
#include "decide/exit_codes.h"
#include "engine_fixture.h"
#include "reconcile/reconcile.h"
#include "reconcile_rows.h"
#include "state/lifecycle.h"
#include "state/records.h"
#include "state/snapshot.h"
#include "store/read_campaign.h"
#include "util/json.h"

namespace mlsup::test {
namespace {

using engine::CampaignState;
using engine::Request;
using engine::Verb;
using nlohmann::json;
using rows::journaled;

// A campaign whose ledger holds n1 (live until 5000) and n2 (ended at 1500).
CampaignState two_exclusions() {
  auto s = rows::campaign({rows::attempt(true)});
  s.ledger = {{"n1", "its task ended first", 1000, 5000}, {"n2", "did not answer", 900, 1500}};
  s.ledger_attempts = {1, 1};
  return s;
}

Request unexclude(const std::string& node, double time = 2000) {
  return {.id = "2000-1", .verb = Verb::Unexclude, .node = node, .why = "repaired", .by = "ann@login", .time = time};
}

// A journal record of type R at time t.
template <class R>
util::JournalRecord record(const R& r, double t, long long seq) {
  json data = r;
  data["type"] = std::string(R::kType);
  return {t, std::string(R::kType), data, 0, seq};
}

// Leaves a request as the verb does.
void ask(const EngineFixture& f, const Request& r) {
  std::filesystem::create_directories(f.config.state_dir + "/requests");
  std::ofstream(f.config.state_dir + "/requests/" + r.id + ".json") << util::dump_json(engine::to_json(r));
}

// The fixture's two-node campaign whose first job failed with srun naming n1 first: n1 excluded by the
// first-evidence rule, attempt 2 submitted without it.
EngineFixture::Opened excluded_n1(EngineFixture& f) {
  f.fake.node_table = {{"n1", "MIXED"}, {"n2", "MIXED"}, {"n3", "IDLE"}, {"n4", "IDLE"}};
  auto c = f.open();
  f.pass(*c);
  const auto id = f.last_job();
  f.fake.table[id].std_out =
      f.dir.write("job.out", "srun: error: n1: task 0: Exited with exit code 1\nsrun: error: n2: task 1: Terminated\n");
  f.fake.set_state(id, slurm::JobState::Failed, 1, "n[1-2]");
  f.pass(*c);
  return c;
}

// The submission's --exclude names node.
bool excludes(const slurm::SubmitRequest& r, const std::string& node) {
  return std::any_of(r.options.begin(), r.options.end(), [&](const std::string& o) {
    return o.starts_with("--exclude=") && o.find(node) != std::string::npos;
  });
}

}  // namespace

TEST_CASE("unexclude: a node excluded now goes ahead; any other is refused (19) naming the live exclusions") {
  const auto s = two_exclusions();
  CHECK_FALSE(engine::refuse(s, unexclude("n1")));
  struct Row {
    std::string what;
    Request r;
  };
  const std::vector<Row> rows = {
      {"a node never excluded", unexclude("n9")},
      {"a node whose exclusion ended", unexclude("n2")},
      {"a node whose exclusion ended before the request", unexclude("n1", 6000)},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    const auto no = engine::refuse(s, row.r);
    REQUIRE(no);
    CHECK(no->code == decide::kNotExcluded);
    CHECK(no->message.find(row.r.node + " is not excluded now") != std::string::npos);
  }
  CHECK(engine::refuse(s, unexclude("n9"))->message.find("the live exclusions are n1") != std::string::npos);
  CHECK(engine::refuse(s, unexclude("n1", 6000))->message.find("no live exclusion") != std::string::npos);
  CHECK(engine::next_request(s, {unexclude("n9")})->refused->code == decide::kNotExcluded);
  auto paused = two_exclusions();  // no lifecycle state refuses it: a stopped campaign is fixed, then resumed
  paused.finished_code = decide::kBudgetSpent;
  CHECK_FALSE(engine::refuse(paused, unexclude("n1")));
}

TEST_CASE("unexclude: the request's file holds the node and the reason") {
  const auto r = unexclude("n1");
  const auto back = engine::request_from_json(r.id, engine::to_json(r));
  REQUIRE(back);
  CHECK(back->verb == Verb::Unexclude);
  CHECK(back->node == "n1");
  CHECK(back->why == "repaired");
  CHECK(back->by == "ann@login");
}

TEST_CASE("unexclude: replayed, the node's live exclusions end at the record; the same through the replay snapshot") {
  namespace rec = engine::records;
  const std::vector<util::JournalRecord> records = {
      record(rec::Campaign{"abc", "t"}, 900, 1),
      record(rec::Exclude{1, "n1", "its task ended first", 9000, "first_evidence", 0, 150}, 1000, 2),
      record(rec::Exclude{1, "n2", "did not answer", 9000, "", -1, 0}, 1000, 3),
      record(rec::Unexcluded{{"2000-1", "unexclude", "ann@login"}, "n1", "repaired"}, 2100, 4),
  };
  const auto s = engine::replay(records);
  REQUIRE(s.problems.empty());
  CHECK(s.ledger[0].until == 2100);
  CHECK(s.ledger[0].ended_by == "unexcluded by ann@login: repaired");  // who, kept through the snapshot below
  CHECK(s.ledger[1].until == 9000);
  CHECK(s.ledger[1].ended_by.empty());
  CHECK(s.requests_done.contains("2000-1"));
  CHECK(decide::excluded_nodes(s.ledger, 2200, -1) == std::vector<std::string>{"n2"});
  CHECK(engine::state_to_json(engine::replay(records)) == engine::state_to_json(s));  // deterministic
  const std::vector<util::JournalRecord> before(records.begin(), records.end() - 1);
  auto from_snapshot = engine::state_from_json(json::parse(engine::state_to_json(engine::replay(before)).dump()));
  REQUIRE(from_snapshot);
  engine::apply(*from_snapshot, records.back());
  CHECK(engine::state_to_json(*from_snapshot) == engine::state_to_json(s));
  const auto again = engine::state_from_json(json::parse(engine::state_to_json(s).dump()));
  REQUIRE(again);
  CHECK(again->ledger[0].until == 2100);
  CHECK(again->requests_done.contains("2000-1"));
}

TEST_CASE("exclusion-moved: replayed, the node's exclusions carrying the GPUs end and the other node's begins; the same through the replay snapshot") {
  namespace rec = engine::records;
  const std::vector<util::JournalRecord> records = {
      record(rec::Campaign{"abc", "t"}, 900, 1),
      record(rec::Exclude{1, "n1", "Xid 79", 9000, "", -1, 0, {"GPU-aaaa"}}, 1000, 2),
      record(rec::Exclude{1, "n2", "did not answer", 9000, "", -1, 0}, 1000, 3),
      record(rec::ExclusionMoved{2, "n1", "n3", {"GPU-aaaa"}, 9000, "GPU GPU-aaaa, excluded on n1 (Xid 79), is now in n3"}, 2100, 4),
  };
  const auto s = engine::replay(records);
  REQUIRE(s.problems.empty());
  REQUIRE(s.ledger.size() == 3);
  CHECK(s.ledger[0].until == 2100);
  CHECK(s.ledger[0].ended_by == "its GPUs were found in n3: the exclusion followed them there");
  CHECK(s.ledger[1].until == 9000);  // carries no GPU: stays
  CHECK(s.ledger[2].node == "n3");
  CHECK(s.ledger[2].gpus == std::vector<std::string>{"GPU-aaaa"});
  CHECK(s.ledger_attempts.back() == 2);
  CHECK(decide::excluded_nodes(s.ledger, 2200, -1) == std::vector<std::string>{"n3", "n2"});
  const std::vector<util::JournalRecord> before(records.begin(), records.end() - 1);
  auto from_snapshot = engine::state_from_json(json::parse(engine::state_to_json(engine::replay(before)).dump()));
  REQUIRE(from_snapshot);
  engine::apply(*from_snapshot, records.back());
  CHECK(engine::state_to_json(*from_snapshot) == engine::state_to_json(s));
}

TEST_CASE("unexclude: carried out by the campaign's supervisor, journaled with who and why; the next attempt may use the node") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  auto c = excluded_n1(f);
  REQUIRE(f.submits() == 2);
  CHECK(excludes(f.fake.submitted[1], "n1"));
  ask(f, {.id = "1500-1", .verb = Verb::Unexclude, .node = "n9", .by = "ann@login", .time = f.clock});
  ask(f, {.id = "1600-1", .verb = Verb::Unexclude, .node = "n1", .why = "DIMM replaced", .by = "ann@login", .time = f.clock});
  REQUIRE(c->requests());
  CHECK_FALSE(std::filesystem::exists(f.config.state_dir + "/requests/1600-1.json"));
  const auto refused = f.events_of("request-refused");
  REQUIRE(refused.size() == 1);
  CHECK(refused[0].value("code", 0) == decide::kNotExcluded);
  const auto told = f.events_of("unexcluded");
  REQUIRE(told.size() == 1);
  CHECK(told[0].value("node", "") == "n1");
  CHECK(told[0].value("by", "") == "ann@login");
  CHECK(told[0].value("why", "") == "DIMM replaced");
  CHECK(decide::excluded_nodes(journaled(f).ledger, f.clock + 1, -1).empty());
  f.clock += 10;
  f.fake.set_state(f.last_job(), slurm::JobState::Failed, 1, "n[3-4]");  // nothing names a node
  f.pass(*c);
  f.clock += 6;
  f.pass(*c);
  REQUIRE(f.submits() == 3);
  CHECK_FALSE(excludes(f.fake.submitted[2], "n1"));
}

TEST_CASE("exclusions: live first, each with its attempt, class, rule and who lifted it") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  auto c = excluded_n1(f);
  auto view = cli::exclusions_view(store::read_journal(f.config), f.clock);
  REQUIRE(view["exclusions"].size() == 1);
  const auto& x = view["exclusions"][0];
  CHECK(view["live"] == 1);
  CHECK(x["node"] == "n1");
  CHECK(x["live"] == true);
  CHECK(x["attempt"] == 1);
  CHECK(x["class"] == "failed");
  CHECK(x["job_id"] == f.last_job() - 1);
  CHECK(x["rule"] == "first_evidence");
  CHECK(x["rank"] == 0);
  CHECK(x["lifted"].is_null());
  ask(f, {.id = "1600-1", .verb = Verb::Unexclude, .node = "n1", .why = "DIMM replaced", .by = "ann@login", .time = f.clock});
  f.clock += 1;
  REQUIRE(c->requests());
  view = cli::exclusions_view(store::read_journal(f.config), f.clock);
  CHECK(view["live"] == 0);
  const auto& lifted = view["exclusions"][0]["lifted"];
  CHECK(lifted["how"] == "unexcluded");
  CHECK(lifted["by"] == "ann@login");
  CHECK(lifted["why"] == "DIMM replaced");
  CHECK(lifted["request"] == "1600-1");
}

TEST_CASE("exclusions and unexclude on the command line: the list for people and as JSON; a node not excluded refused") {
  EngineFixture f("", "slurm: {nodes: 2}\n");
  f.clock = static_cast<double>(std::time(nullptr));  // the verbs read the exclusions at this host's clock
  excluded_n1(f);
  const std::string conf = f.config.source_file;
  const auto listed = mlsup_cli({"exclusions", conf});
  CHECK(listed.code == decide::kCompleted);
  CHECK(listed.out.find("1 live exclusion(s)") != std::string::npos);
  CHECK(listed.out.find("rule first_evidence (rank 0") != std::string::npos);
  const auto as_json = mlsup_cli({"exclusions", conf, "--json"});
  CHECK(json::parse(as_json.out)["exclusions"][0]["node"] == "n1");
  const std::string journal = slurp(f.config.state_dir + "/journal.jsonl");
  const auto no = mlsup_cli({"unexclude", conf, "n3"});
  CHECK(no.code == decide::kNotExcluded);
  CHECK(no.err.find("n3 is not excluded now; the live exclusions are n1") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(f.config.state_dir + "/requests"));
  CHECK(slurp(f.config.state_dir + "/journal.jsonl") == journal);
}

}  // namespace mlsup::test
