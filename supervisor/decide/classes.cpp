#include "decide/classes.h"

#include <array>

#include "decide/exit_codes.h"

namespace mlsup::decide {
namespace {

using enum EndClass;
using A = Action;

constexpr std::array<ClassRow, 18> kRows{{
    // class, name, action, exit code, budget, backoff, node related, counts for blame, routine, reason
    {Completed, "completed", A::Finish, kCompleted, "", false, false, false, false, "the training completed"},
    {KillSwitch, "kill_switch", A::Stop, kStoppedBySwitch, "", false, false, false, false,
     "the kill switch was set: the training saved and stopped"},
    {PlannedExit, "planned_exit", A::Resubmit, 0, "planned_exit", false, false, false, true,
     "the training exited cleanly short of its target"},
    {NoRetry, "no_retry", A::Stop, kNoRetry, "", false, false, false, false, "the training exited with the do-not-retry code"},
    {Failed, "failed", A::Resubmit, 0, "failed", true, true, true, false, "the training failed"},
    {Timeout, "timeout", A::Resubmit, 0, "timeout", false, false, false, true, "the job reached its time limit"},
    {Preempted, "preempted", A::Resubmit, 0, "preempted", false, false, false, true, "the job was preempted"},
    {NodeFail, "node_fail", A::Resubmit, 0, "node_fail", true, true, false, false, "a node of the job failed"},
    {OutOfMemory, "out_of_memory", A::Resubmit, 0, "out_of_memory", true, false, false, false, "the job ran out of memory"},
    {BootFail, "boot_fail", A::Resubmit, 0, "boot_fail", true, true, false, false, "a node of the job failed to boot"},
    {Deadline, "deadline", A::Stop, kCannotGoOn, "", false, false, false, false, "the job passed its deadline"},
    {CancelledByPerson, "cancelled", A::Stop, kCancelledByPerson, "", false, false, false, false,
     "the job was cancelled, not by mlsup"},
    {Hang, "hang", A::Resubmit, 0, "hang", true, true, true, false, "the training hung (no heartbeat)"},
    // Written by earlier releases, which resubmitted a forgotten job; kept so that their journals replay.
    {Lost, "lost", A::Resubmit, 0, "failed", true, true, false, false, "Slurm forgot the job before its end was seen"},
    {EndUnknown, "end_unknown", A::Stop, kEndUnknown, "", false, false, false, false,
     "Slurm forgot the job and no source (accounting, the plugin's record of the batch script, the script's end "
     "record) says how it ended: nothing is submitted until a person decides"},
    {CancelRequested, "mlsup_cancel", A::Stop, kCancelled, "", false, false, false, false,
     "the campaign was cancelled with `mlsup cancel`"},
    {Forgotten, "forgotten", A::Resubmit, 0, "forgotten", false, false, false, false,
     "Slurm's controller forgot the job (a crash that lost its state?), which never started or whose processes are "
     "gone"},
    // No budget: refusals in a row are bounded in time instead, by policy.submit_retry_for (policy.cpp).
    {Refused, "refused", A::Resubmit, 0, "", false, false, false, false,
     "Slurm would not start the job: its request could not be met"},
}};

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < kRows.size(); ++i)
    if (static_cast<std::size_t>(kRows[i].cls) != i) return false;
  return true;
}
static_assert(in_enum_order(), "the class table's rows follow EndClass");

}  // namespace

constexpr std::string_view kActions[] = {"finish", "resubmit", "stop", "pause"};  // in Action order

std::string_view action_name(Action a) { return kActions[static_cast<std::size_t>(a)]; }

std::optional<Action> action_from_name(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kActions); ++i)
    if (kActions[i] == name) return static_cast<Action>(i);
  return std::nullopt;
}

std::span<const ClassRow> class_table() { return kRows; }

const ClassRow& row(EndClass c) { return kRows[static_cast<std::size_t>(c)]; }

}  // namespace mlsup::decide
