#pragma once
// How long a campaign whose job runs may go on Slurm's last answer about it (pure): while the cheap
// signals say nothing moved (its end record not landed, a watch that run holds; its heartbeat
// progressing outside any phase; its time limit not near), Slurm is asked every running_poll_interval
// rather than every poll_interval; once one of them moves, at once.
#include <optional>

namespace mlsup::decide {

struct QuietSigns {
  bool job_running = false;     // the pass saw the current attempt's job running (not a chain's task)
  bool only_status = false;     // and decided nothing but its status
  bool heartbeat = false;       // its heartbeat has been written
  bool in_phase = false;        // the heartbeat names a phase ("saving", ...) or says it waits on its peers
  double progress_at = 0;       // mono: its last progress, as mlsup saw it
  std::optional<double> step;   // seconds per step measured (p50); nullopt before any
  double job_end = 0;           // wall: when Slurm's time limit ends the job (0: none known)
  double hang_after = 0;        // the shortest silence that may be taken for a hang, seconds (0: none)
  double poll = 0;              // poll_interval, seconds
  double running_poll = 0;      // running_poll_interval, seconds
};

// The shortest silence that counts as a move: three steps, at least 2 s, at most running_poll and
// half of hang_after (a hang is never declared on an answer older than the silence).
double quiet_silence(const QuietSigns& s);

// The mono time until which the campaign's passes need no fresher answer from Slurm than the one
// the last fresh pass had; 0 when they do now (now_mono, now_wall: the pass's clocks).
double quiet_until(const QuietSigns& s, double now_mono, double now_wall);

}  // namespace mlsup::decide
