#include "journal/journal.h"

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <iterator>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

#include "journal/atomic_file.h"
#include "util/json.h"

namespace mlsup::journal {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

const char* const kReserved[] = {"seq", "time", "type"};

std::string dump_line(const ordered_json& j) { return util::dump_json(j) + "\n"; }

std::string header_line(const std::string& campaign, long long last_seq) {
  ordered_json header = {{"mlsup_journal", kJournalVersion}, {"campaign", campaign}};
  if (last_seq > 0) header["last_seq"] = last_seq;
  return dump_line(header);
}

// seq, time and type first, then the other fields in the order the record keeps them.
std::string record_line(const Record& r) {
  ordered_json line = {{"seq", r.seq}, {"time", r.time}, {"type", r.type}};
  for (const auto& [key, value] : r.data.items())
    if (key != "seq" && key != "time" && key != "type") line[key] = value;
  return dump_line(line);
}

struct Lines {
  std::vector<std::string_view> complete;  // each was followed by a newline
  std::string_view tail;                   // bytes after the last newline
};

Lines split_lines(std::string_view text) {
  Lines out;
  std::size_t start = 0;
  for (std::size_t nl = text.find('\n'); nl != std::string_view::npos; nl = text.find('\n', start)) {
    out.complete.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  out.tail = text.substr(start);
  return out;
}

// The record on line (number), if it is a well-formed one that follows prev_seq.
std::optional<Record> parse_record(std::string_view line, int number, long long prev_seq) {
  json j = json::parse(line, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  const auto seq = j.find("seq");
  const auto time = j.find("time");
  const auto type = j.find("type");
  if (seq == j.end() || !seq->is_number_integer() || seq->get<long long>() <= prev_seq) return std::nullopt;
  if (time == j.end() || !time->is_number() || type == j.end() || !type->is_string()) return std::nullopt;
  Record r{time->get<double>(), type->get<std::string>(), {}, number, seq->get<long long>()};
  r.data = std::move(j);
  return r;
}

util::Error line_error(const std::string& path, std::size_t line, std::string message) {
  return util::Error{.file = path, .line = static_cast<int>(line), .message = std::move(message)};
}

// The header's last_seq (0 when absent), after checking that it is this campaign's version-1 header.
util::Result<long long> parse_header(std::string_view line, const std::string& path, const std::string& campaign) {
  const json h = json::parse(line, nullptr, false);
  const auto version = h.is_object() ? h.find("mlsup_journal") : h.end();
  const bool is_header = h.is_object() && version != h.end() && version->is_number_integer() &&
                         version->get<long long>() >= 1 && h.contains("campaign") && h["campaign"].is_string();
  if (!is_header)
    return std::unexpected(line_error(path, 1, "not an mlsup journal (the first line is not {\"mlsup_journal\":1,...}); "
                                               "move the file away or give the campaign another state_dir"));
  if (version->get<long long>() > kJournalVersion)
    return std::unexpected(line_error(path, 1, "written by a newer mlsup (journal version " + util::dump_json(*version) +
                                                   ", this one reads " + std::to_string(kJournalVersion) + "); use that mlsup"));
  if (h["campaign"].get<std::string>() != campaign)
    return std::unexpected(line_error(path, 1, "belongs to campaign \"" + h["campaign"].get<std::string>() + "\", not \"" +
                                                   campaign + "\"; give each campaign its own state_dir"));
  const auto last = h.find("last_seq");
  if (last == h.end()) return 0LL;
  if (!last->is_number_integer() || last->get<long long>() < 0)
    return std::unexpected(line_error(path, 1, "the header's last_seq is not a count"));
  return last->get<long long>();
}

// Writes all of text to fd, continuing after a short write.
util::Result<void> write_all(int fd, std::string_view text, const std::string& path) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::unexpected(io_error(path, "cannot append", n == 0 ? ENOSPC : errno));
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

// Appends line to fd (opened with O_APPEND); on failure cuts the file back to its length before, and
// clears intact when even that fails.
util::Result<void> append_to(int fd, std::string_view line, bool sync, const std::string& path, bool& intact) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::unexpected(io_error(path, "cannot stat", errno));
  auto written = write_all(fd, line, path);
  if (written && sync && ::fdatasync(fd) != 0) written = std::unexpected(io_error(path, "cannot sync", errno));
  if (!written && ::ftruncate(fd, st.st_size) != 0) {
    intact = false;
    written.error().message += std::string("; cutting the partial line off failed too: ") + std::strerror(errno);
  }
  return written;
}

// The epoch a record was written under (0 for records of an older mlsup).
long long epoch_of(const Record& r) {
  const auto e = r.data.find("epoch");
  return e != r.data.end() && e->is_number_integer() ? e->get<long long>() : 0;
}

// True when fd's file is empty or ends with a newline.
bool ends_with_newline(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size == 0) return true;
  char last = 0;
  return ::pread(fd, &last, 1, st.st_size - 1) == 1 && last == '\n';
}

// The file's first line (its header), read alone: at most 64 KiB, read 1 KiB first (a header is short).
util::Result<std::string> first_line(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::unexpected(io_error(path, "cannot open", errno));
  std::string head;
  std::size_t nl = std::string::npos;
  for (std::size_t size = 1024; size <= 65536; size *= 4) {
    head.resize(size);
    const ssize_t n = ::pread(fd, head.data(), size, 0);
    head.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    nl = head.find('\n');
    if (nl != std::string::npos || head.size() < size) break;  // found, or the whole file read
  }
  ::close(fd);
  if (nl == std::string::npos) return std::unexpected(line_error(path, 1, "the header line is incomplete; move the file away"));
  head.resize(nl);
  return head;
}

}  // namespace

