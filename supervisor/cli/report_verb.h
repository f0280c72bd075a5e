#pragma once
// `mlsup report CONFIG... [--since WHEN] [--out DIR] [--json] [--notify]`: the morning report of the campaigns
// named (a campaign set stands for its runs): report.html, report.md and report.svg written to DIR (report/
// renders them), and with --notify its one line sent through the runs' notification channels.
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace mlsup::cli {

struct ReportOptions {
  std::vector<std::string> sources;  // configs, folders, sets, SET:RUN
  std::string since = "12h";         // as `mlsup events --since` reads it
  std::string out_dir = ".";
  bool json = false;                 // print the facts as JSON instead of the files' names
  bool notify = false;               // also send the one-line summary through the runs' notification channels
};

// Adds the `report` verb and its options to app, filling o; the verb's subcommand.
CLI::App* add_report_verb(CLI::App& app, ReportOptions& o);

// Carries out the verb: 0, 2 (a --since it cannot read), 3 (a config with errors; the others are reported)
// or 1 (a file could not be written).
int report_verb(const ReportOptions& o);

}  // namespace mlsup::cli
