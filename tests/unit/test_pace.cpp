// The training's measured pace from its heartbeat: step times between steps outside any phase, save
// times from the "saving" phase, their quantiles, and memory.json keeping them.
#include <doctest/doctest.h>

#include "decide/signal_lead.h"
#include "observe/pace.h"
#include "state/memory.h"
#include "views/status_view.h"

using namespace mlsup::engine;

namespace {

// The combined heartbeat as a pass saw it: content first seen at `at`, progress at `at` unless waiting.
HeartbeatSeen seen(const std::string& content, double at) {
  auto h = parse_heartbeat(content);
  h.changed_at = at;
  h.progress_at = h.waiting ? 0 : at;
  return h;
}

}  // namespace

TEST_CASE("pace: a step's time is the time between two changes seen over the steps between them") {
  Pace p;
  learn_pace(p, HeartbeatSeen{}, seen("10", 100));  // the attempt's first step: start-up, no measure
  CHECK(p.steps.empty());
  learn_pace(p, seen("10", 100), seen("14", 102));
  learn_pace(p, seen("14", 102), seen("15", 102.5));
  CHECK(p.steps == std::vector<double>{0.5, 0.5});
  learn_pace(p, seen("15", 102.5), seen("15", 103));  // no new step
  CHECK(p.steps.size() == 2);
}

TEST_CASE("pace: a save lasts from the first pass that saw \"saving\" to the first that saw it over; steps around it do not count") {
  Pace p;
  learn_pace(p, seen("20", 100), seen("20 saving", 101));
  CHECK(p.saving_since == 101);
  learn_pace(p, seen("20 saving", 101), seen("20 saving", 101));  // read again, unchanged
  learn_pace(p, seen("20 saving", 101), seen("21", 191));
  CHECK(p.saves == std::vector<double>{90});
  CHECK(p.saving_since == 0);
  CHECK(p.steps.empty());  // the step after the save is not the pace
  learn_pace(p, seen("21", 191), seen("23", 192));
  CHECK(p.steps == std::vector<double>{0.5});
  learn_pace(p, seen("23", 192), seen("23 saving waiting", 193));  // blocked on peers: not saving
  CHECK(p.saving_since == 0);
}

TEST_CASE("pace: a save the attempt's last word says is over counts up to that word's writing (else until now)") {
  Pace p;
  learn_pace(p, seen("20", 100), seen("20 saving", 101));
  learn_last_save(p, seen("21", 190), 150, 190);  // written at 150, read at the job's end at 190
  CHECK(p.saves == std::vector<double>{49});
  CHECK(p.saving_since == 0);
  learn_pace(p, seen("21", 200), seen("21 saving", 201));
  learn_last_save(p, seen("22", 260), 5e9, 260);  // a write time not on this clock: taken as now
  CHECK(p.saves == std::vector<double>{49, 59});
  learn_pace(p, seen("22", 300), seen("22 saving", 301));
  learn_last_save(p, seen("22 saving", 330), 320, 330);  // it ended mid-save: no measure
  CHECK(p.saves.size() == 2);
  Pace none;
  learn_last_save(none, seen("5", 10), 9, 10);  // no save under way
  CHECK(none.saves.empty());
}

TEST_CASE("pace: quantiles by nearest rank, the newest 64 samples kept, and memory.json keeps them") {
  Pace p;
  for (int i = 1; i <= 100; ++i) learn_pace(p, seen(std::to_string(i), i), seen(std::to_string(i + 1), i + i / 100.0 + 1));
  CHECK(p.steps.size() == kPaceSamples);
  CHECK(quantile({}, 0.5) == std::nullopt);
  CHECK(quantile({3, 1, 2, 4}, 0.5) == 2);
  CHECK(quantile({3, 1, 2, 4}, 0.95) == 4);
  CHECK(quantile({7}, 0.95) == 7);
  p.saves = {10, 12, 30};
  const auto f = pace_figures(p);
  CHECK(f.save_p50 == 12);
  CHECK(f.save_p95 == 30);
  CHECK(f.saves == 3);
  Memory m;
  m.pace = p;
  m.pace.saving_since = 55;
  CHECK(memory_from_json(to_json(m)).pace == m.pace);
  focus(m, 2);  // a save the attempt before left unfinished is no measure
  CHECK(m.pace.saving_since == 0);
  CHECK(m.pace.saves == p.saves);
}

TEST_CASE("signal_lead auto: 1.5 times a save and a step (p95) and a minute, at most half the time limit; nothing measured, nothing sized") {
  CHECK(mlsup::decide::auto_lead(std::nullopt, 0.5, 3600) == std::nullopt);
  CHECK(mlsup::decide::needed_lead(90.0, 2.0) == 92.0);
  CHECK(mlsup::decide::auto_lead(90.0, 2.0, 0) == 138 + 60);
  CHECK(mlsup::decide::auto_lead(90.0, 2.0, 300) == 150);  // half of a 5-minute limit
  CHECK(mlsup::decide::auto_lead(0.4, std::nullopt, 0) == 61);
}

TEST_CASE("a fixed signal lead shorter than a measured save and step is warned of; auto or long enough is not") {
  mlsup::config::Config c;
  c.slurm.signal_lead.value = mlsup::config::Seconds(60);
  PaceFigures pace;
  CHECK_FALSE(short_lead_warning(c, pace));  // nothing measured
  pace.save_p95 = 90.0;
  pace.step_p95 = 2.0;
  const auto w = short_lead_warning(c, pace);
  REQUIRE(w);
  CHECK(*w == "slurm.signal_lead 1m00s is shorter than a save and a step take as measured (1m32s, p95): a time limit "
              "would cut the save off; set it longer, or auto");
  c.slurm.signal_lead.automatic = true;
  CHECK_FALSE(short_lead_warning(c, pace));
  c.slurm.signal_lead = {mlsup::config::Seconds(120), false};
  CHECK_FALSE(short_lead_warning(c, pace));
}
