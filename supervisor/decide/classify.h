#pragma once
// How an attempt ended, from what Slurm says and what mlsup knows: the first step of every decision.
#include <optional>
#include <string_view>

#include "slurm_model/types.h"

namespace mlsup::decide {

enum class EndClass {
  Completed, KillSwitch, PlannedExit, NoRetry, Failed, Timeout, Preempted, NodeFail, OutOfMemory, BootFail,
  Deadline, CancelledByPerson, Hang, Lost, EndUnknown, CancelRequested, Forgotten, Refused,
};

// The class's name in events and the journal ("node_fail").
std::string_view class_name(EndClass c);

// Reads a class name back; nullopt for an unknown one.
std::optional<EndClass> class_from_name(std::string_view name);

// What is known when an attempt's job has ended.
struct Ending {
  slurm::JobState state = slurm::JobState::Unknown;
  int exit_code = 0;
  int exit_signal = 0;
  std::optional<EndClass> cancelled_by_mlsup;  // mlsup cancelled the job, and why (e.g. Hang)
  bool kill_switch = false;                    // the kill switch file exists
  bool target_reached = false;                 // the step reached is at or past target.steps
  int no_retry_exit_code = 78;
  bool vanished = false;                       // Slurm forgot the job and no other source knows its end
  bool gone = false;                           // ... and it never started, or its processes are shown gone
  bool never_ran = false;                      // Slurm ended the job without starting it (no batch host)
};

// The class of an ending.
EndClass classify(const Ending& e);

}  // namespace mlsup::decide
