// The report's renderers over fake facts: the Markdown's tables parse back into the facts, the SVG's marks carry
// them as data attributes, the HTML page is self-contained; names and reasons are escaped in each.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "report/html.h"
#include "report/markdown.h"
#include "report/summary.h"
#include "report/svg.h"
#include "report/text.h"
#include "report_journal.h"
#include "util/strings.h"

using namespace mlsup;
using namespace mlsup::report;
using test::fake_facts;
using test::fake_journal;

namespace {

using Rows = std::vector<std::vector<std::string>>;

// A run named with a table's separator, its attempt failed then completed; and a run with a name full of markup
// that a set holds back.
Report two_runs() {
  return {.window = {900, 2000},
          .runs = {fake_facts(fake_journal(), 900, 2000, 80, "", "a|b"),
                   fake_facts({}, 900, 2000, -1, "", "<second & \"x\">", "waiting after a|b (running)")}};
}

// One Markdown table line's cells (\| inside a cell is a |).
std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') cell += line[++i];
    else if (line[i] == '|') cells.emplace_back(util::trim(cell)), cell.clear();
    else cell += line[i];
  }
  return cells;
}

// The rows of the Markdown table under "## heading", its header row first.
Rows markdown_rows(const std::string& text, const std::string& heading) {
  const auto at = text.find("## " + heading + "\n");
  REQUIRE(at != std::string::npos);
  std::istringstream in(text.substr(at));
  std::string line;
  std::getline(in, line);
  std::getline(in, line);  // the blank line under the heading
  Rows rows;
  while (std::getline(in, line) && !line.empty() && line[0] == '|')
    if (line.find("| --- |") != 0) rows.push_back(cells_of(line));
  return rows;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("report text: escaping, cells, UTC times and decimals") {
  CHECK(escape_xml("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&#39;");
  CHECK(escape_xml("\xff") == "\\xff");
  CHECK(markdown_cell("a|b\nc") == "a\\|b c");
  CHECK(markdown_cell("") == "-");
  CHECK(utc_time(0) == "1970-01-01T00:00:00Z");
  CHECK(utc_time(1764650000.7) == "2025-12-02T04:33:20Z");
  CHECK(utc_clock(1764650000) == "04:33");
  CHECK(decimal(12.5) == "12.5");
  CHECK(decimal(3.0) == "3");
  CHECK(decimal(1010.12345) == "1010.123");
  CHECK(decimal(-0.0001) == "0");
}

TEST_CASE("report markdown: its tables parse back into the facts") {
  const auto md = render_markdown(two_runs());
  const auto runs = markdown_rows(md, "Runs");
  REQUIRE(runs.size() == 3);
  CHECK(runs[0] == std::vector<std::string>(std::begin(kRunColumns), std::end(kRunColumns)));
  CHECK(runs[1] == std::vector<std::string>{"a|b", "completed", "2", "1", "80", "10", "120", "85.9%",
                                            "completed: the training completed"});
  CHECK(runs[2] == std::vector<std::string>{"<second & \"x\">", "not started", "0", "0", "0", "0", "0", "-",
                                            "not started: waiting after a|b (running)"});
  const auto attempts = markdown_rows(md, "Attempts");
  REQUIRE(attempts.size() == 3);
  CHECK(attempts[0] == std::vector<std::string>(std::begin(kAttemptColumns), std::end(kAttemptColumns)));
  CHECK(attempts[1] == std::vector<std::string>{"a|b", "1", "101", "n1", "1970-01-01T00:16:50Z", "1970-01-01T00:21:50Z",
                                                "failed", "resubmit", "0", "30", "20", "120"});
  CHECK(attempts[2][6] == "completed");
  CHECK(attempts[2][9] == "80");
  const auto exclusions = markdown_rows(md, "Exclusions");
  REQUIRE(exclusions.size() == 2);
  CHECK(exclusions[1] == std::vector<std::string>{"a|b", "n1", "1", "1970-01-01T00:21:50Z", "1970-01-01T01:23:20Z",
                                                  "first failing task | exit 1"});
}

TEST_CASE("report markdown: a window without attempts still has its tables, header only") {
  const auto md = render_markdown({.window = {0, 10}, .runs = {fake_facts({}, 0, 10)}});
  CHECK(markdown_rows(md, "Attempts").size() == 1);
  CHECK(markdown_rows(md, "Exclusions").size() == 1);
}

TEST_CASE("report svg: every attempt is a mark with its facts as data attributes, failures and exclusions marked") {
  const auto svg = render_svg(two_runs());
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(count(svg, "<rect class=\"attempt ") == 2);
  CHECK(svg.find("<rect class=\"attempt failure\" data-run=\"a|b\" data-attempt=\"1\" data-job=\"101\" data-start=\"1010\" "
                 "data-end=\"1310\" data-ending=\"failed\" data-action=\"resubmit\" data-from-step=\"0\" data-step=\"30\"") !=
        std::string::npos);
  CHECK(svg.find("data-attempt=\"2\" data-job=\"102\" data-start=\"1330\" data-end=\"1930\" data-ending=\"completed\"") !=
        std::string::npos);
  CHECK(count(svg, "<path class=\"failure\"") == 1);
  CHECK(count(svg, "<path class=\"exclusion\" data-run=\"a|b\" data-node=\"n1\" data-attempt=\"1\"") == 1);
  CHECK(count(svg, "<circle class=\"step\" data-run=\"a|b\"") == 4);  // each attempt's start and end
  CHECK(svg.find("data-run=\"&lt;second &amp; &quot;x&quot;&gt;\"") != std::string::npos);
  CHECK(svg.find("<second") == std::string::npos);
  CHECK(render_svg(two_runs(), false).rfind("<svg ", 0) == 0);
}

// The pixel width of the bar of attempt n in svg.
double bar_width(const std::string& svg, int n) {
  const auto bar = svg.find("data-attempt=\"" + std::to_string(n) + "\" data-job=");
  REQUIRE(bar != std::string::npos);
  const auto at = svg.find(" width=\"", bar);
  REQUIRE(at != std::string::npos);
  return std::stod(svg.substr(at + 8));
}

TEST_CASE("report svg: the timeline spans the attempts, not the whole window, and says what the window was") {
  const double day = 86400;
  Report night = {.window = {2000 - day, 2000}, .runs = {fake_facts(fake_journal(), 2000 - day, 2000, 80, "", "a")}};
  const auto svg = render_svg(night);
  CHECK(svg.find("data-since=\"-84400\" data-until=\"2000\" data-view-since=\"950\" data-view-until=\"1990\"") !=
        std::string::npos);  // 1010 to 1930, a minute's margin each side, within the window
  CHECK(bar_width(svg, 2) > 400);  // 600 s of 1,040 over 770 px (5 px over the whole day)
  CHECK(svg.find("report window 1969-12-31") != std::string::npos);
  CHECK(count(svg, "class=\"window-edge\"") == 0);  // the window's edges lie outside the picture
  const auto empty = render_svg({.window = {0, day}, .runs = {fake_facts({}, 0, day)}});
  CHECK(empty.find("data-view-since=\"0\" data-view-until=\"86400\"") != std::string::npos);  // nothing ran: the window
  const auto tight = render_svg({.window = {1000, 1940}, .runs = {fake_facts(fake_journal(), 1000, 1940, 80, "", "a")}});
  CHECK(count(tight, "class=\"window-edge\"") == 2);  // the margin reaches both edges: marked
}

TEST_CASE("report html: one self-contained page with the timeline inline, every name escaped") {
  const auto r = two_runs();
  const auto html = render_html(r, render_svg(r, false));
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(count(html, "<svg ") == 1);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("<link") == std::string::npos);
  CHECK(html.find("src=") == std::string::npos);
  CHECK(count(html, "http") == 1);  // the SVG's namespace, which names and fetches nothing
  CHECK(html.find("<second") == std::string::npos);
  CHECK(html.find("&lt;second &amp; &quot;x&quot;&gt;") != std::string::npos);
  CHECK(count(html, "<tr class=\"failure\">") == 1);
  CHECK(html.find("first failing task | exit 1") != std::string::npos);
}

TEST_CASE("report summary: one line for the notification channels, a run that has not started with its gate") {
  CHECK(summary_line(two_runs()) ==
        "1970-01-01T00:15:00Z to 1970-01-01T00:33:20Z: a|b completed (2 attempts, 1 failure, 80 steps gained, "
        "120 s lost, goodput 85.9%); <second & \"x\"> not started: waiting after a|b (running)");
  CHECK(summary_line({.window = {0, 60}}) == "1970-01-01T00:00:00Z to 1970-01-01T00:01:00Z: no run");
}

TEST_CASE("report: each run's advice and disk runway from `mlsup plan` are in the Markdown, the HTML (escaped) and the JSON") {
  auto r = two_runs();
  r.runs[0].advice = {"save every 313 steps (about 16s of compute) instead of every 40 steps: goodput 45% -> 70%"};
  r.runs[1].advice = {"disk: no room for the next checkpoint (1.0 GB) on /scratch/<x>"};
  r.runs[0].runway = "runway 14h00m on /scratch at a 1.0 GB checkpoint every 30m";
  const auto md = render_markdown(r);
  CHECK(md.find("## Advice (`mlsup plan`)\n\n- a|b: save every 313 steps") != std::string::npos);
  CHECK(md.find("- <second & \"x\">: disk: no room") != std::string::npos);
  const auto html = render_html(r, render_svg(r, false));
  CHECK(html.find("<li>save every 313 steps") != std::string::npos);
  CHECK(html.find("/scratch/&lt;x&gt;</li>") != std::string::npos);
  CHECK(to_json(r)["runs"][0]["advice"][0] == r.runs[0].advice[0]);
  CHECK(md.find("## Disk runway\n\n- a|b: runway 14h00m on /scratch") != std::string::npos);
  CHECK(md.find("- <second & \"x\">: not measured\n") != std::string::npos);
  CHECK(html.find("<p>Disk: runway 14h00m on /scratch") != std::string::npos);
  CHECK(to_json(r)["runs"][0]["runway"] == r.runs[0].runway);
  r.runs[0].advice.clear();
  r.runs[1].advice.clear();
  CHECK(render_markdown(r).find("## Advice (`mlsup plan`)\n\nNone.\n") != std::string::npos);
}
