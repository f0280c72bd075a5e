#pragma once

#include <string>

// Every path inside a campaign's state folder, named once (docs/pipeline.md lists what each holds).
namespace mlsup::config {

struct StateDir {
  std::string root;  // absolute

  std::string journal() const { return root + "/journal.jsonl"; }      // decisions and facts, fsync'd
  std::string events() const { return root + "/events.jsonl"; }        // what people are told
  std::string memory() const { return root + "/memory.json"; }         // what passes remember beyond the journal
  std::string old_memory() const { return root + "/heartbeat.json"; }  // memory as an older mlsup named it
  std::string lease() const { return root + "/lease.json"; }           // which supervisor holds the campaign
  std::string status() const { return root + "/status.json"; }         // the last pass's view
  std::string replay() const { return root + "/replay.json"; }         // the journal's replay up to a point, kept
  std::string template_snapshot() const { return root + "/template.snapshot"; }
  std::string logs() const { return root + "/logs"; }                  // the jobs' output
  std::string requests() const { return root + "/requests"; }          // lifecycle verbs' requests to the holder
  std::string fenced() const { return root + "/fenced"; }              // attempts whose jobs were cancelled unseen
  std::string fence(int attempt) const { return fenced() + "/" + std::to_string(attempt); }
  std::string ends() const { return root + "/ends"; }                  // the jobs' end records
  std::string chain() const { return root + "/chain"; }                // an unsupervised chain's next.env
  std::string spares() const { return root + "/spares"; }              // spare-node runs' files
  std::string attempt(int number) const { return root + "/attempts/" + std::to_string(number); }
  std::string attempt_script(int number) const { return attempt(number) + "/job.sbatch"; }
  std::string hang_evidence(int number) const { return attempt(number) + "/hang-evidence.txt"; }
  std::string hang(int number) const { return attempt(number) + "/hang"; }  // each rank's stacks (rank-<R>.txt), else each node's dump (node-<node>.txt)
  // Defaults of folders and files the config may place elsewhere.
  std::string checkpoints() const { return root + "/checkpoints"; }
  std::string heartbeats() const { return root + "/heartbeats"; }
  std::string kill_switch() const { return root + "/kill-switch"; }
  std::string save_switch() const { return root + "/save-switch"; }
};

}  // namespace mlsup::config
