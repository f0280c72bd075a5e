#include "cli/lifecycle_verbs.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>

#include "cli/exit_codes.h"
#include "checkpoint/checkpoints.h"
#include "campaign/campaign.h"
#include "supervise/loop.h"
#include "campaign/template_snapshot.h"
#include "journal/atomic_file.h"
#include "journal/journal.h"
#include "store/read_campaign.h"
#include "journal/lease.h"
#include "slurm/config_check.h"
#include "util/json.h"

namespace mlsup::cli {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The campaign as its journal tells it, read without changing it; its problems printed.
store::StoredJournal read_state(const config::Config& c) {
  auto read = store::read_journal(c);
  for (const auto& p : read.problems) std::cerr << p.str() << "\n";
  return read;
}

// resume --from: the checkpoint named must be a complete one of the campaign's; its step.
std::optional<long long> checkpoint_step(const config::Config& c, const std::string& from) {
  std::error_code ec;
  for (const auto& k : checkpoint::scan(c.checkpoint).checkpoints)
    if (k.complete && (k.path == from || fs::equivalent(k.path, from, ec))) return k.step;
  return std::nullopt;
}

// A new request's id: the time in microseconds (requests sort by it) and this process.
std::string request_id(double now) {
  return std::to_string(static_cast<long long>(now * 1e6)) + "-" + std::to_string(::getpid());
}

double wall_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The refusal the supervisor journaled for request id, if it refused it.
std::optional<engine::Refusal> refused(const config::Config& c, const std::string& id) {
  for (const auto& r : read_state(c).records)
    if (r.type == "request-refused" && util::string_field(r.data, "request") == id)
      return engine::Refusal{static_cast<int>(util::number_field(r.data, "code", kRuntimeFailure)),
                             util::string_field(r.data, "reason")};
  return std::nullopt;
}

}  // namespace

int lifecycle_verb(const std::string& config_path, engine::Request r) {
  const std::string verb(engine::verb_name(r.verb));
  auto loaded = engine::load_config_to_supervise(config_path);  // as run loads it (a template gone is no error)
  if (!loaded) {
    for (const auto& e : loaded.error()) std::cerr << e.str() << "\n";
    return kBadInput;
  }
  const auto& c = *loaded;
  const auto read = read_state(c);
  if (!read.problems.empty()) return kRuntimeFailure;
  const auto& s = read.state;
  r.time = wall_now();  // unexclude: the exclusion is live now
  if (const auto no = engine::refuse(s, r)) {
    (no->code == kOk ? std::cout : std::cerr) << "mlsup " << verb << ": campaign " << c.name << ": " << no->message << "\n";
    return no->code;
  }
  if (!r.from.empty()) {
    r.from = fs::absolute(r.from).lexically_normal().string();  // the supervisor and the job run elsewhere
    const auto step = checkpoint_step(c, r.from);
    if (!step) {
      std::cerr << "mlsup resume: --from " << r.from << " is not a complete checkpoint of campaign " << c.name << " (in "
                << c.checkpoint.dir << "); `mlsup status` and the checkpoint folder show which there are\n";
      return kUsage;
    }
    r.from_step = *step;
  }
  if (const auto problem = slurm::config_problem()) {  // a wrong use is told without Slurm; carrying out needs it
    std::cerr << "mlsup " << verb << ": " << *problem << "\n";
    return kRuntimeFailure;
  }
  r.id = request_id(r.time);
  r.by = journal::requester();
  const std::string dir = c.dir().requests(), file = dir + "/" + r.id + ".json";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (auto ok = journal::write_atomically(file, util::dump_json(engine::to_json(r)) + "\n"); !ok) {
    std::cerr << "mlsup " << verb << ": " << ok.error().str() << "\n";
    return kRuntimeFailure;
  }
  const auto done = engine::carry_out(c, r);
  if (done.exit_code == decide::kLeaseHeld) {
    std::cout << verb << " requested: " << engine::what_happens(s, r) << "\n"
              << "a supervisor holds campaign " << c.name << " (" << done.reason
              << "): it carries this out at its next pass\n";
    return kOk;
  }
  if (const auto no = refused(c, r.id)) {
    std::cerr << "mlsup " << verb << ": campaign " << c.name << ": " << no->message << "\n";
    return no->code;
  }
  if (fs::exists(file, ec)) {  // not journaled: nothing of it stays behind to be carried out later
    fs::remove(file, ec);
    std::cerr << "mlsup " << verb << ": " << done.reason << "; nothing was changed\n";
    return done.exit_code == kOk ? kRuntimeFailure : done.exit_code;
  }
  std::cout << verb << " done: " << engine::what_happens(s, r) << "\n";
  if (!done.reason.empty()) std::cout << "mlsup: " << done.reason << "\n";
  if (r.verb == engine::Verb::Cancel && done.exit_code != decide::kCancelled) return done.exit_code;
  return kOk;
}

}  // namespace mlsup::cli
