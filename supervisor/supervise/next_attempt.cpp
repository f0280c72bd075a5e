#include "supervise/next_attempt.h"

#include "decide/ledger.h"
#include "reconcile/reconcile.h"
#include "state/state.h"
#include "store/read_campaign.h"

namespace mlsup::engine {
namespace {

CampaignState replayed(const config::Config& c, std::vector<std::string>& notes) {
  auto read = store::read_journal(c);
  for (const auto& e : read.problems) notes.push_back("journal: " + e.str());
  return std::move(read.state);
}

// The node states the exclusion cap needs, when it needs them; false when they are needed and unknown.
bool read_nodes(World& w, const CampaignState& s, const config::Config& c, slurm::Client* nodes,
                std::vector<std::string>& notes) {
  if (c.policy.exclusion_cap > 0 || decide::excluded_nodes(s.ledger, w.now.wall, -1).empty()) return true;
  if (nodes) w.nodes = nodes->nodes();
  if (w.nodes && *w.nodes) return true;
  notes.push_back("Slurm's node states were not read (" +
                  (w.nodes ? w.nodes->error().message : std::string("Slurm was not asked")) +
                  "): every live exclusion is shown, without the cap that keeps enough nodes for the job");
  return false;
}

}  // namespace

std::optional<NextAttempt> next_attempt(const config::Config& c, const std::string& template_text, int template_nodes,
                                        slurm::Client* nodes, double now) {
  NextAttempt next;
  const CampaignState s = replayed(c, next.notes);
  if (s.campaign_id.empty()) return std::nullopt;
  World w;
  w.now.wall = now;
  w.template_text = template_text;
  w.template_nodes = template_nodes;
  w.template_read = true;
  w.checkpoints = checkpoint::scan(c.checkpoint);
  const bool capped = read_nodes(w, s, c, nodes, next.notes);
  auto sub = next_submission(s, w, c);
  if (!sub) return std::nullopt;
  const bool decided_now = !s.current() || s.current()->number != sub->attempt;  // not an intent already journaled
  if (!capped && decided_now) sub->exclude = decide::excluded_nodes(s.ledger, now, -1);
  if (s.finished_code)
    next.notes.push_back("the campaign has ended (exit " + std::to_string(*s.finished_code) + ": " + s.finished_reason +
                         "): nothing more is submitted; this is what another attempt would get");
  next.attempt = {sub->attempt, sub->resume_from, sub->exclude, sub->tag, s.campaign_id, sub->signal_lead, !sub->debug.empty()};
  next.resume_step = sub->resume_step;
  next.script_path = c.dir().attempt_script(sub->attempt);
  next.working_dir = c.base_dir;
  return next;
}

}  // namespace mlsup::engine
