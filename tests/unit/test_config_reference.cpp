#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "config/load.h"
#include "config/schema.h"
#include "render/submission.h"
#include "support.h"

using namespace mlsup;

namespace {

const std::string kReference = mlsup::test::source_dir() + "/configs/reference.yaml";

// True when the field that spec names holds the same value in a and b.
bool same_value(const config::KeySpec& spec, config::Config& a, config::Config& b) {
  return std::visit(
      [&](auto* left) {
        auto* right = std::get<std::remove_reference_t<decltype(left)>>(spec.field(b));
        if constexpr (std::is_same_v<decltype(left), config::Budget*>) {
          return left->count == right->count && left->window == right->window;
        } else {
          return *left == *right;
        }
      },
      spec.field(a));
}

}  // namespace

TEST_CASE("the reference config is valid, and its template renders with it as shipped") {
  const auto r = config::load_config_file(kReference);
  if (!r) {
    for (const auto& e : r.error()) MESSAGE(e.str());
  }
  REQUIRE(r.has_value());
  std::ifstream in(r->template_path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto plan = render::plan_submission(*r, text, {1});
  CHECK_MESSAGE(plan.has_value(), (plan ? "" : plan.error().str()));
}

TEST_CASE("the reference config shows every key of the schema") {
  const auto c = config::load_config_file(kReference).value();
  for (const auto& spec : config::schema()) {
    CAPTURE(spec.path);
    CHECK(c.is_set(std::string(spec.path)));
  }
}

TEST_CASE("every value in the reference config is the default") {
  mlsup::test::TempDir dir;
  dir.write("templates/job", "#!/bin/bash\n");
  auto defaults = config::load_config_file(dir.write("configs/minimal.yaml", "name: example\ntemplate: ../templates/job\n")).value();
  auto full = config::load_config_file(kReference).value();
  for (const auto& spec : config::schema()) {
    if (spec.path == "name" || spec.path == "template" || spec.path == "vars" || spec.kind == config::Kind::Path) continue;
    CAPTURE(spec.path);
    CHECK(same_value(spec, full, defaults));
  }
  CHECK(full.state_dir == std::filesystem::path(kReference).parent_path().string() + "/.mlsup/example");
  CHECK(full.checkpoint.dir == full.state_dir + "/checkpoints");
  CHECK(full.heartbeat.dir == full.state_dir + "/heartbeats");
  CHECK(full.switches.kill == full.state_dir + "/kill-switch");
  CHECK(full.switches.save == full.state_dir + "/save-switch");
}

TEST_CASE("every schema key has a one-line description") {
  for (const auto& spec : config::schema()) {
    CAPTURE(spec.path);
    CHECK_FALSE(spec.doc.empty());
    CHECK(spec.doc.find('\n') == std::string_view::npos);
  }
}
