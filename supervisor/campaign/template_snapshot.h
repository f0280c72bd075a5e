#pragma once
// The template a campaign renders from: the file when it reads and renders, otherwise the last text
// that did, kept in <state_dir>/template.snapshot so that every process of the campaign (`run`, each
// `tick`) falls back to it while the file is briefly unreadable or invalid.
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/load.h"
#include "events/kinds.h"

namespace mlsup::engine {

struct TemplateLook {
  std::optional<std::string> text;  // what submissions render from; nullopt = no template ever rendered
  int nodes = 1;                    // the job's node count as text renders (the exclusion cap needs it)
  std::string problem;              // why that is not the file as it is now; "" = it is
  std::string save_problem;         // the snapshot could not be stored (the text is used all the same)
};

// Reads the template file; when it renders with config, keeps it as the snapshot (stored when it
// differs from the stored one), otherwise falls back to the stored snapshot if that renders.
TemplateLook look_at_template(const config::Config& config);

// Loads a config to supervise its campaign (run, tick, SIGHUP): as config::load_config_file, except
// that a template file that cannot be read now is no error when the campaign has a snapshot.
std::expected<config::Config, config::Errors> load_config_to_supervise(const std::string& path);

// Tells an event of the campaign (the actor's tell()).
using Tell = std::function<void(events::EventKind, nlohmann::json)>;
// Tells event e (events/act.h) through tell.
template <class E>
void told(const Tell& tell, const E& e) {
  tell(E::kKind, nlohmann::json(e));
}

// The template a campaign's submissions render from, looked at again when asked; a problem told once.
class TemplateKeeper {
 public:
  // Looks at the template (look_at_template) and tells a problem not told yet, or a snapshot that
  // could not be stored; false when no template has ever rendered.
  bool take(const config::Config& config, const Tell& tell);
  // What submissions render from (nullopt: no template has rendered yet).
  const std::optional<std::string>& text() const { return text_; }
  // Its job's node count.
  int nodes() const { return nodes_; }
  // The next problem is told even when it was told before (a reloaded config asked for it).
  void retell() { problem_.clear(); }

 private:
  std::optional<std::string> text_;
  int nodes_ = 1;
  std::string problem_;  // why text_ is not the file as it is now, as last told
};

}  // namespace mlsup::engine