util::Result<Journal> Journal::open(const std::string& path, const std::string& campaign) { return open(path, campaign, {}); }

util::Result<Journal> Journal::open(const std::string& path, const std::string& campaign,
                                    const std::function<void(Record&&)>& sink) {
  Journal journal(path, campaign);
  auto text = read_file_if_exists(path);
  if (!text) return std::unexpected(text.error());
  if (*text && !(*text)->empty()) {
    journal.sink_ = sink ? &sink : nullptr;
    auto ok = journal.read(**text);
    journal.sink_ = nullptr;
    if (!ok) return std::unexpected(ok.error());
    return journal;
  }
  if (*text) journal.warnings_.push_back(path + ": the file was empty; its header was written again");
  if (auto ok = journal.rewrite({}); !ok) return std::unexpected(ok.error());
  return journal;
}

namespace {

// The records of lines (the first of them is line first_line of the file; prev: the seq before them),
// each bad line a problem, for read_only.
void read_lines_only(const std::string& path, const Lines& lines, std::size_t from, std::size_t first_line, long long prev,
                     std::vector<Record>& records, std::vector<util::Error>& problems) {
  for (std::size_t i = from; i < lines.complete.size(); ++i) {  // a bad line is listed, and the reading goes on
    const std::size_t line = first_line + (i - from);
    auto record = parse_record(lines.complete[i], static_cast<int>(line), prev);
    if (!record) {
      problems.push_back(line_error(path, line, "not a journal record; repair this line by hand or restore the journal"));
      continue;
    }
    prev = record->seq;
    records.push_back(std::move(*record));
  }
  if (!lines.tail.empty())
    problems.push_back(line_error(path, first_line + (lines.complete.size() - from), "an incomplete last record"));
}

}  // namespace

