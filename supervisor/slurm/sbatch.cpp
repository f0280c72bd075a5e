#include "slurm/sbatch.h"

#include <charconv>

#include "util/strings.h"

namespace mlsup::slurm {

Result<JobId> parse_sbatch_result(const edges::ProcessResult& r) {
  const std::string err(util::trim(r.err));
  if (!r.started) return std::unexpected(Error{ErrorKind::Other, 0, "cannot run sbatch: " + r.start_error});
  if (r.timed_out) return std::unexpected(Error{ErrorKind::Timeout, 0, "sbatch did not finish in time"});
  if (r.exit_code != 0) {
    const std::string message = err.empty() ? "sbatch exited with " + std::to_string(r.exit_code) : err;
    return std::unexpected(Error{classify_message(message), 0, message});
  }
  const std::string_view out = util::trim(r.out);
  const std::string_view id_text = out.substr(0, out.find(';'));
  JobId id = 0;
  const auto [ptr, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
  if (id_text.empty() || ec != std::errc() || ptr != id_text.data() + id_text.size() || id == 0)
    return std::unexpected(Error{ErrorKind::Other, 0, "sbatch printed no job id: \"" + std::string(out) + "\""});
  return id;
}

Result<JobId> submit_with_sbatch(const SubmitRequest& request) {
  edges::ProcessRequest p;
  p.argv.push_back("sbatch");
  p.argv.insert(p.argv.end(), request.options.begin(), request.options.end());
  p.argv.push_back(request.script_path);
  p.env_add = request.environment;
  p.working_dir = request.working_dir;
  p.timeout = kSbatchTimeout;
  p.on_start = request.on_start;
  return parse_sbatch_result(edges::run_process(p));
}

}  // namespace mlsup::slurm
