#pragma once
// The rows of the engine's reconcile tables: a pass's world, a job and an attempt as the tables vary
// them, a campaign of attempts, and a fixture's journal replayed.
#include <string>
#include <utility>
#include <vector>

#include "reconcile/reconcile.h"
#include "engine_fixture.h"
#include "journal/journal.h"

namespace mlsup::test::rows {

// A pass at wall time 1000 with a template that renders, no checkpoint, and the job query's answer.
inline engine::World world(std::vector<slurm::Job> jobs = {}) {
  engine::World w;
  w.now = {1000, 500, "host/boot"};
  w.template_text = "#!/bin/bash\nsrun true\n";
  w.template_read = true;
  w.checkpoints = checkpoint::Scan{};
  w.jobs = engine::JobsAnswer(std::move(jobs));
  return w;
}

// Job 42 on n1 in the given state.
inline slurm::Job job(slurm::JobState state) {
  slurm::Job j;
  j.job_id = 42;
  j.state = state;
  j.nodes = "n1";
  return j;
}

// Attempt 1 of campaign "abc", its job 42 when submitted.
inline engine::AttemptState attempt(bool ended = false, bool submitted = true) {
  engine::AttemptState a;
  a.number = 1;
  a.tag = "mlsup:t:abc:1";
  if (submitted) a.job_id = 42;
  a.ended = ended;
  return a;
}

// Campaign "abc" with these attempts; awaiting: the last one's resubmission was decided.
inline engine::CampaignState campaign(std::vector<engine::AttemptState> attempts, bool awaiting = false) {
  engine::CampaignState s;
  s.campaign_id = "abc";
  s.attempts = std::move(attempts);
  s.awaiting_submit = awaiting;
  return s;
}

// The fixture campaign's journal, replayed.
inline engine::CampaignState journaled(const EngineFixture& f) {
  return engine::replay(journal::Journal::read_only(f.config.state_dir + "/journal.jsonl", f.config.name).first);
}

}  // namespace mlsup::test::rows
