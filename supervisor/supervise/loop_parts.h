#pragma once
// Inside run and tick (loop.cpp, run.cpp): the clocks, the console, the shared Slurm clients, and
// one campaign's lease, engine and pass.
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "campaign/campaign.h"
#include "supervise/loop.h"
#include "journal/lease.h"
#include "slurm/shared_query.h"
#include "edges/pacer.h"

namespace mlsup::engine::loop_parts {

double wall_now();

// Prints an event as one line on stderr (the campaign's name first when named).
void print_event(const nlohmann::json& e, bool named);

// Prints a line on stderr, whole, beside the events of every campaign's worker.
void print_line(const std::string& line);
// Lines print_line has printed so far (a tick that printed none decided nothing).
long long lines_printed();

// The Slurm clients of a supervisor: one per backend its campaigns use, each asked once per pass.
class Clients {
 public:
  // The client for backend; nullptr for a backend mlsup does not know.
  slurm::Client* get(const std::string& backend);
  // A new pass: every client asks Slurm again.
  void new_pass();
  // Job queries sent to Slurm so far, by every client.
  long long loads();
  // Failed calls to Slurm so far, by every client, by error kind's name (every kind, 0 when none).
  std::map<std::string, long long> errors();

 private:
  struct One {
    std::unique_ptr<slurm::Client> client;
    std::unique_ptr<slurm::SharedQuery> shared;
  };
  std::mutex mutex_;
  std::map<std::string, One> by_backend_;
};

// One campaign under supervision: its lease and engine once taken.
struct Opened {
  std::unique_ptr<journal::Lease> lease;
  std::unique_ptr<Campaign> campaign;
  // Saves what the campaign observed and has not saved yet, then releases the lease.
  void close();
};

// How a submission waits for its turn to call sbatch: in the pass (a tick, a verb), or in no pass at
// all, its turn reserved and the campaign passed again when it comes (run: no thread waits).
enum class SubmitTurns { Wait, Reserve };

// Takes the campaign's lease, then opens it on client; a RunResult when it cannot (kLeaseHeld:
// another supervisor holds it).
std::variant<Opened, RunResult> open_campaign(const config::Config& config, slurm::Client* client, bool named,
                                              edges::Pacer& submits, SubmitTurns turns = SubmitTurns::Wait);

// The pacer of a supervisor's sbatch calls.
std::unique_ptr<edges::Pacer> submit_pacer(const Supervise& what);

// Renews the lease and runs one pass; the result once the campaign's supervision is over.
std::optional<RunResult> one_pass(Opened& o);

// The config at file as run and tick load it; its errors printed, nullopt when it has some.
std::optional<config::Config> load(const std::string& file);

// Replaces the metrics textfile at path with text (a temporary file beside it, renamed, not synced:
// the next round writes it again); false, and a line said, when it cannot.
bool write_textfile(const std::string& path, const std::string& text);

// Several campaigns' results as one: a single campaign's own, else the most severe code and every line.
RunResult combine(const std::vector<std::pair<std::string, RunResult>>& results);

}  // namespace mlsup::engine::loop_parts
