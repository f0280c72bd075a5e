#pragma once
// The first bytes of small files read again only when they changed: a file with the same inode, size
// and write time as at its last read is not opened, unless it was written within kRacy seconds of that
// read (a write the file system's time granularity, or a clock apart, might not show).
#include <sys/types.h>

#include <cstddef>
#include <ctime>
#include <optional>
#include <string>
#include <unordered_map>

namespace mlsup::edges {

struct FileHead {
  std::string text;  // util::read_head's: the first bytes, and the size when there are more
  double written = 0;  // its write time, unix seconds
};

class FileHeads {
 public:
  static constexpr double kRacy = 3;

  // The head of path (max_bytes), as util::read_head reads it, and its write time; nullopt when it
  // cannot be read.
  std::optional<FileHead> read(const std::string& path, std::size_t max_bytes);
  // Forgets the files not read since the last forget_unread(): one look over a set of files each time.
  void forget_unread();
  // Files opened and read so far (those unchanged are not).
  long long opened() const { return opened_; }

 private:
  struct Entry {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    timespec mtime{};
    double read_at = 0;  // unix seconds
    std::size_t max_bytes = 0;
    FileHead head;
  };
  const Entry* last_read(const std::string& path) const;  // in this look, else the last; nullptr: never

  std::unordered_map<std::string, Entry> seen_, looked_;  // as last read; read in this look
  long long opened_ = 0;
};

}  // namespace mlsup::edges
