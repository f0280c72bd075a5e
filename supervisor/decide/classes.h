#pragma once
// Every way an attempt can end and everything that follows from it, one row per class: its name (in
// events, the journal and the budgets), the policy's action, exit code, budget and backoff, and
// whether it may blame nodes. classify, policy, blame and replay read this table and nothing else.
#include <optional>
#include <span>
#include <string_view>

#include "decide/classify.h"

namespace mlsup::decide {

enum class Action { Finish, Resubmit, Stop, Pause };  // Pause: a lifecycle verb's (no class has it)

struct ClassRow {
  EndClass cls;
  std::string_view name;
  Action action;
  int exit_code;             // Finish and Stop: the campaign's exit code (decide/exit_codes.h)
  std::string_view budget;   // Resubmit: the restart budget it draws on (policy.budgets.<budget>); "": none, bounded in time
  bool backoff;              // Resubmit: wait before the next submission
  bool node_related;         // its evidence may blame nodes
  bool counts_for_blame;     // one of the failures node blame's repeated-failure rule counts
  bool routine;              // Resubmit: a long campaign's routine end, not a failure (no "restart" alert)
  std::string_view reason;   // the decision's sentence
};

// An action's name in the journal's `ended` record ("finish", "resubmit", "stop", "pause").
std::string_view action_name(Action a);
// The action of such a name; nullopt for any other text.
std::optional<Action> action_from_name(std::string_view name);

// The table, in EndClass order.
std::span<const ClassRow> class_table();

// The row of a class.
const ClassRow& row(EndClass c);

}  // namespace mlsup::decide
