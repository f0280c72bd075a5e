// The command-line backend's kill of a job's steps, against stand-in squeue and scancel programs
// put first on PATH: what each step's scancel answered decides the result.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include "slurm/client.h"
#include "support.h"
#include "util/files.h"

namespace {

using mlsup::test::TempDir;

// PATH with dir first, for the test's lifetime.
class PathFirst {
 public:
  explicit PathFirst(const std::string& dir) : old_(std::getenv("PATH") ? std::getenv("PATH") : "") {
    ::setenv("PATH", (dir + ":" + old_).c_str(), 1);
  }
  ~PathFirst() { ::setenv("PATH", old_.c_str(), 1); }
  PathFirst(const PathFirst&) = delete;
  PathFirst& operator=(const PathFirst&) = delete;

 private:
  std::string old_;
};

void program(const TempDir& dir, const std::string& name, const std::string& body) {
  ::chmod(dir.write(name, "#!/bin/sh\n" + body).c_str(), 0755);
}

// squeue lists the batch step and steps 0 and 1 of job 41; scancel logs what it was asked, and
// answers step 0 with `already`'s words and exit status 1.
void stand_ins(const TempDir& dir, const std::string& already) {
  program(dir, "squeue", "printf '41.batch\\n41.0\\n41.1\\n'\n");
  program(dir, "scancel", "echo \"$*\" >> " + dir.path() + "/asked\n"
                          "case \"$*\" in *41.0*) echo \"scancel: error: " + already + "\" >&2; exit 1 ;; esac\n");
}

// The command-line backend's kill_steps(41) against the stand-ins, step 0 answered with `already`.
mlsup::slurm::Result<void> kill_steps_of_41(const TempDir& dir, const std::string& already) {
  stand_ins(dir, already);
  PathFirst path(dir.path());
  return mlsup::slurm::make_cli_client()->kill_steps(41);
}

}  // namespace

TEST_CASE("killing the steps: a step already ending is no failure, and the next step is still killed") {
  TempDir dir;
  const auto done = kill_steps_of_41(dir, "Kill job error on job step id 41.0: Job/step already completing or completed");
  CHECK(done.has_value());
  CHECK(mlsup::util::read_file(dir.path() + "/asked").value_or("") ==
        "--verbose --signal=KILL 41.0\n--verbose --signal=KILL 41.1\n");
}

TEST_CASE("killing the steps: a refusal for another reason is a failure") {
  TempDir dir;
  const auto done = kill_steps_of_41(dir, "Kill job error on job step id 41.0: Access/permission denied");
  REQUIRE_FALSE(done.has_value());
  CHECK(done.error().kind == mlsup::slurm::ErrorKind::PermissionDenied);
}