std::pair<std::vector<Record>, std::vector<util::Error>> Journal::read_only(const std::string& path,
                                                                            const std::string& campaign) {
  std::vector<Record> records;
  std::vector<util::Error> problems;
  auto text = read_file_if_exists(path);
  if (!text) problems.push_back(text.error());
  if (!text || !*text || (*text)->empty()) return {std::move(records), std::move(problems)};
  const Lines lines = split_lines(**text);
  if (lines.complete.empty()) return {records, {line_error(path, 1, "the header line is incomplete")}};
  if (auto header = parse_header(lines.complete[0], path, campaign); !header) problems.push_back(header.error());
  read_lines_only(path, lines, 1, 2, 0, records, problems);
  return {std::move(records), std::move(problems)};
}

std::pair<std::vector<Record>, std::vector<util::Error>> Journal::read_only(const std::string& path, const std::string& campaign,
                                                                            const Mark& from) {
  if (from.bytes == 0) return read_only(path, campaign);
  std::vector<Record> records;
  std::vector<util::Error> problems;
  auto head = first_line(path);
  if (!head) return {records, {head.error()}};
  if (auto header = parse_header(*head, path, campaign); !header) problems.push_back(header.error());
  auto text = read_file_if_exists(path, from.bytes);
  if (!text) problems.push_back(text.error());
  if (!text || !*text) return {std::move(records), std::move(problems)};
  read_lines_only(path, split_lines(**text), 0, from.count + 2, from.last_seq, records, problems);
  return {std::move(records), std::move(problems)};
}

util::Result<void> Journal::read(const std::string& text) {
  const Lines lines = split_lines(text);
  if (lines.complete.empty())
    return std::unexpected(line_error(path_, 1, "the header line is incomplete; move the file away"));
  auto base = parse_header(lines.complete[0], path_, campaign_);
  if (!base) return std::unexpected(base.error());
  auto prev = read_records(lines.complete, lines.tail, 1, 2, lines.complete[0].size() + 1, 0);
  if (!prev) return std::unexpected(prev.error());
  last_seq_ = std::max(*base, *prev);
  known_size_ = text.size();
  return {};
}

util::Result<long long> Journal::read_records(const std::vector<std::string_view>& complete, std::string_view tail,
                                              std::size_t first, std::size_t first_line, std::size_t start, long long prev) {
  repair_to_ = start;
  std::string_view last;
  for (std::size_t i = first; i < complete.size(); ++i) {
    const std::size_t line = first_line + (i - first);
    auto record = parse_record(complete[i], static_cast<int>(line), prev);
    if (record) {
      prev = record->seq;
      repair_to_ += complete[i].size() + 1;
      last = complete[i];
      keep(std::move(*record));
    } else if (i + 1 == complete.size() && tail.empty()) {
      drop_last(line, "a garbled last record", complete[i].size());
    } else {
      return std::unexpected(line_error(path_, line, "not a journal record, and records follow it; the journal is "
                                                     "damaged: restore it or repair this line by hand"));
    }
  }
  if (!tail.empty())
    drop_last(first_line + (complete.size() - first), "an incomplete last record (no newline: a crash while it was written)",
              tail.size());
  if (!last.empty()) {
    last_line_ = std::string(last);
    last_line_end_ = repair_to_;
  }
  return prev;
}

util::Result<Journal> Journal::open(const std::string& path, const std::string& campaign,
                                    const std::function<void(Record&&)>& sink, const Mark& from) {
  if (from.bytes == 0) return open(path, campaign, sink);
  Journal journal(path, campaign);
  auto head = first_line(path);
  if (!head) return std::unexpected(head.error());
  if (auto base = parse_header(*head, path, campaign); !base) return std::unexpected(base.error());
  if (!continues(path, from))
    return std::unexpected(util::Error{.file = path, .message = "is no longer the journal its replay snapshot was taken of"});
  auto text = read_file_if_exists(path, from.bytes);
  if (!text) return std::unexpected(text.error());
  if (!*text) return std::unexpected(io_error(path, "cannot open", ENOENT));
  const std::string_view after = **text;
  const Lines lines = split_lines(after);
  journal.sink_ = sink ? &sink : nullptr;
  journal.count_ = from.count;
  journal.newest_epoch_ = from.newest_epoch;
  journal.last_line_ = from.last_line;
  journal.last_line_end_ = from.bytes;
  auto prev = journal.read_records(lines.complete, lines.tail, 0, from.count + 2, from.bytes, from.last_seq);
  journal.sink_ = nullptr;
  if (!prev) return std::unexpected(prev.error());
  journal.last_seq_ = std::max(from.last_seq, *prev);
  journal.known_size_ = from.bytes + after.size();
  return journal;
}

