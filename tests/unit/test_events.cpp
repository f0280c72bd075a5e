#include <doctest/doctest.h>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "events/reconcile.h"
#include "events/act.h"
#include "events/facts.h"
#include "events/outside.h"

using namespace mlsup;
using nlohmann::json;
namespace ev = events;

namespace {

// The keys of an event's JSON.
std::set<std::string> keys(const json& j) {
  std::set<std::string> out;
  for (const auto& [k, v] : j.items()) out.insert(k);
  return out;
}

// An event's JSON read back through its struct and written again is the same JSON.
template <class E>
void round_trip(const E& e) {
  const json once = e;
  const json again = once.get<E>();
  CHECK_MESSAGE(again == once, E::kKind.name(), ": ", once.dump());
}

}  // namespace

TEST_CASE("events: each struct's JSON reads back into the same JSON, its kind beside it") {
  round_trip(ev::ExclusionsCapped{{"n1", "n2"}, 2, "too few"});
  round_trip(ev::SlurmUnavailable{3, 40, "Timeout", "timed out", "wait"});
  round_trip(ev::AccountingUnavailable{3, 40, "no dbd", "ask again"});
  round_trip(ev::SlurmUnreachable{3, 40, "Timeout", "timed out", 120, "look at slurmctld"});
  round_trip(ev::DiskNearlyFull{"/ck", "WARNING", 81.5, 12.0, "make room"});
  round_trip(ev::CheckpointPointerIgnored{"latest names step_9, which is not there"});
  round_trip(ev::ChainTaskUnclaimed{2, 41, 30.5, "unclaimed"});
  round_trip(ev::NodeRecordsProblems{40, {"n1:3: not JSON"}, "ignored"});
  round_trip(ev::BudgetNearlySpent{4, "failed", 4, 5, "1h", "nearly spent"});
  round_trip(ev::ForgottenWaiting{2, 40, {"a heartbeat"}, "wait"});
  round_trip(ev::WindowOpened{{"20:00-07:00", 1800000000, "opened"}});
  round_trip(ev::WindowClosed{{"20:00-07:00", 1800000000, "closed"}});
  round_trip(ev::SparesUsedUp{2, 40, "n[1-3]", "n1", {"n2"}, "used up"});
  round_trip(ev::SuspensionEnded{2, 12.5, "suspended"});
  round_trip(ev::HeartbeatEmptyRead{2, "hb", "empty"});
  round_trip(ev::Pending{2, 40, "Resources", "waits"});
  round_trip(ev::CapacityRestored{2, 40, "asks 4 nodes", "back"});
  round_trip(ev::CapacityShort{2, 40, "asks 4 nodes", true, "short"});
  CHECK(ev::ExclusionsCapped::kKind == "exclusions-relaxed");
  CHECK(ev::WindowOpened::kKind == "window-opened");
  CHECK(ev::WindowClosed::kKind == "window-closed");
}

TEST_CASE("events: an empty optional is left out, or written as null where the event says so") {
  CHECK(keys(json(ev::SlurmUnavailable{.attempt = 1, .detail = "x"})) == std::set<std::string>{"attempt", "detail"});
  CHECK(keys(json(ev::SlurmUnavailable{1, 40, "Timeout", "x", "wait"})) ==
        std::set<std::string>{"attempt", "job_id", "kind", "detail", "decision"});
  CHECK(keys(json(ev::AccountingUnavailable{.attempt = 1, .detail = "x", .decision = "y"})) ==
        std::set<std::string>{"attempt", "detail", "decision"});
  const json disk = ev::DiskNearlyFull{"/ck", "CRITICAL", 96, std::nullopt, "full"};
  REQUIRE(disk.contains("inodes_percent"));
  CHECK(disk["inodes_percent"].is_null());
  CHECK_FALSE(disk.get<ev::DiskNearlyFull>().inodes_percent.has_value());
  CHECK(json(ev::SlurmUnreachable{1, 40, "Timeout", "x", 90, "y"})["for"] == 90);
}

TEST_CASE("events: read leniently, as an older event log may have them: a field of another type keeps its default") {
  const auto e = json{{"attempt", "two"}, {"job_id", 40}, {"slurm_reason", "Priority"}}.get<ev::Pending>();
  CHECK(e.attempt == 0);
  CHECK(e.job_id == 40);
  CHECK(e.slurm_reason == "Priority");
  CHECK(e.reason.empty());
  CHECK_THROWS(json::array().get<ev::Pending>());
}

