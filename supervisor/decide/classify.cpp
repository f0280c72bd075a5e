#include "decide/classify.h"

#include "decide/classes.h"

#include <array>
#include <utility>

namespace mlsup::decide {
namespace {

using slurm::JobState;

// Slurm end states whose class does not depend on anything else.
constexpr std::array<std::pair<JobState, EndClass>, 6> kByState{{
    {JobState::Timeout, EndClass::Timeout},       {JobState::Preempted, EndClass::Preempted},
    {JobState::NodeFail, EndClass::NodeFail},     {JobState::OutOfMemory, EndClass::OutOfMemory},
    {JobState::BootFail, EndClass::BootFail},     {JobState::Deadline, EndClass::Deadline},
}};

}  // namespace

std::string_view class_name(EndClass c) { return row(c).name; }

std::optional<EndClass> class_from_name(std::string_view name) {
  for (const auto& r : class_table())
    if (r.name == name) return r.cls;
  return std::nullopt;
}

EndClass classify(const Ending& e) {
  if (e.cancelled_by_mlsup) return *e.cancelled_by_mlsup;
  if (e.vanished) {
    if (e.kill_switch) return EndClass::KillSwitch;
    if (e.target_reached) return EndClass::Completed;
    return e.gone ? EndClass::Forgotten : EndClass::EndUnknown;
  }
  for (const auto& [state, cls] : kByState)
    if (state == e.state) return cls;
  if (e.state == JobState::Cancelled) return EndClass::CancelledByPerson;
  if (e.state == JobState::Failed && e.never_ran) return EndClass::Refused;  // the scheduler's no, not the training's
  if (e.state == JobState::Completed) {
    if (e.kill_switch) return EndClass::KillSwitch;
    return e.target_reached ? EndClass::Completed : EndClass::PlannedExit;
  }
  if (e.exit_signal == 0 && e.exit_code == e.no_retry_exit_code) return EndClass::NoRetry;
  return EndClass::Failed;
}

}  // namespace mlsup::decide
