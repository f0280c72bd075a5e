#include "render/template.h"

#include <memory>
#include <vector>

#include "util/strings.h"

namespace mlsup::render {
namespace {

enum class TagKind { Text, Quoted, Raw, Section, Inverted, Close, Comment };

struct Token {
  TagKind kind;
  std::string text;  // literal text, or the variable name
  int line;
  int column;
};

struct Node {
  Token token;
  std::vector<Node> children;  // sections only
};

class Lexer {
 public:
  Lexer(const std::string& name, std::string_view text) : name_(name), text_(text) {}

  util::Result<std::vector<Token>> run() {
    std::vector<Token> tokens;
    std::size_t literal_start = 0;
    while (true) {
      const std::size_t open = text_.find("{{", pos_);
      if (open == std::string_view::npos) break;
      advance_to(open);
      auto tag = read_tag();
      if (!tag) return std::unexpected(tag.error());
      std::string literal(text_.substr(literal_start, open - literal_start));
      if (is_standalone_kind(tag->kind)) strip_standalone(literal, literal_start, open);
      if (!literal.empty()) tokens.push_back({TagKind::Text, literal, 0, 0});
      tokens.push_back(*tag);
      literal_start = pos_;
    }
    if (literal_start < text_.size()) tokens.push_back({TagKind::Text, std::string(text_.substr(literal_start)), 0, 0});
    return tokens;
  }

 private:
  static bool is_standalone_kind(TagKind k) {
    return k == TagKind::Section || k == TagKind::Inverted || k == TagKind::Close || k == TagKind::Comment;
  }

  // Moves pos_ forward to target, counting lines and columns on the way.
  void advance_to(std::size_t target) {
    for (; pos_ < target; ++pos_) {
      if (text_[pos_] == '\n') {
        ++line_;
        column_ = 1;
      } else {
        ++column_;
      }
    }
  }

  util::Error error(int line, int column, std::string subject, std::string message) const {
    return {.file = name_, .line = line, .column = column, .subject = std::move(subject), .message = std::move(message)};
  }

  // Reads the tag at pos_ (which is at "{{") and leaves pos_ after it.
  util::Result<Token> read_tag() {
    const int line = line_, column = column_;
    const bool triple = text_.substr(pos_, 3) == "{{{";
    const std::string_view closer = triple ? "}}}" : "}}";
    const std::size_t body_start = pos_ + (triple ? 3 : 2);
    const std::size_t close = text_.find(closer, body_start);
    const std::size_t newline = text_.find('\n', body_start);
    if (close == std::string_view::npos || (newline < close && text_.substr(body_start, 1) != "!"))
      return std::unexpected(error(line, column, "", "tag opened with \"" + std::string(triple ? "{{{" : "{{") +
                                                         "\" is not closed with \"" + std::string(closer) + "\" on the same line"));
    std::string_view body = util::trim(text_.substr(body_start, close - body_start));
    advance_to(close + closer.size());
    TagKind kind = triple ? TagKind::Raw : TagKind::Quoted;
    if (!triple && !body.empty()) {
      static const std::string_view sigils = "&#^/!";
      static const TagKind kinds[] = {TagKind::Raw, TagKind::Section, TagKind::Inverted, TagKind::Close, TagKind::Comment};
      if (const auto at = sigils.find(body.front()); at != std::string_view::npos) {
        kind = kinds[at];
        body.remove_prefix(1);
      }
    }
    const std::string_view tag_name = util::trim(body);
    if (kind != TagKind::Comment && tag_name.empty()) return std::unexpected(error(line, column, "", "empty tag name"));
    return Token{kind, std::string(tag_name), line, column};
  }

  // If the tag just read stands alone on its line, drops the line's indentation from literal and
  // the rest of the line (up to and including its newline) after the tag.
  void strip_standalone(std::string& literal, std::size_t literal_start, std::size_t tag_start) {
    std::size_t from = tag_start;
    while (from > 0 && text_[from - 1] != '\n') --from;
    if (from < literal_start || !util::trim(text_.substr(from, tag_start - from)).empty()) return;
    std::size_t end = pos_;
    while (end < text_.size() && (text_[end] == ' ' || text_[end] == '\t' || text_[end] == '\r')) ++end;
    if (end < text_.size() && text_[end] != '\n') return;
    literal.resize(literal.size() - (tag_start - from));
    advance_to(end < text_.size() ? end + 1 : end);
  }