TEST_CASE("events of the acts: each struct's JSON reads back into the same JSON") {
  round_trip(ev::ReleaseFailed{{2, 40, "refused", "tried again next pass"}});
  round_trip(ev::HoldFailed{{2, 40, "refused", "tried again next pass"}});
  round_trip(ev::DuplicateCancelFailed{{2, 41, "refused", "tried again next pass"}});
  round_trip(ev::SparesDropFailed{{2, 40, "refused", "tried again next pass"}});
  round_trip(ev::StepsKillFailed{{2, 40, "refused", "again"}});
  round_trip(ev::CheckpointDeleted{"/ck/step_10", 10, "checkpoint.keep is 2"});
  round_trip(ev::TemplateUnusable{3, "t.sbatch", "undefined name", true, "nothing is submitted"});
  round_trip(ev::TemplateSnapshotFailed{"disk full", "the template is used"});
  round_trip(ev::SubmitPaced{2, 1.5, "spaced"});
  round_trip(ev::SubmitFailed{2, "Timeout", "timed out", true, 3, true, "unknown", "look", 1800000000.5, "why"});
  round_trip(ev::ChainCancelled{4, 40, "cancelled"});
  round_trip(ev::RelaxFailed{2, 40, "n1", "refused", "retry next pass"});
  round_trip(ev::ChainValuesFailed{2, "cannot write"});
  round_trip(ev::SpareValuesFailed{2, 40, "cannot write"});
  round_trip(ev::ChainExcluded{2, 41, "n[1-2]"});
  round_trip(ev::HangEvidence{2, 40, "/s/hang.txt", "exit 0"});
  round_trip(ev::ProbeDoubted{2, 40, {"n1", "n2"}, {"n1"}, "the control node did not answer either"});
  round_trip(ev::ProbeAnswered{2, 40, {"n1"}, "they answer"});
  round_trip(ev::HangDetected{2, 40, "no heartbeat", {"n1", "n2"}, "5m", true});
  round_trip(ev::HeartbeatStaleFirst{2, 40, {{"n2", 31.5}}, 30});
  round_trip(ev::RequestFailed{"r1", "resume", "cannot remove", "tried again next pass"});
  round_trip(ev::SwitchFailed{2, "/s/KILL", "read-only", "tried again next pass"});
  round_trip(ev::CancelFailed{2, 40, 3, 1, "refused", "send it again in 20s", true});
  round_trip(ev::JournalRepaired{"a torn last line was set aside"});
}

TEST_CASE("events of the acts: the fields each way of telling them has") {
  const json chain = ev::HandedOver{.attempt = 2, .job_id = 41, .resume_from = "/ck/step_10", .exclude = {"n1"},
                                    .exc_node_list = std::nullopt, .reason = "queued task"};
  CHECK(keys(chain) == std::set<std::string>{"attempt", "job_id", "resume_from", "exclude", "reason"});
  const json read_back = ev::HandedOver{.attempt = 2, .job_id = 41, .exc_node_list = "n1"};
  CHECK(read_back["exc_node_list"] == "n1");
  const json spares = ev::HandedOver{.attempt = 2, .job_id = 40, .nodes = std::vector<std::string>{"n3"},
                                     .resume_from = "", .exclude = {}, .steps_killed = "yes", .reason = "spare"};
  CHECK(keys(spares) == std::set<std::string>{"attempt", "job_id", "nodes", "resume_from", "exclude", "steps_killed", "reason"});
  round_trip(spares.get<ev::HandedOver>());
  CHECK(keys(json(ev::TemplateUnusable{.file = "t", .detail = "d", .decision = "x"})) ==
        std::set<std::string>{"file", "detail", "alert", "decision"});
  CHECK(keys(json(ev::ConfigReloaded{.file = "c.yaml", .changed = std::vector<std::string>{"poll_interval"}})) ==
        std::set<std::string>{"file", "changed"});
  CHECK(keys(json(ev::ConfigReloaded{.file = "c.yaml", .detail = "no zone", .decision = "UTC"})) ==
        std::set<std::string>{"file", "detail", "decision"});
  const json stale = ev::HeartbeatStaleFirst{2, 40, {{"n2", 31.5}}, 30};
  CHECK(stale["nodes"] == json::parse(R"([{"node": "n2", "lead": 31.5}])"));
  CHECK(json(ev::SwitchFailed{2, "/s/KILL", "x", "y"}).contains("switch"));
}

TEST_CASE("events: every kind of the table has its struct, and each struct's kind is one kind") {
  std::multiset<std::string> with_struct;
#define MLSUP_KIND_OF(E) with_struct.insert(std::string(ev::E::kKind.name()));
  MLSUP_EVENTS(MLSUP_KIND_OF)
  MLSUP_ACT_EVENTS(MLSUP_KIND_OF)
  MLSUP_FACT_EVENTS(MLSUP_KIND_OF)
  MLSUP_OUTSIDE_EVENTS(MLSUP_KIND_OF)
#undef MLSUP_KIND_OF
  for (const auto& row : events::kEventKinds) CHECK_MESSAGE(with_struct.count(std::string(row.name)) >= 1, row.name);
  // Two structs share a kind only where one kind is told two ways.
  const std::multiset<std::string> shared{"exclusions-relaxed", "exclusions-relaxed"};
  std::multiset<std::string> twice;
  for (const auto& k : with_struct)
    if (with_struct.count(k) > 1) twice.insert(k);
  CHECK(twice == shared);
}

TEST_CASE("events: a line of the event log is the struct's fields with its kind, time and campaign") {
  const json l = ev::line(ev::PassFailed{"disk full"}, 1800000000.5, "pretrain");
  CHECK(l == json{{"event", "pass-failed"}, {"time", 1800000000.5}, {"campaign", "pretrain"}, {"detail", "disk full"}});
  CHECK(keys(ev::line(ev::StopRequested{{"ann", "/s/KILL", "stop"}}, 1, "x")) ==
        std::set<std::string>{"event", "time", "campaign", "by", "switch", "reason"});
  CHECK(json(ev::Report{.reason = "3 runs"})["alert_kind"] == "report");
  CHECK(json(ev::Completed{{0}}) == json{{"exit_code", 0}, {"alert", true}});
  CHECK(json(ev::ExclusionLifted{}) == json::object());
  CHECK(keys(json(ev::Claimed{.array_job_id = 40, .values = "next.env"})) == std::set<std::string>{"array_job_id", "values"});
  CHECK(keys(json(ev::Claimed{.reason = "spares"})) == std::set<std::string>{"reason"});
}
