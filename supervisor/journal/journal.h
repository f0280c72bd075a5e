#pragma once
// The campaign's append-only record of intents and facts, and its event log: JSON lines.
//
// A line counts once its newline is on disk. Each line is handed to one write() on an O_APPEND
// descriptor; a write that fails is cut back off the file, so no half line follows a failure.
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/journal_record.h"

namespace mlsup::journal {

// The format version written in the header; a journal of a higher version is refused.
inline constexpr int kJournalVersion = 1;

using Record = util::JournalRecord;

// Where a journal stood when a replay had applied each of its records: what a replay snapshot keeps,
// so that a later reader parses only the records after it.
struct Mark {
  std::size_t bytes = 0;      // the file's length then (whole lines)
  std::size_t count = 0;      // the records in those bytes
  long long last_seq = 0;     // the highest seq written by then (the header's included)
  long long newest_epoch = 0;
  std::string last_line;      // the last record's line, without its newline: the same journal is known by it
};

// <state_dir>/journal.jsonl: a header line {"mlsup_journal":1,"campaign":...}, then one Record per line.
class Journal {
 public:
  // Opens path (creating it with its header if absent) and reads every record. An incomplete or garbled
  // last line is dropped with a warning and cut off the file before the next append; any other bad line,
  // a foreign or newer header, or another campaign's journal is an error.
  static util::Result<Journal> open(const std::string& path, const std::string& campaign);
  // As open(), handing each record read to sink at once instead of keeping it for take(): a long
  // journal is replayed without all its records in memory together.
  static util::Result<Journal> open(const std::string& path, const std::string& campaign,
                                    const std::function<void(Record&&)>& sink);

  // As open() with sink, the records up to from taken as read already (sink gets only those after
  // it); from must be a mark of this file (continues()). Checks the header as open() does.
  static util::Result<Journal> open(const std::string& path, const std::string& campaign,
                                    const std::function<void(Record&&)>& sink, const Mark& from);
  // True when the file at path still holds, ending at from.bytes, the line from names: its records up
  // to there are those from was taken of (a journal only grows; one replaced or cut is not the same).
  static bool continues(const std::string& path, const Mark& from);

  // Reads path as open() does, without creating, repairing or otherwise changing it (for status and
  // events beside a running supervisor): the records it could read, and what it could not, each a
  // problem with its line.
  static std::pair<std::vector<Record>, std::vector<util::Error>> read_only(const std::string& path,
                                                                           const std::string& campaign);
  // As read_only(), the records up to from taken as read already: those after it (from must be a mark
  // of this file, continues(); the header is checked as read_only() checks it).
  static std::pair<std::vector<Record>, std::vector<util::Error>> read_only(const std::string& path,
                                                                           const std::string& campaign, const Mark& from);

  // The records not yet taken, oldest first (every record until take() is first called).
  const std::vector<Record>& records() const { return records_; }

  // Hands over the records not yet taken and forgets them: a supervisor keeps the state they make,
  // not the records, so a long journal costs no memory.
  std::vector<Record> take();

  // What open() dropped, one sentence each.
  const std::vector<std::string>& warnings() const { return warnings_; }

  // Appends a record of type with fields (an object without seq, time or type) and makes it durable
  // (fdatasync). On failure the file and records() are as before. Records another writer appended
  // since this one last read are taken in first (so no sequence number is used twice); when one of
  // them carries a newer epoch than this writer's, nothing is appended (error kind Superseded).
  util::Result<Record> append(const std::string& type, nlohmann::json fields, double now);

  // Stamps every later record with epoch (the lease's; 0 = none).
  void set_epoch(long long epoch) { epoch_ = epoch; }

  // The highest epoch any record carries.
  long long newest_epoch() const { return newest_epoch_; }

  // The journal file.
  const std::string& path() const { return path_; }

  // Where this journal stands: every record read or appended so far (bytes 0 before any record).
  Mark mark() const;
  // The records it holds (read and appended).
  std::size_t count() const { return count_; }

 private:
  Journal(std::string path, std::string campaign) : path_(std::move(path)), campaign_(std::move(campaign)) {}
  util::Result<void> read(const std::string& text);
  // The records of complete from index first on (first_line: the file line of that one; start: its
  // byte offset; prev: the seq before it), kept; a bad last one, or a tail without its newline,
  // dropped for repair. The last seq read.
  util::Result<long long> read_records(const std::vector<std::string_view>& complete, std::string_view tail,
                                       std::size_t first, std::size_t first_line, std::size_t start, long long prev);
  void drop_last(std::size_t line, const std::string& what, std::size_t bytes);
  util::Result<void> rewrite(const std::vector<Record>& records);
  util::Result<void> catch_up(const std::string& text);
  void keep(Record r);  // a record read or written, not yet taken

  std::string path_;
  std::string campaign_;
  long long last_seq_ = 0;  // the highest seq ever written
  std::vector<Record> records_;
  std::vector<std::string> warnings_;
  bool needs_repair_ = false;  // the file holds bytes past the last good record
  std::size_t repair_to_ = 0;  // where the last good record ends
  std::size_t count_ = 0;      // the records in the file
  long long newest_epoch_ = 0;
  long long epoch_ = 0;
  std::size_t known_size_ = 0;  // the file's length when this writer last read or wrote it
  std::string last_line_;       // the newest record's line (mark())
  std::size_t last_line_end_ = 0;  // where it ends in the file
  const std::function<void(Record&&)>* sink_ = nullptr;  // while open() reads: where records go
};

// <state_dir>/events.jsonl: one JSON object per line, no header; for people and tools, not for replay.
// An event log grows to kEventLogBytes, then becomes path.1 (path.1 path.2, ..., the oldest of
// kEventLogParts parts dropped) and a new one begins: a campaign of months keeps its recent history.
inline constexpr long long kEventLogBytes = 16LL << 20;
inline constexpr int kEventLogParts = 4;

// The rotated parts of the log at path that exist, oldest first (path.4 ... path.1).
std::vector<std::string> rotated_parts(const std::string& path);

class EventLog {
 public:
  // The log at path; the file is created by the first append.
  explicit EventLog(std::string path, long long max_bytes = kEventLogBytes) : path_(std::move(path)), max_bytes_(max_bytes) {}

  // Appends event (a JSON object) as one line, rotating the log first when it has reached its size; on
  // failure nothing of it stays in the file. Not synced.
  util::Result<void> append(const nlohmann::json& event);

  // Every event in path and its rotated parts, oldest first; incomplete or garbled lines are skipped, a
  // missing file has none.
  static std::vector<nlohmann::json> read(const std::string& path);
  // The events of one file only (a rotated part).
  static std::vector<nlohmann::json> read_one(const std::string& path);

  // The events in text, the contents of an event log: each complete line that is a JSON object.
  static std::vector<nlohmann::json> parse(std::string_view text);

 private:
  // Moves the log to path.1 (and each part one further) when it has reached max_bytes_.
  void rotate_if_full() const;

  std::string path_;
  long long max_bytes_;
};

}  // namespace mlsup::journal
