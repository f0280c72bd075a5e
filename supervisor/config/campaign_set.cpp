// Campaign sets: the set file read, checked and expanded into one campaign config per run (pure).
#include "config/campaign_set.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <optional>
#include <regex>
#include <set>

#include "config/load_node.h"
#include "util/strings.h"

namespace mlsup::config {
namespace fs = std::filesystem;
namespace {

// The keys a set and each of its runs may hold (README.md, "Campaign sets").
const std::vector<std::string> kSetKeys = {"set", "runs", "max_running", "max_nodes", "state_root", "checkpoint_root", "window"};
const std::vector<std::string> kRunKeys = {"name", "config", "overrides", "matrix", "after", "priority"};

// The keys a set gives each run itself; an error about one is the set's.
const std::vector<std::string> kDerivedKeys = {"name", "state_dir", "checkpoint.dir"};

// The folders no two runs may share, by key.
const std::vector<std::pair<std::string, std::function<std::string(const Config&)>>> kOwnFolders = {
    {"state_dir", [](const Config& c) { return c.state_dir; }},
    {"checkpoint.dir", [](const Config& c) { return c.checkpoint.dir; }},
    {"heartbeat.dir", [](const Config& c) { return c.heartbeat.dir; }},
};

// A campaign's name rule (config/validate.cpp), which a run's name must meet.
bool usable_name(const std::string& s) {
  static const std::regex ok("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");
  return std::regex_match(s, ok);
}

// One `runs:` entry as written.
struct Entry {
  std::string name;
  YAML::Mark mark, name_mark, config_mark;
  std::string config_path;  // absolute
  YAML::Node overrides{YAML::NodeType::Undefined}, matrix{YAML::NodeType::Undefined};
  std::vector<std::pair<std::string, YAML::Mark>> after;
  int priority = 0;
};

struct SetWalk {
  const std::string& file;
  const std::string& base_dir;
  Errors& errors;

  void error_at(const YAML::Mark& m, std::string subject, std::string message) {
    errors.push_back({.file = file, .line = m.line + 1, .column = m.column + 1, .subject = std::move(subject),
                      .message = std::move(message)});
  }

  void error_at(const Location& at, std::string subject, std::string message) {
    errors.push_back({.file = file, .line = at.line, .column = at.column, .subject = std::move(subject),
                      .message = std::move(message)});
  }

  // Reports every key of m not in known, suggesting the nearest; false when m is not a mapping.
  bool keys(const YAML::Node& m, const std::vector<std::string>& known, const std::string& where) {
    if (!m.IsMap()) {
      error_at(m.Mark(), where, "expected a mapping of keys");
      return false;
    }
    std::set<std::string> seen;
    for (const auto& item : m) {
      const std::string k = item.first.Scalar();
      if (!seen.insert(k).second) error_at(item.first.Mark(), k, "is given twice; keep one");
      if (std::find(known.begin(), known.end(), k) != known.end()) continue;
      const auto near = util::did_you_mean(k, known);
      error_at(item.first.Mark(), k, "unknown key" + (near.empty() ? " (known here: " + util::join(known, ", ") + ")"
                                                                    : " (did you mean \"" + near + "\"?)"));
    }
    return true;
  }

  // A scalar's text; an error (and nullopt) for anything else.
  std::optional<std::string> text(const YAML::Node& n, const std::string& subject) {
    if (n.IsScalar()) return n.Scalar();
    error_at(n.Mark(), subject, "expected a text value");
    return std::nullopt;
  }

  // An integer of at least least; an error (and nullopt) otherwise.
  std::optional<int> integer(const YAML::Node& n, const std::string& subject, int least) {
    int v = 0;
    if (!n.IsScalar() || !YAML::convert<int>::decode(n, v) || v < least) {
      error_at(n.Mark(), subject, "expected a whole number of at least " + std::to_string(least));
      return std::nullopt;
    }
    return v;
  }

  // path against the set's folder.
  std::string resolve(const std::string& path) const {
    const fs::path p(path);
    return (p.is_relative() ? fs::path(base_dir) / p : p).lexically_normal().string();
  }

  void read_after(const YAML::Node& n, Entry& e) {
    if (!n.IsSequence()) return error_at(n.Mark(), "after", "expected a list of run names, e.g. [pretrain]");
    for (const auto& item : n)
      if (auto t = text(item, "after")) e.after.emplace_back(*t, item.Mark());
  }