  const std::string& name_;
  std::string_view text_;
  std::size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};

// Builds the section tree; every section must be closed by its own name.
util::Result<std::vector<Node>> build(const std::string& name, const std::vector<Token>& tokens, std::size_t& i,
                                      const Token* open) {
  std::vector<Node> nodes;
  while (i < tokens.size()) {
    const Token& t = tokens[i++];
    if (t.kind == TagKind::Close) {
      if (open && open->text == t.text) return nodes;
      const std::string expected = open ? "\"{{/" + open->text + "}}\"" : "no section to close";
      return std::unexpected(util::Error{.file = name, .line = t.line, .column = t.column, .subject = t.text,
                                         .message = "closes a section that is not open (expected " + expected + ")"});
    }
    Node node{t, {}};
    if (t.kind == TagKind::Section || t.kind == TagKind::Inverted) {
      auto children = build(name, tokens, i, &t);
      if (!children) return std::unexpected(children.error());
      node.children = std::move(*children);
    }
    if (t.kind != TagKind::Comment) nodes.push_back(std::move(node));
  }
  if (open)
    return std::unexpected(util::Error{.file = name, .line = open->line, .column = open->column, .subject = open->text,
                                       .message = "section is never closed (add \"{{/" + open->text + "}}\")"});
  return nodes;
}

// Adds an error for every name in the tree that is not defined, rendered or not.
void check_names(const std::string& name, const std::vector<Node>& nodes, const Variables& vars,
                 std::vector<util::Error>& errors) {
  for (const auto& node : nodes) {
    const Token& t = node.token;
    if (t.kind != TagKind::Text && !vars.contains(t.text)) {
      std::vector<std::string> known;
      for (const auto& [k, v] : vars) known.push_back(k);
      // A vars.NAME the template uses is most often one the config has yet to define: that comes first.
      const auto near = util::did_you_mean(t.text, known);
      const bool own = util::starts_with(t.text, "vars.");
      std::string message = "undefined variable";
      if (own) message += " (add it under `vars:` in the config" + (near.empty() ? "" : "; or did you mean \"" + near + "\"?") + ")";
      else if (!near.empty()) message += " (did you mean \"" + near + "\"?)";
      else message += " (your own variables are {{vars.NAME}}, set under `vars:`)";
      errors.push_back(util::Error{.file = name, .line = t.line, .column = t.column, .subject = t.text, .message = message});
    }
    check_names(name, node.children, vars, errors);
  }
}

void emit(const std::vector<Node>& nodes, const Variables& vars, std::string& out) {
  for (const auto& node : nodes) {
    const Token& t = node.token;
    switch (t.kind) {
      case TagKind::Text: out += t.text; break;
      case TagKind::Quoted: out += util::shell_quote(vars.at(t.text)); break;
      case TagKind::Raw: out += vars.at(t.text); break;
      case TagKind::Section: if (!vars.at(t.text).empty()) emit(node.children, vars, out); break;
      case TagKind::Inverted: if (vars.at(t.text).empty()) emit(node.children, vars, out); break;
      case TagKind::Close:
      case TagKind::Comment: break;
    }
  }
}

}  // namespace

util::Result<std::string> render_template(const std::string& name, std::string_view text, const Variables& vars) {
  auto tokens = Lexer(name, text).run();
  if (!tokens) return std::unexpected(tokens.error());
  std::size_t i = 0;
  auto tree = build(name, *tokens, i, nullptr);
  if (!tree) return std::unexpected(tree.error());
  std::vector<util::Error> undefined;
  check_names(name, *tree, vars, undefined);
  if (!undefined.empty()) return std::unexpected(undefined.front());
  std::string out;
  emit(*tree, vars, out);
  return out;
}

std::vector<util::Error> template_problems(const std::string& name, std::string_view text, const Variables& vars) {
  auto tokens = Lexer(name, text).run();
  if (!tokens) return {tokens.error()};
  std::size_t i = 0;
  auto tree = build(name, *tokens, i, nullptr);
  if (!tree) return {tree.error()};
  std::vector<util::Error> undefined;
  check_names(name, *tree, vars, undefined);
  return undefined;
}

}  // namespace mlsup::render
