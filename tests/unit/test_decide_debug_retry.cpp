// Debug on retry as a table: the newest ended attempt in, whether (and why) the next one debugs out.
#include <doctest/doctest.h>

#include "decide/debug_retry.h"

using namespace mlsup::decide;

TEST_CASE("debug on retry: after a failure or hang nothing explains, and on until an attempt makes progress") {
  struct Row {
    const char* what;
    DebugLast last;
    bool enabled;
    const char* why;  // a part of the reason; "" = the next attempt does not debug
  };
  const Row rows[] = {
      {"no attempt ended yet", {}, true, ""},
      {"a failure nothing explains", {3, EndClass::Failed, false, false, false}, true, "attempt 3 ended as failed and no evidence rule explains it"},
      {"a hang nothing explains", {3, EndClass::Hang, false, true, false}, true, "ended as hang"},
      {"... and one that made progress before it failed", {3, EndClass::Failed, false, true, true}, true, "ended as failed"},
      {"a failure a rule explains", {3, EndClass::Failed, true, false, false}, true, ""},
      {"a node failure (Slurm says what failed)", {3, EndClass::NodeFail, false, false, false}, true, ""},
      {"an out-of-memory ending", {3, EndClass::OutOfMemory, false, false, false}, true, ""},
      {"a time limit", {3, EndClass::Timeout, false, true, false}, true, ""},
      {"a debugged attempt explained, no progress: still on", {4, EndClass::Failed, true, false, true}, true, "attempt 4 ran with it and made no progress"},
      {"a debugged attempt preempted before any progress: still on", {4, EndClass::Preempted, false, false, true}, true, "made no progress"},
      {"a debugged attempt that made progress and ended explained: off", {4, EndClass::Failed, true, true, true}, true, ""},
      {"a debugged attempt that made progress to its time limit: off", {4, EndClass::Timeout, false, true, true}, true, ""},
      {"debug_on_retry.enabled: false", {3, EndClass::Failed, false, false, false}, false, ""},
  };
  for (const auto& r : rows) {
    CAPTURE(r.what);
    const auto why = debug_reason(r.last, r.enabled);
    if (std::string(r.why).empty()) CHECK(why.empty());
    else CHECK(why.find(r.why) != std::string::npos);
  }
}