  void read_matrix(const YAML::Node& n, Entry& e) {
    if (!n.IsMap() || n.size() == 0)
      return error_at(n.Mark(), "matrix", "expected config keys, each with a list of values, e.g. {vars.lr: [1e-4, 3e-4]}");
    e.matrix = n;
    for (const auto& item : n)
      if (!item.second.IsSequence() || item.second.size() == 0)
        error_at(item.second.Mark(), "matrix." + item.first.Scalar(), "expected a list of at least one value");
  }

  // One `runs:` entry read; nullopt when it cannot give a run (its problems told).
  std::optional<Entry> entry(const YAML::Node& n) {
    Entry e;
    e.mark = e.name_mark = n.Mark();
    if (!keys(n, kRunKeys, "runs")) return std::nullopt;
    const auto config = n["config"];
    if (!config) return error_at(n.Mark(), "config", "is required: the campaign config this run starts from"), std::nullopt;
    if (auto t = text(config, "config")) e.config_path = resolve(*t), e.config_mark = config.Mark();
    else return std::nullopt;
    e.name = fs::path(e.config_path).stem().string();
    if (const auto name = n["name"]) {
      if (auto t = text(name, "name")) e.name = *t, e.name_mark = name.Mark();
    }
    if (!usable_name(e.name)) {
      error_at(e.name_mark, "name", "\"" + e.name + "\" is not a usable run name (1-64 of letters, digits, '.', '_', '-')");
      return std::nullopt;
    }
    if (const auto o = n["overrides"]) {
      if (o.IsMap()) e.overrides = o;
      else error_at(o.Mark(), "overrides", "expected a mapping of config keys laid on the config");
    }
    if (const auto m = n["matrix"]) read_matrix(m, e);
    if (const auto a = n["after"]) read_after(a, e);
    if (const auto p = n["priority"]) e.priority = integer(p, "priority", -1000000).value_or(0);
    return e;
  }
};

// Every dotted key path that over sets ("vars.lr", "slurm.nodes").
void leaf_paths(const YAML::Node& over, const std::string& prefix, std::vector<std::string>& out) {
  if (!over.IsMap()) return out.push_back(prefix);
  for (const auto& item : over) leaf_paths(item.second, prefix.empty() ? item.first.Scalar() : prefix + "." + item.first.Scalar(), out);
}

// True when subject is path, inside it, or holds it.
bool touches(const std::string& subject, const std::string& path) {
  return subject == path || util::starts_with(subject, path + ".") || util::starts_with(path, subject + ".");
}

// The tree of what a set gives each run: its name and state folder, and checkpoint folder when given a root.
YAML::Node derived(const std::string& run, const std::string& state_root, const std::string& checkpoint_root) {
  YAML::Node d(YAML::NodeType::Map);
  d["name"] = run;
  d["state_dir"] = (fs::path(state_root) / run).string();
  if (!checkpoint_root.empty()) d["checkpoint"]["dir"] = (fs::path(checkpoint_root) / run).string();
  return d;
}

// What the set as a whole says, beside its entries.
struct Head {
  std::string name, state_root, checkpoint_root;
  int max_running = 0, max_nodes = 0;
  YAML::Node window;  // the set's `window:`, laid on every run's config before the run's own overrides
};

Head read_head(SetWalk& w, const YAML::Node& root) {
  Head h;
  h.name = fs::path(w.file).stem().string();
  if (const auto n = root["set"]) h.name = w.text(n, "set").value_or(h.name);
  if (!usable_name(h.name)) w.error_at(root["set"] ? root["set"].Mark() : root.Mark(), "set", "\"" + h.name + "\" is not a usable set name (1-64 of letters, digits, '.', '_', '-'); name it with `set:`");
  if (const auto n = root["max_running"]) h.max_running = w.integer(n, "max_running", 1).value_or(0);
  if (const auto n = root["max_nodes"]) h.max_nodes = w.integer(n, "max_nodes", 1).value_or(0);
  h.state_root = w.resolve(".mlsup/" + h.name);
  if (const auto n = root["state_root"]) h.state_root = w.resolve(w.text(n, "state_root").value_or(".mlsup/" + h.name));
  if (const auto n = root["checkpoint_root"]) {
    if (auto t = w.text(n, "checkpoint_root")) h.checkpoint_root = w.resolve(*t);
  }
  if (const auto n = root["window"]) {
    if (n.IsMap()) h.window["window"] = n;
    else w.error_at(n.Mark(), "window", "expected a mapping such as {hours: \"20:00-07:00\", zone: Europe/Berlin}");
  }
  return h;
}

// A config loader's error about a run, told against the set file where the set or the run's
// overrides wrote the key it is about; an error of the config file itself is left as it is.
util::Error attribute(util::Error e, const Entry& entry, const std::string& run, const std::vector<std::string>& overridden,
                      const std::string& set_file) {
  const auto from = [&](const std::vector<std::string>& paths) {
    return std::any_of(paths.begin(), paths.end(), [&](const std::string& p) { return touches(e.subject, p); });
  };
  if (from(overridden)) {
    e.file = set_file;
    if (e.line == 0) e.line = entry.mark.line + 1, e.column = entry.mark.column + 1;
  } else if (from(kDerivedKeys)) {
    e.file = set_file, e.line = entry.name_mark.line + 1, e.column = entry.name_mark.column + 1;
  } else {
    return e;
  }
  e.message = "(run " + run + ") " + e.message;
  return e;
}

// The runs of one entry, each loaded as a config; their problems added to errors.
void expand_entry(SetWalk& w, const Entry& e, const Head& h, const std::map<std::string, std::string>& configs,
                  const LoadOptions& options, CampaignSet& out) {
  const auto text = configs.find(e.config_path);
  if (text == configs.end()) return w.error_at(e.config_mark, "config", "cannot read " + e.config_path);
  YAML::Node base;
  try {
    base = YAML::Load(text->second);
  } catch (const YAML::ParserException& x) {
    w.errors.push_back({.file = e.config_path, .line = x.mark.line + 1, .column = x.mark.column + 1, .message = "not valid YAML: " + x.msg});
    return;
  }
  if (is_set(base)) return w.error_at(e.config_mark, "config", e.config_path + " is a campaign set; a run names a campaign config");
  const auto cells = e.matrix.IsDefined() ? matrix_cells(e.matrix) : std::vector<MatrixCell>{{"", YAML::Node(YAML::NodeType::Map)}};
  for (const auto& cell : cells) {
    const std::string run = cell.suffix.empty() ? e.name : e.name + "." + cell.suffix;
    const auto over = merge_nodes(merge_nodes(h.window, e.overrides), cell.overrides);
    std::vector<std::string> overridden;
    leaf_paths(over, "", overridden);
    const auto merged = merge_nodes(merge_nodes(base, derived(run, h.state_root, h.checkpoint_root)), over);
    auto c = load_config_node(merged, e.config_path, fs::path(e.config_path).parent_path().string(), options);
    if (!c) {
      for (const auto& err : c.error()) w.errors.push_back(attribute(err, e, run, overridden, w.file));
      continue;
    }
    c->set_file = w.file;
    c->set_run = run;
    out.runs.push_back({run, e.name, std::move(*c), {}, e.priority, {e.mark.line + 1, e.mark.column + 1}});
  }
}

// Each entry's `after` as run names (an entry's name stands for each of its runs); unknown names reported.
void resolve_after(SetWalk& w, const std::vector<Entry>& entries, CampaignSet& set) {
  for (const auto& e : entries) {
    std::vector<std::string> runs;
    for (const auto& [name, mark] : e.after) {
      std::vector<std::string> named;
      for (const auto& r : set.runs)
        if (r.name == name || r.entry == name) named.push_back(r.name);
      if (named.empty() && std::none_of(entries.begin(), entries.end(), [&](const Entry& x) { return x.name == name; })) {
        std::vector<std::string> all;
        for (const auto& r : set.runs) all.push_back(r.name);
        const auto near = util::did_you_mean(name, all);
        w.error_at(mark, "after", "no run \"" + name + "\" in this set" + (near.empty() ? "" : " (did you mean \"" + near + "\"?)"));
      }
      runs.insert(runs.end(), named.begin(), named.end());
    }
    for (auto& r : set.runs)
      if (r.entry == e.name) r.after = runs;
  }
}

// Two entries of one name, or two runs of one name from different entries (a matrix's names).
void check_names(SetWalk& w, const std::vector<Entry>& entries, const CampaignSet& set) {
  std::map<std::string, int> first_line;
  for (const auto& e : entries)
    if (auto [it, fresh] = first_line.emplace(e.name, e.name_mark.line + 1); !fresh)
      w.error_at(e.name_mark, "name", "run name \"" + e.name + "\" is also the name at line " + std::to_string(it->second) + "; give each run its own `name:`");
  std::map<std::string, const SetRun*> seen;
  for (const auto& r : set.runs) {
    if (auto [it, fresh] = seen.emplace(r.name, &r); !fresh && it->second->entry != r.entry)
      w.error_at(r.at, "name", "run \"" + r.name + "\" is also a run of the entry at line " + std::to_string(it->second->at.line) + "; rename one");
  }
}

// Reports each dependency cycle once, at the `after` that closes it.
void check_cycles(SetWalk& w, const std::vector<Entry>& entries, const CampaignSet& set) {
  std::map<std::string, const SetRun*> by_name;
  for (const auto& r : set.runs) by_name[r.name] = &r;
  std::map<std::string, int> color;  // 0 unseen, 1 on the path, 2 done
  std::vector<std::string> path;
  std::set<std::string> told;
  std::function<void(const SetRun&)> visit = [&](const SetRun& r) {
    color[r.name] = 1;
    path.push_back(r.name);
    for (const auto& dep : r.after) {
      if (color[dep] == 1) {
        const auto from = std::find(path.begin(), path.end(), dep);
        std::vector<std::string> loop(from, path.end());
        loop.push_back(dep);
        const auto entry = std::find_if(entries.begin(), entries.end(), [&](const Entry& e) { return e.name == r.entry; });
        auto mark = entry->mark;
        for (const auto& [name, m] : entry->after)
          if (name == dep || (by_name.contains(dep) && by_name[dep]->entry == name)) mark = m;
        const std::string line = "cycle: " + util::join(loop, " waits for ") + "; no run of it could ever start";
        if (told.insert(r.name + ">" + dep).second) w.error_at(mark, "after", line);
      } else if (color[dep] == 0 && by_name.contains(dep)) {
        visit(*by_name[dep]);
      }
    }
    path.pop_back();
    color[r.name] = 2;
  };
  for (const auto& r : set.runs)
    if (color[r.name] == 0) visit(r);
}

// Two runs that share folders are told once, at the first folder they share (the others follow from
// it); two runs of one name are told by check_names.
void check_folders(SetWalk& w, const CampaignSet& set) {
  std::set<std::pair<std::string, std::string>> told;
  for (const auto& [key, folder] : kOwnFolders) {
    std::map<std::string, const SetRun*> owner;
    for (const auto& r : set.runs) {
      auto [it, fresh] = owner.emplace(folder(r.config), &r);
      if (!fresh && it->second->name != r.name && told.insert({it->second->name, r.name}).second)
        w.error_at(r.at, key,
                   "run \"" + r.name + "\" shares " + it->first + " with run \"" + it->second->name + "\" (line " +
                       std::to_string(it->second->at.line) + "); give each run its own" +
                       (key == "checkpoint.dir" ? " (checkpoint_root: in the set, or checkpoint.dir in the run's overrides)" : ""));
    }
  }
}

}  // namespace

const SetRun* CampaignSet::find(std::string_view run) const {
  for (const auto& r : runs)
    if (r.name == run) return &r;
  return nullptr;
}

bool is_set(const YAML::Node& root) { return root.IsMap() && root["runs"]; }

std::vector<std::string> set_config_paths(const YAML::Node& root, const std::string& base_dir) {
  std::vector<std::string> out;
  if (!is_set(root) || !root["runs"].IsSequence()) return out;
  Errors ignored;
  const std::string file;
  SetWalk w{file, base_dir, ignored};
  for (const auto& run : root["runs"])
    if (run.IsMap() && run["config"] && run["config"].IsScalar()) {
      const auto p = w.resolve(run["config"].Scalar());
      if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
    }
  return out;
}

std::expected<CampaignSet, Errors> expand_set(const YAML::Node& root, const std::string& file, const std::string& base_dir,
                                              const std::map<std::string, std::string>& configs, const LoadOptions& options) {
  Errors errors;
  const std::string dir = fs::absolute(base_dir).lexically_normal().string();
  SetWalk w{file, dir, errors};
  if (!w.keys(root, kSetKeys, "set")) return std::unexpected(errors);
  const Head head = read_head(w, root);
  CampaignSet set{file, head.name, head.max_running, head.max_nodes, {}};
  std::vector<Entry> entries;
  if (!root["runs"].IsSequence() || root["runs"].size() == 0)
    w.error_at(root["runs"].Mark(), "runs", "expected a list of runs, each with at least `config:`");
  else
    for (const auto& n : root["runs"])
      if (auto e = w.entry(n)) entries.push_back(std::move(*e));
  for (const auto& e : entries) expand_entry(w, e, head, configs, options, set);
  resolve_after(w, entries, set);
  check_names(w, entries, set);
  check_cycles(w, entries, set);
  check_folders(w, set);
  // An error of a config file shared by several runs is told once.
  Errors unique;
  for (const auto& e : errors)
    if (std::none_of(unique.begin(), unique.end(), [&](const util::Error& u) { return u.str() == e.str(); })) unique.push_back(e);
  if (!unique.empty()) return std::unexpected(unique);
  return set;
}

}  // namespace mlsup::config
