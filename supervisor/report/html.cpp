#include "report/html.h"

#include "report/markdown.h"
#include "report/text.h"

namespace mlsup::report {
namespace {

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:0.5em 0 1.5em}"
    "th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;font-size:13px}th{background:#f2f2f2}"
    "td.num{text-align:right}tr.failure td{background:#fdecea}svg{max-width:100%;height:auto}";

using Cells = std::vector<std::pair<std::string, bool>>;  // each cell's text and whether it is a number

// One table row of escaped cells; cls names the row's class ("" for none).
std::string row(const Cells& cells, const std::string& cls = "") {
  std::string out = cls.empty() ? "<tr>" : "<tr class=\"" + cls + "\">";
  for (const auto& [text, number] : cells) out += (number ? "<td class=\"num\">" : "<td>") + escape_xml(text) + "</td>";
  return out + "</tr>\n";
}

// A table's opening and header row from a column list.
template <class Columns>
std::string head(const Columns& columns) {
  std::string out = "<table>\n<tr>";
  for (const char* c : columns) out += "<th>" + escape_xml(c) + "</th>";
  return out + "</tr>\n";
}

std::string goodput(const RunFacts& r) {
  const auto g = r.time.value("goodput", nlohmann::json());
  return g.is_number() ? decimal(g.get<double>() * 100, 1) + "%" : "-";
}

std::string runs_table(const Report& r) {
  std::string out = head(kRunColumns);
  for (const auto& run : r.runs)
    out += row({{run.run, false}, {run.state, false}, {std::to_string(run.attempts.size()), true},
                {std::to_string(run.failures), true}, {std::to_string(run.steps_gained), true},
                {std::to_string(run.recomputed), true}, {decimal(run.lost, 1), true}, {goodput(run), true}, {run.now, false}});
  return out + "</table>\n";
}

// One run's section: its attempts (failures marked), then its exclusions.
std::string run_section(const RunFacts& run) {
  std::string out = "<h2>" + escape_xml(run.run) + "</h2>\n<p>" + escape_xml(run.config) + ": " + escape_xml(run.now) + "</p>\n";
  out += head(kAttemptColumns);
  for (const auto& a : run.attempts)
    out += row({{run.run, false}, {std::to_string(a.number), true}, {a.job_id ? std::to_string(*a.job_id) : "-", true},
                {a.nodes, false}, {utc_time(a.start), false}, {a.open ? "-" : utc_time(a.end), false},
                {a.ending + (a.reason.empty() ? "" : ": " + a.reason), false}, {a.action, false},
                {std::to_string(a.from_step), true}, {std::to_string(a.to_step), true}, {std::to_string(a.kept), true},
                {decimal(a.lost, 1), true}},
               a.failure ? "failure" : "");
  out += "</table>\n";
  if (!run.runway.empty()) out += "<p>Disk: " + escape_xml(run.runway) + "</p>\n";
  if (!run.advice.empty()) {
    out += "<p>Advice (<code>mlsup plan</code>):</p>\n<ul>\n";
    for (const auto& a : run.advice) out += "<li>" + escape_xml(a) + "</li>\n";
    out += "</ul>\n";
  }
  if (run.exclusions.empty()) return out + "<p>No node excluded in the window.</p>\n";
  out += head(kExclusionColumns);
  for (const auto& e : run.exclusions)
    out += row({{run.run, false}, {e.node, false}, {e.attempt > 0 ? std::to_string(e.attempt) : "-", true},
                {utc_time(e.since), false}, {utc_time(e.until), false}, {exclusion_text(e), false}});
  return out + "</table>\n";
}

}  // namespace

std::string render_html(const Report& r, const std::string& svg) {
  const std::string window = utc_time(r.window.since) + " to " + utc_time(r.window.until);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>mlsup report, " +
                    escape_xml(window) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n";
  out += "<h1>mlsup report</h1>\n<p>From " + escape_xml(window) + " (UTC). Goodput is each campaign's whole, as "
         "<code>mlsup status</code> shows it; the other figures are over the attempts shown: every attempt that "
         "overlaps the window.</p>\n";
  out += runs_table(r) + svg + "\n";
  for (const auto& run : r.runs) out += run_section(run);
  return out + "</body>\n</html>\n";
}

}  // namespace mlsup::report
