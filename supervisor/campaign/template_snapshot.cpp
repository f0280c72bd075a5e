#include "campaign/template_snapshot.h"

#include <filesystem>

#include "events/act.h"
#include "journal/atomic_file.h"
#include "render/submission.h"
#include "util/strings.h"

namespace mlsup::engine {
namespace {

// text rendered with config: why it cannot be submitted ("" when it can), and the job's node count.
struct Rendered {
  std::string problem;
  int nodes = 1;
};

Rendered try_render(const config::Config& config, const std::string& text) {
  const auto plan = render::plan_submission(config, text, render::Attempt{});
  if (!plan) return {plan.error().str()};
  // sbatch refuses a script without an interpreter line: an empty or half-written file is no template.
  if (!util::starts_with(plan->script, "#!")) return {config.template_path + ": the rendered script does not start with #!"};
  return {"", plan->nodes};
}

// The stored snapshot, when there is one that can be read.
std::optional<std::string> stored_snapshot(const std::string& path) {
  auto stored = journal::read_file_if_exists(path);
  if (!stored || !*stored) return std::nullopt;
  return **stored;
}

}  // namespace

TemplateLook look_at_template(const config::Config& config) {
  const std::string path = config.dir().template_snapshot();
  const auto snapshot = stored_snapshot(path);
  TemplateLook look;
  const auto text = journal::read_file(config.template_path);
  const Rendered now = text ? try_render(config, *text) : Rendered{text.error().str()};
  look.problem = now.problem;
  if (look.problem.empty()) {
    look.text = *text;
    look.nodes = now.nodes;
    if (snapshot != *text) {
      if (auto saved = journal::write_atomically(path, *text); !saved) look.save_problem = saved.error().str();
    }
    return look;
  }
  if (!snapshot) return look;
  const Rendered stored = try_render(config, *snapshot);
  if (!stored.problem.empty()) {
    look.problem += "; the last template that rendered (" + path + ") does not render with this config either: " + stored.problem;
    return look;
  }
  look.text = snapshot;
  look.nodes = stored.nodes;
  return look;
}

std::expected<config::Config, config::Errors> load_config_to_supervise(const std::string& path) {
  auto relaxed = config::load_config_file(path, {.template_file = false});
  std::error_code ec;
  if (relaxed && std::filesystem::exists(relaxed->dir().template_snapshot(), ec)) return relaxed;
  return config::load_config_file(path);
}

bool TemplateKeeper::take(const config::Config& config, const Tell& tell) {
  const TemplateLook look = look_at_template(config);
  text_ = look.text;
  nodes_ = look.nodes;
  if (!look.save_problem.empty())
    told(tell, events::TemplateSnapshotFailed{look.save_problem, "the template is used; the stored copy is older"});
  if (look.problem == problem_) return text_.has_value();  // told already (or nothing to tell)
  problem_ = look.problem;
  if (!look.problem.empty())
    told(tell, events::TemplateUnusable{
                   .file = config.template_path,
                   .detail = look.problem,
                   .decision = text_ ? "submissions render from the last template that rendered (" + config.dir().template_snapshot() + ")"
                                     : "nothing is submitted until the template renders; it is read again before each submission"});
  return text_.has_value();
}

}  // namespace mlsup::engine