bool Journal::continues(const std::string& path, const Mark& from) {
  if (from.bytes < from.last_line.size() + 2 || from.last_line.empty()) return false;
  const std::string marked = "\n" + from.last_line + "\n";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::string seen(marked.size(), '\0');
  const ssize_t n = ::pread(fd, seen.data(), seen.size(), static_cast<off_t>(from.bytes - marked.size()));
  ::close(fd);
  return n == static_cast<ssize_t>(seen.size()) && seen == marked;
}

Mark Journal::mark() const {
  return {last_line_.empty() ? 0 : last_line_end_, count_, last_seq_, newest_epoch_, last_line_};
}

void Journal::keep(Record r) {
  newest_epoch_ = std::max(newest_epoch_, epoch_of(r));
  ++count_;
  if (sink_) (*sink_)(std::move(r));
  else records_.push_back(std::move(r));
}

std::vector<Record> Journal::take() { return std::exchange(records_, {}); }

// Takes in the records another writer appended (text: the whole file now).
util::Result<void> Journal::catch_up(const std::string& text) {
  const Lines lines = split_lines(text);
  std::vector<Record> theirs;
  std::string_view last;  // the newest of their lines
  long long prev = last_seq_;
  for (std::size_t i = 1; i < lines.complete.size(); ++i) {
    const json j = json::parse(lines.complete[i], nullptr, false);
    if (!j.is_object() || !j.contains("seq") || !j["seq"].is_number_integer() || j["seq"].get<long long>() <= last_seq_)
      continue;
    auto record = parse_record(lines.complete[i], static_cast<int>(i + 1), prev);
    if (!record) return std::unexpected(line_error(path_, i + 1, "another writer appended a record this one cannot read"));
    prev = record->seq;
    theirs.push_back(std::move(*record));
    last = lines.complete[i];
  }
  for (const auto& r : theirs) {
    if (epoch_of(r) <= epoch_) continue;
    return std::unexpected(util::Error{.kind = util::ErrorKind::Superseded, .file = path_,
                                       .message = "a supervisor of a newer lease (epoch " + std::to_string(epoch_of(r)) +
                                                  ", this one's " + std::to_string(epoch_) +
                                                  ") writes this journal now; this one stops acting"});
  }
  for (auto& r : theirs) keep(std::move(r));
  last_seq_ = prev;
  known_size_ = text.size() - lines.tail.size();
  if (!last.empty()) {
    last_line_ = std::string(last);
    last_line_end_ = static_cast<std::size_t>(last.data() + last.size() + 1 - text.data());
  }
  return {};
}

void Journal::drop_last(std::size_t line, const std::string& what, std::size_t bytes) {
  warnings_.push_back(path_ + ":" + std::to_string(line) + ": dropped " + what + ", " + std::to_string(bytes) + " bytes");
  needs_repair_ = true;
}

util::Result<void> Journal::rewrite(const std::vector<Record>& records) {
  std::string text = header_line(campaign_, last_seq_);
  for (const auto& r : records) text += record_line(r);
  if (auto ok = write_atomically(path_, text); !ok) return ok;
  known_size_ = text.size();
  return {};
}

