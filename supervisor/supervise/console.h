#pragma once
// How an event reads on the console of run and tick: one line, the time, the campaign's name when
// several run, the event, its key fields (a table), then its reason. Pure; the event log keeps every field.
#include <string>

#include <nlohmann/json.hpp>

namespace mlsup::engine {

// "12:00:01 submitted attempt=2 job_id=42 exclude=n2 resume_from=/ck/step-200 resume_step=200: resubmission".
std::string console_line(const nlohmann::json& e, bool named);

}  // namespace mlsup::engine
