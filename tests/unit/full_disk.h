#pragma once
// Test helper: a folder whose filesystem can be made full, for the tests of writes that must not
// leave half a file behind.
#include <sys/mount.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include "support.h"

namespace mlsup::test {

// A folder whose filesystem can be made full: a 64 KiB tmpfs where this process may mount one, else
// (no CAP_SYS_ADMIN) a file-size limit (RLIMIT_FSIZE) that makes writes past limit_bytes fail with EFBIG.
class FullDisk {
 public:
  FullDisk() : folder_(tmp_.path() + "/disk") {
    std::filesystem::create_directories(folder_);
    mounted_ = ::mount("tmpfs", folder_.c_str(), "tmpfs", 0, "size=64k") == 0;
  }
  ~FullDisk() {
    make_room();
    if (mounted_) ::umount2(folder_.c_str(), MNT_DETACH);
  }
  FullDisk(const FullDisk&) = delete;
  FullDisk& operator=(const FullDisk&) = delete;

  const std::string& folder() const { return folder_; }
  bool mounted() const { return mounted_; }

  // Uses up every free block (tmpfs), or stops files from growing past limit_bytes (fallback).
  void fill(rlim_t limit_bytes) {
    if (mounted_) {
      std::ofstream filler(folder_ + "/filler", std::ios::binary);
      const std::string block(4096, 'x');
      while (filler.write(block.data(), static_cast<std::streamsize>(block.size())) && filler.flush()) {
      }
      return;
    }
    std::signal(SIGXFSZ, SIG_IGN);
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    const rlimit limited{limit_bytes, saved_.rlim_max};
    limited_ = ::setrlimit(RLIMIT_FSIZE, &limited) == 0;
  }

  // Undoes fill().
  void make_room() {
    if (mounted_) std::filesystem::remove(folder_ + "/filler");
    if (limited_) ::setrlimit(RLIMIT_FSIZE, &saved_);
    limited_ = false;
  }

 private:
  mlsup::test::TempDir tmp_;
  std::string folder_;
  bool mounted_ = false;
  bool limited_ = false;
  rlimit saved_{};
};

}  // namespace mlsup::test