util::Result<Record> Journal::append(const std::string& type, json fields, double now) {
  if (fields.is_null()) fields = json::object();
  if (!fields.is_object())
    return std::unexpected(util::Error{.file = path_, .subject = type, .message = "record fields must be a JSON object"});
  for (const char* key : kReserved)
    if (fields.contains(key))
      return std::unexpected(util::Error{.file = path_, .subject = type, .message = std::string("a record may not set \"") +
                                                                                    key + "\"; the journal fills it in"});
  if (needs_repair_) {  // cut what follows the last good record off the file
    if (::truncate(path_.c_str(), static_cast<off_t>(repair_to_)) != 0)
      return std::unexpected(io_error(path_, "cannot cut the damaged end off", errno));
    known_size_ = repair_to_;
    needs_repair_ = false;
  }
  const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return std::unexpected(io_error(path_, "cannot open to append", errno));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && static_cast<std::size_t>(st.st_size) != known_size_) {
    auto text = read_file_if_exists(path_);
    auto caught = text ? (*text ? catch_up(**text) : util::Result<void>(std::unexpected(io_error(path_, "is gone", ENOENT))))
                       : util::Result<void>(std::unexpected(text.error()));
    if (!caught) {
      ::close(fd);
      return std::unexpected(caught.error());
    }
  }
  Record record{now, type, std::move(fields), static_cast<int>(count_) + 2, last_seq_ + 1};
  record.data["seq"] = record.seq;
  record.data["time"] = record.time;
  record.data["type"] = record.type;
  if (epoch_ > 0) record.data["epoch"] = epoch_;
  bool intact = true;
  const std::string line = record_line(record);
  auto written = append_to(fd, line, true, path_, intact);
  const off_t end = ::lseek(fd, 0, SEEK_CUR);  // where this line ends: after every line before it
  ::close(fd);
  if (!written) {
    needs_repair_ = !intact;
    repair_to_ = known_size_;
    return std::unexpected(written.error());
  }
  keep(record);
  last_seq_ = record.seq;
  if (end > 0) known_size_ = static_cast<std::size_t>(end);
  last_line_ = line.substr(0, line.size() - 1);
  last_line_end_ = known_size_;
  return record;
}

std::vector<std::string> rotated_parts(const std::string& path) {
  std::vector<std::string> parts;
  for (int i = kEventLogParts; i >= 1; --i) {
    const std::string part = path + "." + std::to_string(i);
    if (::access(part.c_str(), F_OK) == 0) parts.push_back(part);
  }
  return parts;
}

void EventLog::rotate_if_full() const {
  struct stat st{};
  if (::stat(path_.c_str(), &st) != 0 || st.st_size < max_bytes_) return;
  for (int i = kEventLogParts - 1; i >= 1; --i)  // a writer beside this one may rotate too: each rename is whole
    (void)::rename((path_ + "." + std::to_string(i)).c_str(), (path_ + "." + std::to_string(i + 1)).c_str());
  (void)::rename(path_.c_str(), (path_ + ".1").c_str());
}

util::Result<void> EventLog::append(const json& event) {
  if (!event.is_object()) return std::unexpected(util::Error{.file = path_, .message = "an event must be a JSON object"});
  rotate_if_full();
  const int fd = ::open(path_.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return std::unexpected(io_error(path_, "cannot open to append", errno));
  std::string line = util::dump_json(event) + "\n";
  if (!ends_with_newline(fd)) line.insert(0, "\n");
  bool intact = true;
  auto written = append_to(fd, line, false, path_, intact);
  ::close(fd);
  return written;
}

std::vector<json> EventLog::read(const std::string& path) {
  std::vector<json> events;
  auto files = rotated_parts(path);
  files.push_back(path);
  for (const auto& file : files) {
    auto part = read_one(file);
    events.insert(events.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  return events;
}

std::vector<json> EventLog::read_one(const std::string& path) {
  const auto text = read_file_if_exists(path);
  if (!text || !*text) return {};
  return parse(**text);
}

std::vector<json> EventLog::parse(std::string_view text) {
  std::vector<json> events;
  for (const auto line : split_lines(text).complete) {
    json event = json::parse(line, nullptr, false);
    if (event.is_object()) events.push_back(std::move(event));
  }
  return events;
}

}  // namespace mlsup::journal
