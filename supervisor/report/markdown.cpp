#include "report/markdown.h"

#include <span>

#include "report/text.h"

namespace mlsup::report {
namespace {

using Row = std::vector<std::string>;

// A table: the header row, the separator, then one line per row (each cell escaped).
std::string table(std::span<const char* const> columns, const std::vector<Row>& rows) {
  std::string head = "|", rule = "|";
  for (const char* c : columns) head += " " + std::string(c) + " |", rule += " --- |";
  std::string out = head + "\n" + rule + "\n";
  for (const auto& row : rows) {
    std::string line = "|";
    for (const auto& cell : row) line += " " + markdown_cell(cell) + " |";
    out += line + "\n";
  }
  return out;
}

// A share as a percentage with one decimal ("87.5%"); "-" when unknown.
std::string share(const nlohmann::json& v) { return v.is_number() ? decimal(v.get<double>() * 100, 1) + "%" : "-"; }

Row run_row(const RunFacts& r) {
  return {r.run, r.state, std::to_string(r.attempts.size()), std::to_string(r.failures), std::to_string(r.steps_gained),
          std::to_string(r.recomputed), decimal(r.lost, 1), share(r.time.value("goodput", nlohmann::json())), r.now};
}

Row attempt_row(const RunFacts& r, const AttemptFacts& a) {
  return {r.run, std::to_string(a.number), a.job_id ? std::to_string(*a.job_id) : "", a.nodes, utc_time(a.start),
          a.open ? "" : utc_time(a.end), a.ending, a.action, std::to_string(a.from_step), std::to_string(a.to_step),
          std::to_string(a.kept), decimal(a.lost, 1)};
}

Row exclusion_row(const RunFacts& r, const ExclusionFacts& e) {
  return {r.run, e.node, e.attempt > 0 ? std::to_string(e.attempt) : "", utc_time(e.since), utc_time(e.until), exclusion_text(e)};
}

}  // namespace

std::string render_markdown(const Report& r) {
  std::vector<Row> runs, attempts, exclusions;
  for (const auto& run : r.runs) {
    runs.push_back(run_row(run));
    for (const auto& a : run.attempts) attempts.push_back(attempt_row(run, a));
    for (const auto& e : run.exclusions) exclusions.push_back(exclusion_row(run, e));
  }
  std::string out = "# mlsup report\n\nFrom " + utc_time(r.window.since) + " to " + utc_time(r.window.until) + ", " +
                    std::to_string(r.runs.size()) + " run(s). Goodput is each campaign's whole (as `mlsup status` shows "
                    "it); the other figures are over the attempts shown: every attempt that overlaps the window.\n";
  out += "\n## Runs\n\n" + table(kRunColumns, runs);
  out += "\n## Attempts\n\n" + table(kAttemptColumns, attempts);
  out += "\n## Exclusions\n\n" + table(kExclusionColumns, exclusions);
  std::string advice, runways;
  for (const auto& run : r.runs) {
    for (const auto& a : run.advice) advice += "- " + run.run + ": " + a + "\n";
    runways += "- " + run.run + ": " + (run.runway.empty() ? std::string("not measured") : run.runway) + "\n";
  }
  out += "\n## Advice (`mlsup plan`)\n\n" + (advice.empty() ? std::string("None.\n") : advice);
  out += "\n## Disk runway\n\n" + runways;
  return out;
}

}  // namespace mlsup::report
