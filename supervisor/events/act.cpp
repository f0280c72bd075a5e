// Each event's JSON from a table of its fields (util/json_fields.h), read back leniently as reconcile.cpp's.
#include "events/act.h"

#include <tuple>


namespace mlsup::events {
using nlohmann::json;

namespace {

using util::fields::lenient;

auto fields(const JobActFailed*) {
  using E = JobActFailed;
  return std::tuple{lenient("attempt", &E::attempt), lenient("job_id", &E::job_id), lenient("detail", &E::detail),
                    lenient("decision", &E::decision)};
}
auto fields(const ReleaseFailed*) { return fields(static_cast<const JobActFailed*>(nullptr)); }
auto fields(const HoldFailed*) { return fields(static_cast<const JobActFailed*>(nullptr)); }
auto fields(const DuplicateCancelFailed*) { return fields(static_cast<const JobActFailed*>(nullptr)); }
auto fields(const SparesDropFailed*) { return fields(static_cast<const JobActFailed*>(nullptr)); }
auto fields(const StepsKillFailed*) { return fields(static_cast<const JobActFailed*>(nullptr)); }
auto fields(const CheckpointDeleted*) {
  using E = CheckpointDeleted;
  return std::tuple{lenient("path", &E::path), lenient("step", &E::step), lenient("reason", &E::reason)};
}
auto fields(const TemplateUnusable*) {
  using E = TemplateUnusable;
  return std::tuple{lenient("attempt", &E::attempt), lenient("file", &E::file), lenient("detail", &E::detail),
                    lenient("alert", &E::alert), lenient("decision", &E::decision)};
}
auto fields(const TemplateSnapshotFailed*) {
  using E = TemplateSnapshotFailed;
  return std::tuple{lenient("detail", &E::detail), lenient("decision", &E::decision)};
}
auto fields(const SubmitPaced*) {
  using E = SubmitPaced;
  return std::tuple{lenient("attempt", &E::attempt), lenient("waited", &E::waited), lenient("reason", &E::reason)};
}
auto fields(const SubmitFailed*) {
  using E = SubmitFailed;
  return std::tuple{lenient("attempt", &E::attempt),   lenient("kind", &E::kind),         lenient("detail", &E::detail),
                    lenient("transient", &E::transient), lenient("tries", &E::tries),     lenient("alert", &E::alert),
                    lenient("outcome", &E::outcome),   lenient("decision", &E::decision), lenient("next_try", &E::next_try),
                    lenient("reason", &E::reason)};
}
auto fields(const ChainCancelled*) {
  using E = ChainCancelled;
  return std::tuple{lenient("attempt", &E::attempt), lenient("job_id", &E::job_id), lenient("detail", &E::detail)};
}
auto fields(const RelaxFailed*) {
  using E = RelaxFailed;
  return std::tuple{lenient("attempt", &E::attempt), lenient("job_id", &E::job_id), lenient("node", &E::node),
                    lenient("detail", &E::detail), lenient("decision", &E::decision)};
}
auto fields(const ChainValuesFailed*) {
  using E = ChainValuesFailed;
  return std::tuple{lenient("attempt", &E::attempt), lenient("detail", &E::detail)};
}
auto fields(const SpareValuesFailed*) {
  using E = SpareValuesFailed;
  return std::tuple{lenient("attempt", &E::attempt), lenient("job_id", &E::job_id), lenient("detail", &E::detail)};
}
auto fields(const HandedOver*) {
  using E = HandedOver;
  return std::tuple{lenient("attempt", &E::attempt),         lenient("job_id", &E::job_id),
                    lenient("nodes", &E::nodes),             lenient("resume_from", &E::resume_from),
                    lenient("exclude", &E::exclude),         lenient("steps_killed", &E::steps_killed),
                    lenient("exc_node_list", &E::exc_node_list), lenient("reason", &E::reason)};
}
auto fields(const ChainExcluded*) {
  using E = ChainExcluded;
  return std::tuple{lenient("attempt", &E::attempt), lenient("job_id", &E::job_id), lenient("exc_node_list", &E::exc_node_list)};
}
auto fields(const HangEvidence*) {
  using E = HangEvidence;
  return std::tuple{lenient("attempt", &E::attempt), lenient("job_id", &E::job_id), lenient("path", &E::path),
                    lenient("outcome", &E::outcome)};
}
auto fields(const HangStacks*) {
  using E = HangStacks;
  return std::tuple{lenient("attempt", &E::attempt), lenient("job_id", &E::job_id),   lenient("folder", &E::folder),
                    lenient("ranks", &E::ranks),     lenient("dumped", &E::dumped),   lenient("places", &E::places),
                    lenient("waited_on", &E::waited_on), lenient("nodes", &E::nodes), lenient("why", &E::why)};
}
auto fields(const DumpedProcess*) {
  using E = DumpedProcess;
  return std::tuple{lenient("pid", &E::pid),     lenient("rank", &E::rank), lenient("state", &E::state),
                    lenient("wchan", &E::wchan), lenient("comm", &E::comm), lenient("by", &E::by),
                    lenient("frames", &E::frames), lenient("flight_recorder", &E::flight_recorder)};
}
auto fields(const DumpedNode*) {
  using E = DumpedNode;
  return std::tuple{lenient("node", &E::node), lenient("tool", &E::tool), lenient("file", &E::file),
                    lenient("complete", &E::complete), lenient("processes", &E::processes)};
}
auto fields(const HangDump*) {
  using E = HangDump;
  return std::tuple{lenient("attempt", &E::attempt), lenient("job_id", &E::job_id), lenient("folder", &E::folder),
                    lenient("outcome", &E::outcome), lenient("dumps", &E::dumps),   lenient("missing", &E::missing),
                    lenient("summary", &E::summary)};
}
auto fields(const HangExplained*) {
  using E = HangExplained;
  return std::tuple{lenient("attempt", &E::attempt), lenient("job_id", &E::job_id), lenient("rule", &E::rule),
                    lenient("class", &E::cls),         lenient("line", &E::line),     lenient("quote", &E::quote),
                    lenient("node", &E::node),         lenient("decision", &E::decision)};
}
auto fields(const ProbeDoubted*) {
  using E = ProbeDoubted;
  return std::tuple{lenient("attempt", &E::attempt), lenient("job_id", &E::job_id), lenient("unanswered", &E::unanswered),
                    lenient("proven", &E::proven), lenient("reason", &E::reason)};
}
auto fields(const ProbeAnswered*) {
  using E = ProbeAnswered;
  return std::tuple{lenient("attempt", &E::attempt), lenient("job_id", &E::job_id), lenient("nodes", &E::nodes),
                    lenient("reason", &E::reason)};
}
auto fields(const HangDetected*) {
  using E = HangDetected;
  return std::tuple{lenient("attempt", &E::attempt),   lenient("job_id", &E::job_id),
                    lenient("reason", &E::reason),     lenient("probing", &E::probing),
                    lenient("steady_timeout", &E::steady_timeout), lenient("calibrated", &E::calibrated)};
}
auto fields(const StaleLead*) { return std::tuple{lenient("node", &StaleLead::node), lenient("lead", &StaleLead::lead)}; }
auto fields(const HeartbeatStaleFirst*) {
  using E = HeartbeatStaleFirst;
  return std::tuple{lenient("attempt", &E::attempt), lenient("job_id", &E::job_id), lenient("nodes", &E::nodes),
                    lenient("margin", &E::margin)};
}
auto fields(const RequestFailed*) {
  using E = RequestFailed;
  return std::tuple{lenient("request", &E::request), lenient("verb", &E::verb), lenient("detail", &E::detail),
                    lenient("decision", &E::decision)};
}
auto fields(const SwitchFailed*) {
  using E = SwitchFailed;
  return std::tuple{lenient("attempt", &E::attempt), lenient("switch", &E::switch_), lenient("detail", &E::detail),
                    lenient("decision", &E::decision)};
}
auto fields(const CancelFailed*) {
  using E = CancelFailed;
  return std::tuple{lenient("attempt", &E::attempt), lenient("job_id", &E::job_id),     lenient("sent", &E::sent),
                    lenient("failed", &E::failed),   lenient("detail", &E::detail),     lenient("decision", &E::decision),
                    lenient("alert", &E::alert)};
}
auto fields(const JournalRepaired*) { return std::tuple{lenient("detail", &JournalRepaired::detail)}; }
auto fields(const ConfigReloaded*) {
  using E = ConfigReloaded;
  return std::tuple{lenient("file", &E::file), lenient("changed", &E::changed), lenient("detail", &E::detail),
                    lenient("decision", &E::decision)};
}

}  // namespace

MLSUP_ACT_EVENTS(MLSUP_FIELDS_JSON_DEFINE)
MLSUP_FIELDS_JSON_DEFINE(StaleLead)
MLSUP_FIELDS_JSON_DEFINE(DumpedProcess)
MLSUP_FIELDS_JSON_DEFINE(DumpedNode)

}  // namespace mlsup::events
