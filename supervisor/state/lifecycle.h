#pragma once
// The lifecycle verbs (`mlsup resume`, `pause`, `cancel`, `unexclude`) as requests: what one asks,
// whether the campaign's state allows it, and the state's name as status shows it. Pure.
//
// A verb leaves its request as a file in <state_dir>/requests/ (written whole, by rename): whoever
// holds the campaign's lease reads it in its next pass, journals it (a `resumed`, `paused`,
// `cancel-requested`, `unexcluded` or `request-refused` record naming the request) and removes the file, so that a
// request is carried out once, by one supervisor, whether or not a `mlsup run` holds the campaign.
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "state/state.h"

namespace mlsup::engine {

enum class Verb { Resume, Pause, Cancel, Unexclude };

// Where the campaign stands, from its journal; its name (status's "state") only at the JSON edge.
enum class Lifecycle { NotStarted, Running, Paused, Completed, Stopped, Cancelled };

struct Request {
  std::string id;          // the request file's name without ".json"; unique, sorts by time
  Verb verb = Verb::Resume;
  bool now = false;        // pause --now: the training saves and exits
  std::string from;        // resume --from: the checkpoint; "" = the newest complete one
  long long from_step = 0;
  std::string node;        // unexclude: the node whose live exclusion is lifted
  std::string why;         // unexclude --why: the person's reason
  std::string by;          // user@host
  double time = 0;         // wall time it was asked
};

// A request the campaign's state does not allow: the exit code and what to say.
struct Refusal {
  int code = 0;
  std::string message;
};

std::string_view verb_name(Verb v);
nlohmann::json to_json(const Request& r);
// The request in a request file's JSON (id from its name); nullopt when it is not one.
std::optional<Request> request_from_json(const std::string& id, const nlohmann::json& j);

Lifecycle lifecycle_of(const CampaignState& s);
// Its name, as status and check show it: "not started", "running", "paused", "completed", "stopped", "cancelled".
std::string_view lifecycle_name(Lifecycle l);
inline constexpr Lifecycle kLifecycles[] = {Lifecycle::NotStarted, Lifecycle::Running,  Lifecycle::Paused,
                                            Lifecycle::Completed,  Lifecycle::Stopped, Lifecycle::Cancelled};
// The campaign's state in words: lifecycle_name(lifecycle_of(s)).
std::string state_name(const CampaignState& s);
// An ended campaign: completed, stopped or cancelled.
constexpr bool has_ended(Lifecycle l) {
  return l == Lifecycle::Completed || l == Lifecycle::Stopped || l == Lifecycle::Cancelled;
}

// Why the campaign's state refuses r (resume of a running or completed campaign, pause or cancel of
// one that has ended, unexclude of a node not excluded at r.time); nullopt when r may go ahead. A pause of
// a paused campaign goes ahead only with --now.
std::optional<Refusal> refuse(const CampaignState& s, const Request& r);

// What a request does, in one sentence for people (the verb's answer, the event's reason).
std::string what_happens(const CampaignState& s, const Request& r);

}  // namespace mlsup::engine
