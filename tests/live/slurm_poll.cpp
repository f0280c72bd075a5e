// mlsup_slurm_poll: asks Slurm for a set of jobs N times, the way the supervisor's poll does, and
// prints one JSON line per poll (the jobs seen, or the error) and a latency summary. Used by the
// integration tests and the query benchmark.
//   mlsup_slurm_poll [--backend libslurm|cli] [--scope user|all] [--polls N] [--interval-ms M] ID...
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "slurm/client.h"

using namespace mlsup::slurm;

namespace {

struct Options {
  std::string backend = "libslurm";
  QueryScope scope = QueryScope::User;
  int polls = 10;
  int interval_ms = 1000;
  std::vector<JobId> ids;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--backend") o.backend = value();
    else if (a == "--scope") o.scope = value() == "all" ? QueryScope::All : QueryScope::User;
    else if (a == "--polls") o.polls = std::atoi(value().c_str());
    else if (a == "--interval-ms") o.interval_ms = std::atoi(value().c_str());
    else o.ids.push_back(static_cast<JobId>(std::strtoul(a.c_str(), nullptr, 10)));
  }
  return o;
}

nlohmann::json poll_once(Client& client, const std::vector<JobId>& ids, double& micros) {
  const auto start = std::chrono::steady_clock::now();
  const auto jobs = client.jobs(ids);
  micros = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  const double t = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  nlohmann::json line = {{"us", static_cast<long>(micros)}, {"t", t}};
  if (!jobs) {
    line["ok"] = false;
    line["error"] = std::string(error_kind_name(jobs.error().kind));
    line["message"] = jobs.error().message;
    return line;
  }
  line["ok"] = true;
  line["jobs"] = nlohmann::json::array();
  for (const auto& j : *jobs)
    line["jobs"].push_back({{"id", j.job_id}, {"state", std::string(state_name(j.state))}, {"completing", j.completing}});
  return line;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  auto client = o.backend == "cli" ? make_cli_client() : make_libslurm_client(o.scope);
  std::vector<double> latencies;
  for (int i = 0; i < o.polls; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(o.interval_ms));
    double micros = 0;
    auto line = poll_once(*client, o.ids, micros);
    line["poll"] = i + 1;
    std::cout << line.dump() << std::endl;
    latencies.push_back(micros);
  }
  std::sort(latencies.begin(), latencies.end());
  double sum = 0;
  for (double v : latencies) sum += v;
  if (!latencies.empty()) {
    const auto at = [&](double q) { return latencies[std::min(latencies.size() - 1, static_cast<std::size_t>(q * static_cast<double>(latencies.size())))]; };
    std::cerr << "polls=" << latencies.size() << " mean_us=" << static_cast<long>(sum / static_cast<double>(latencies.size()))
              << " p50_us=" << static_cast<long>(at(0.5)) << " p95_us=" << static_cast<long>(at(0.95)) << "\n";
  }
  return 0;
}
