#include "cli/status_watch.h"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <map>
#include <thread>

#include "cli/campaign_verbs.h"
#include "cli/exit_codes.h"
#include "cli/status_now.h"
#include "cli/status_text.h"
#include "views/status_view.h"
#include "config/load.h"
#include "slurm/client.h"
#include "slurm/config_check.h"
#include "store/read_campaign.h"
#include "supervise/loop.h"
#include "util/files.h"
#include "util/json.h"
#include "util/strings.h"

namespace mlsup::cli {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

volatile std::sig_atomic_t stop_watching = 0;
void on_signal(int) { stop_watching = 1; }

// Slurm's answers about the campaigns' jobs, asked at most every slurm_every seconds.
struct SlurmView {
  std::unique_ptr<slurm::Client> client;
  std::map<long long, json> jobs;  // by id: {"state", "nodes"}
  double asked_at = -1e18;

  void refresh(const std::vector<long long>& ids, double now, double every, const std::string& backend) {
    if (ids.empty() || now - asked_at < every || slurm::config_problem()) return;
    if (!client) client = slurm::make_client(backend);
    std::vector<slurm::JobId> wanted(ids.begin(), ids.end());
    asked_at = now;
    jobs.clear();
    const auto answer = client->jobs(wanted);
    if (!answer) return;
    for (const auto& j : *answer)
      jobs[static_cast<long long>(j.job_id)] = {{"id", j.job_id}, {"state", std::string(slurm::state_name(j.state))},
                                                {"nodes", j.nodes}};
  }
};

// One campaign as watched: its config, its status view, the job Slurm is asked about.
struct Watched {
  std::string file;
  std::optional<config::Config> config;
  json view;
  std::optional<long long> job;
};

// The screen's lines for the campaigns: the full status of one, a line each of several; a live line under each.
std::vector<std::string> screen(std::vector<Watched>& all, const SlurmView& slurm, double now) {
  std::vector<std::string> lines;
  for (auto& w : all) {
    if (!w.config) {
      lines.push_back(w.file + "  the config has errors (mlsup validate " + w.file + ")");
      continue;
    }
    if (all.size() == 1) {
      for (const auto& l : status_lines(w.view)) lines.push_back(l);
    } else {
      lines.push_back(status_line(w.view));
    }
    const auto* a = w.view.contains("attempt") && w.view["attempt"].is_number() ? &w.view["attempt"] : nullptr;
    const auto hb = a ? live_heartbeat(*w.config, a->get<int>(), now) : std::nullopt;
    const auto found = w.job ? slurm.jobs.find(*w.job) : slurm.jobs.end();
    json job = found != slurm.jobs.end() ? found->second : json(nullptr);
    if (w.job && job.is_null() && slurm.asked_at > 0) job = {{"id", *w.job}, {"state", "not known to Slurm"}, {"nodes", ""}};
    lines.push_back("  " + live_line(hb, job, now - slurm.asked_at));
  }
  return lines;
}

// What a line per change leaves out: the ages, which change every second.
std::string without_ages(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) {
    const auto cut = l.find(" ago");
    out += (cut == std::string::npos ? l : l.substr(0, l.rfind(' ', cut))) + "\n";
  }
  return out;
}

std::string clock_now(double now) {
  const auto t = static_cast<std::time_t>(now);
  std::tm local{};
  char text[16];
  std::strftime(text, sizeof text, "%H:%M:%S", ::localtime_r(&t, &local));
  return text;
}

}  // namespace

std::optional<LiveHeartbeat> live_heartbeat(const config::Config& c, int attempt, double now) {
  const std::string base = "attempt-" + std::to_string(attempt);
  std::error_code ec;
  std::optional<LiveHeartbeat> out;
  for (const auto& entry : fs::directory_iterator(c.heartbeat.dir, ec)) {
    const auto name = entry.path().filename().string();
    if (name != base && !util::starts_with(name, base + ".")) continue;
    const auto text = util::read_file(entry.path().string());
    const auto written = fs::last_write_time(entry.path(), ec);
    if (!text || ec) continue;
    const double at = std::chrono::duration<double>(std::chrono::file_clock::to_sys(written).time_since_epoch()).count();
    LiveHeartbeat h = out.value_or(LiveHeartbeat{.age = 1e18});
    h.step = std::max(h.step, std::atoll(text->c_str()));
    h.age = std::min(h.age, std::max(0.0, now - at));
    ++h.files;
    out = h;
  }
  return out;
}

std::string live_line(const std::optional<LiveHeartbeat>& hb, const json& job, double asked_ago) {
  std::string line = "live: ";
  line += hb ? "step " + std::to_string(hb->step) + " written " + engine::human_duration(hb->age) + " ago (" +
                   std::to_string(hb->files) + " heartbeat file" + (hb->files == 1 ? ")" : "s)")
             : std::string("no heartbeat file yet");
  if (!job.is_null()) {
    line += "; Slurm: job " + util::json_text(job["id"]) + " " + util::string_field(job, "state", "?");
    if (!util::string_field(job, "nodes").empty()) line += " on " + util::string_field(job, "nodes");
    line += ", asked " + engine::human_duration(asked_ago) + " ago";
  }
  return line;
}

int status_watch(const std::vector<std::string>& sources, const WatchOptions& options) {
  std::vector<std::string> problems;
  const auto files = engine::config_files(sources, problems);
  for (const auto& p : problems) std::cerr << "mlsup: " << p << "\n";
  if (files.empty()) return kBadInput;
  std::vector<Watched> all;
  int code = problems.empty() ? kOk : kBadInput;
  for (const auto& file : files) {
    auto c = config::load_config_file(file);
    if (!c) {
      for (const auto& e : c.error()) std::cerr << e.str() << "\n";
      code = kBadInput;
    }
    all.push_back({file, c ? std::optional(*c) : std::nullopt, json(), std::nullopt});
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  const bool terminal = ::isatty(STDOUT_FILENO) != 0;
  SlurmView slurm;
  std::string shown;
  for (int n = 0; !stop_watching && (!options.refreshes || n < *options.refreshes); ++n) {
    const auto now = engine::clocks_now();
    std::vector<long long> ids;
    for (auto& w : all) {
      if (!w.config) continue;
      const auto stored = store::read_campaign(*w.config, now, false, store::Replay::FromSnapshot);
      w.view = status_json(*w.config, stored, now);
      const auto id = open_job(stored);
      w.job = id ? std::optional<long long>(static_cast<long long>(*id)) : std::nullopt;
      if (w.job) ids.push_back(*w.job);
    }
    const std::string backend = all.front().config ? all.front().config->slurm.backend : "auto";
    slurm.refresh(ids, now.wall, options.slurm_every, backend);
    const auto lines = screen(all, slurm, now.wall);
    if (terminal) {
      std::cout << "\x1b[H\x1b[2J" << "mlsup status --watch  " << clock_now(now.wall) << "  (every "
                << engine::human_duration(options.every) << ", Slurm at most every "
                << engine::human_duration(options.slurm_every) << "; Ctrl-C ends)\n\n";
      for (const auto& l : lines) std::cout << l << "\n";
      std::cout << std::flush;
    } else if (const auto now_shown = without_ages(lines); now_shown != shown) {
      shown = now_shown;
      for (const auto& l : lines) std::cout << clock_now(now.wall) << " " << l << "\n";
      std::cout << std::flush;
    }
    for (double waited = 0; waited < options.every && !stop_watching; waited += 0.1)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  return code;
}

}  // namespace mlsup::cli
