#include "cli/exclusions_verb.h"

#include <algorithm>
#include <iostream>
#include <string_view>
#include <vector>

#include "cli/exit_codes.h"
#include "cli/status_text.h"
#include "config/load.h"
#include "supervise/loop.h"
#include "util/json.h"
#include "util/strings.h"

namespace mlsup::cli {
namespace {

using nlohmann::json;
using util::JournalRecord;

// How an exclusion ended before its time, by the record whose time its expiry became.
struct EarlyEnd {
  std::string_view type;  // the record's
  std::string_view how;   // as the view says it
};
constexpr EarlyEnd kEarlyEnds[] = {
    {"unexcluded", "unexcluded"},
    {"relaxed", "relaxed so that a waiting job could start"},
    {"exclusion-lifted", "lifted: the failure follows the training, not the node"},
    {"exclusion-moved", "followed its GPUs to another node"},
};

// The records an exclusion's evidence is read from, in journal order.
struct Evidence {
  std::vector<const JournalRecord*> excludes, ends, early, moves;
};

Evidence evidence_records(const std::vector<JournalRecord>& records) {
  Evidence out;
  for (const auto& r : records) {
    if (r.type == "exclusion-moved") out.moves.push_back(&r);  // also an early end, below
    if (r.type == "exclude") out.excludes.push_back(&r);
    else if (r.type == "ended") out.ends.push_back(&r);
    else if (std::any_of(std::begin(kEarlyEnds), std::end(kEarlyEnds), [&](const auto& e) { return e.type == r.type; }))
      out.early.push_back(&r);
  }
  return out;
}

// The record names node: its "node" (an exclusion-moved: its "from"), or among its "lifted".
bool names(const json& data, const std::string& node) {
  if (util::string_field(data, "node") == node || util::string_field(data, "from") == node) return true;
  const auto it = data.find("lifted");
  return it != data.end() && it->is_array() && std::find(it->begin(), it->end(), json(node)) != it->end();
}

// The record of rs at time t that names node; nullptr when none.
const JournalRecord* at(const std::vector<const JournalRecord*>& rs, double t, const std::string& node) {
  for (const auto* r : rs)
    if (r->time == t && names(r->data, node)) return r;
  return nullptr;
}

// The attempt's `ended` record (its last); nullptr when it has none.
const JournalRecord* ending_of(const std::vector<const JournalRecord*>& ends, int attempt) {
  for (auto it = ends.rbegin(); it != ends.rend(); ++it)
    if (util::number_field((*it)->data, "attempt", -1) == attempt) return *it;
  return nullptr;
}

// A string field, null when absent or empty.
json text_or_null(const json& data, const char* key) {
  const std::string v = util::string_field(data, key);
  return v.empty() ? json(nullptr) : json(v);
}

// The rule that made the exclusion ("first_evidence" with its failure's rank and step, "evidence:<rule>").
void add_rule(json& out, const JournalRecord* exclude) {
  const json data = exclude ? exclude->data : json::object();
  out["rule"] = text_or_null(data, "rule");
  if (util::string_field(data, "rule") != "first_evidence") return;
  out["rank"] = static_cast<int>(util::number_field(data, "rank", -1));
  out["step"] = static_cast<long long>(util::number_field(data, "step"));
}

// How the attempt it was made for ended: its class, job, and the evidence rule's line.
void add_ending(json& out, const JournalRecord* ended) {
  const json data = ended ? ended->data : json::object();
  out["class"] = text_or_null(data, "class");
  out["job_id"] = data.contains("job_id") && data["job_id"].is_number() ? data["job_id"] : json(nullptr);
  out["evidence_rule"] = text_or_null(data, "evidence_rule");
  out["evidence_quote"] = text_or_null(data, "evidence_quote");
}

// What ended it before its time; null when it runs (or ran) its full time.
json early_end(const Evidence& ev, const decide::Exclusion& e) {
  const JournalRecord* r = at(ev.early, e.until, e.node);
  if (!r) return nullptr;
  json out{{"how", "?"}, {"time", r->time}, {"by", text_or_null(r->data, "by")}, {"why", text_or_null(r->data, "why")}};
  for (const auto& end : kEarlyEnds)
    if (end.type == r->type) out["how"] = std::string(end.how);
  if (r->type == "unexcluded") out["request"] = text_or_null(r->data, "request");
  if (r->type == "exclusion-moved") out["to"] = text_or_null(r->data, "to");
  return out;
}

// One exclusion (the ledger's entry i) with its evidence.
json entry_json(const engine::CampaignState& s, const Evidence& ev, std::size_t i, double now) {
  const auto& e = s.ledger[i];
  const int attempt = i < s.ledger_attempts.size() ? s.ledger_attempts[i] : 0;
  json out{{"node", e.node},   {"live", e.until > now}, {"since", e.since}, {"until", e.until},
           {"attempt", attempt > 0 ? json(attempt) : json(nullptr)}, {"reason", e.reason}, {"gpus", e.gpus}};
  add_rule(out, at(ev.excludes, e.since, e.node));
  const JournalRecord* moved = nullptr;  // an exclusion that followed its GPUs here: the attempt only showed them
  for (const auto* r : ev.moves)
    if (r->time == e.since && util::string_field(r->data, "to") == e.node) moved = r;
  add_ending(out, attempt > 0 && !moved ? ending_of(ev.ends, attempt) : nullptr);
  out["moved_from"] = moved ? text_or_null(moved->data, "from") : json(nullptr);
  out["lifted"] = early_end(ev, e);
  return out;
}

// The evidence in a few words: the attempt, its job and class, the rule.
std::string evidence_words(const json& x) {
  std::string out;
  if (x["attempt"].is_number()) out += "attempt " + util::json_text(x["attempt"]);
  if (x["job_id"].is_number()) out += " (job " + util::json_text(x["job_id"]) + ", " + util::string_field(x, "class", "?") + ")";
  if (x["rule"].is_string()) {
    out += (out.empty() ? "" : ", ") + std::string("rule ") + util::json_text(x["rule"]);
    if (x.contains("rank")) out += " (rank " + util::json_text(x["rank"]) + ", step " + util::json_text(x["step"]) + ")";
  }
  if (x["evidence_quote"].is_string()) out += ", quoting \"" + util::json_text(x["evidence_quote"]) + "\"";
  if (x["moved_from"].is_string()) out += ", followed its GPUs from " + util::json_text(x["moved_from"]);
  return out.empty() ? "no attempt recorded" : out;
}

// How it ended early, for people.
std::string lifted_words(const json& lifted) {
  std::string out = util::string_field(lifted, "how", "?") + " at " + local_time(util::number_field(lifted, "time"));
  if (lifted.contains("to") && lifted["to"].is_string()) out += " (" + util::json_text(lifted["to"]) + ")";
  if (lifted["by"].is_string()) out += " by " + util::json_text(lifted["by"]);
  if (lifted["why"].is_string()) out += ": " + util::json_text(lifted["why"]);
  return out;
}

// One exclusion for people, on two lines.
std::string entry_lines(const json& x) {
  std::string line = "  " + util::string_field(x, "node") + "  " + local_time(util::number_field(x, "since")) + " until " +
                     local_time(util::number_field(x, "until")) + "; " + evidence_words(x) + "\n    " +
                     util::string_field(x, "reason");
  if (!x["gpus"].empty()) line += "\n    GPUs: " + util::join(x["gpus"].get<std::vector<std::string>>(), ", ");
  if (x["lifted"].is_object()) line += "\n    " + lifted_words(x["lifted"]);
  return line + "\n";
}

void print_view(const std::string& campaign, const json& view) {
  const auto& all = view["exclusions"];
  const auto live = view["live"].get<std::size_t>();
  std::cout << "campaign " << campaign << ": " << live << " live exclusion(s), " << all.size() - live << " ended\n";
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i == 0 && live > 0) std::cout << "live:\n";
    if (i == live) std::cout << "ended:\n";
    std::cout << entry_lines(all[i]);
  }
}

}  // namespace

json exclusions_view(const store::StoredJournal& journal, double now) {
  const auto& s = journal.state;
  const Evidence ev = evidence_records(journal.records);
  json live = json::array(), ended = json::array();
  for (std::size_t i = s.ledger.size(); i-- > 0;)  // newest first
    (s.ledger[i].until > now ? live : ended).push_back(entry_json(s, ev, i, now));
  const std::size_t count = live.size();
  for (auto& x : ended) live.push_back(std::move(x));
  return {{"now", now}, {"live", count}, {"exclusions", std::move(live)}};
}

int exclusions_verb(const std::string& config_path, bool as_json) {
  auto c = config::load_config_file(config_path);
  if (!c) {
    for (const auto& e : c.error()) std::cerr << e.str() << "\n";
    return kBadInput;
  }
  const auto journal = store::read_journal(*c);
  for (const auto& p : journal.problems) std::cerr << p.str() << "\n";
  json view = exclusions_view(journal, engine::clocks_now().wall);
  view["campaign"] = c->name;
  if (as_json) std::cout << util::dump_json(view, 2) << "\n";
  else print_view(c->name, view);
  return journal.problems.empty() ? kOk : kRuntimeFailure;
}

}  // namespace mlsup::cli
