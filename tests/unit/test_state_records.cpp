#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "state/records.h"

using namespace mlsup;
using nlohmann::json;
namespace rec = engine::records;

namespace {

// A record's JSON read back through its struct and written again is the same JSON.
template <class R>
void round_trip(const R& r) {
  const json once = r;
  const json again = once.get<R>();
  CHECK_MESSAGE(again == once, R::kType, ": ", once.dump());
}

}  // namespace

TEST_CASE("journal records: each struct's JSON reads back into the same JSON") {
  round_trip(rec::Campaign{"ab12", "pretrain"});
  round_trip(rec::SubmitIntent{2, "mlsup:x:2", "/ck/step_10", 10, {"n1"}, true, 41, 0, {}});
  round_trip(rec::SubmitIntent{3, "mlsup:x:3", "", 0, {}, false, 0, 40, {"n2", "n3"}});
  round_trip(rec::Submitted{1, 40, true, true});
  round_trip(rec::Adopted{{1, 40, false, false}});
  round_trip(rec::SubmitFailed{1, slurm::ErrorKind::Timeout, 5, "timed out", "unknown"});
  round_trip(rec::SbatchStarted{1, 123, 456, "h", "b", 99.5});
  round_trip(rec::SbatchStarted{1, 123, 456, "h", "b", std::nullopt});
  round_trip(rec::CancelIntent{1, 40, decide::EndClass::Hang, "no heartbeat", true});
  rec::Ended ended{.attempt = 1, .job_id = 40, .cls = decide::EndClass::Failed, .slurm_state = slurm::JobState::Failed,
                   .nodes = "n[1-2]", .step = 35, .action = decide::Action::Resubmit, .delay = 5, .reason = "crashed",
                   .suspects = std::vector<std::string>{"n2"}, .follows_training = true, .new_exclusion = true,
                   .end_source = "accounting"};
  ended.evidence["first_failure"] = {{"node", "n2"}, {"rank", 1}};
  round_trip(ended);
  round_trip(rec::Resumed{{"r1", "resume", "ann"}, "/ck/step_10", 10});
  round_trip(rec::Paused{{"r2", "pause", "ann"}, true});
  round_trip(rec::RequestRefused{{"r3", "cancel", "ann"}, 4, "ended already"});
  round_trip(rec::Released{1, 40, ""});
  round_trip(rec::Exclude{2, "n2", "first to fail", 1e9, "first_evidence", 0, 35});
  round_trip(rec::Exclude{2, "n2", "silent", 1e9, "", -1, 0});
  round_trip(rec::Exclude{2, "n2", "Xid 79", 1e9, "", -1, 0, {"GPU-aaaa"}});
  round_trip(rec::ExclusionMoved{3, "n2", "n3", {"GPU-aaaa"}, 1e9, "moved"});
  round_trip(rec::ExclusionLifted{3, {"n2"}, 1, 35, 10, "follows the training"});
}

TEST_CASE("journal records: written as the journal has always had them, optional fields only when set") {
  const json intent = rec::SubmitIntent{2, "t", "", 0, {}, false, 0, 0, {}};
  CHECK_FALSE(intent.contains("chain"));
  CHECK_FALSE(intent.contains("in_job"));
  const json released = rec::Released{1, 40, ""};
  CHECK_FALSE(released.contains("for"));
  const json exclude = rec::Exclude{2, "n2", "silent", 5, "", -1, 0};
  CHECK_FALSE(exclude.contains("rule"));
  CHECK_FALSE(exclude.contains("rank"));
  const json rule = rec::Exclude{2, "n2", "x", 5, "first_evidence", 0, 35};
  CHECK(rule["rank"] == 0);  // rank 0 is a rank
  CHECK(json::parse(rule.dump()).get<rec::Exclude>().first_evidence());
  const json ended = rec::Ended{.attempt = 1, .cls = decide::EndClass::Completed, .action = decide::Action::Finish};
  CHECK(ended["class"] == "completed");
  CHECK(ended["action"] == "finish");
  CHECK_FALSE(ended.contains("suspects"));
  CHECK_FALSE(ended.contains("end_source"));
}

TEST_CASE("journal records: what an older journal lacks reads as the defaults replay has always used") {
  CHECK(json::object().get<rec::Held>().for_ == "pause");
  CHECK(json::object().get<rec::Ended>().step == -1);
  CHECK_FALSE(json::object().get<rec::Submitted>().chain.has_value());
  CHECK(json({{"attempt", "2"}}).get<rec::Exclude>().attempt == 0);  // for status only
  CHECK_THROWS_AS(json({{"attempt", "2"}}).get<rec::Ended>(), json::exception);  // replay uses it: the record is unusable
  CHECK(json({{"attempt", 2}, {"reason", 7}}).get<rec::Ended>().reason.empty());  // replay does not use it
}
