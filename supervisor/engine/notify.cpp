#include "engine/notify.h"

#include <chrono>
#include <regex>
#include <utility>  // Boost 1.74's asio needs std::exchange declared before it under C++23

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "edges/process.h"
#include "journal/atomic_file.h"

namespace mlsup::engine {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using nlohmann::json;

std::string field(const json& e, const char* key) {
  if (!e.contains(key)) return "";
  return e[key].is_string() ? e[key].get<std::string>() : e[key].dump();
}

}  // namespace

Notifier::Notifier(config::NotifySettings settings, std::string state_dir, std::string working_dir)
    : settings_(std::move(settings)), state_file_(std::move(state_dir) + "/notify.json"), working_dir_(std::move(working_dir)) {}

std::string Notifier::alert(const json& event, double now) {
  if (settings_.command.empty() && settings_.webhook.empty()) return "none configured";
  const std::string kind = field(event, "event");
  auto text = journal::read_file_if_exists(state_file_);
  json last = text && *text ? json::parse(**text, nullptr, false) : json::object();
  if (!last.is_object()) last = json::object();
  if (last.contains(kind) && now - last[kind].get<double>() < static_cast<double>(settings_.cooldown.count()))
    return "cooldown";
  last[kind] = now;
  (void)journal::write_atomically(state_file_, last.dump() + "\n");
  std::string outcome;
  if (!settings_.command.empty()) outcome += "command: " + run_command(event);
  if (!settings_.webhook.empty()) outcome += std::string(outcome.empty() ? "" : "; ") + "webhook: " + post_webhook(event);
  return outcome;
}

std::string Notifier::run_command(const json& event) const {
  edges::ProcessRequest r;
  r.argv = {"/bin/sh", "-c", settings_.command};
  r.env_add = {{"MLSUP_EVENT", field(event, "event")},     {"MLSUP_EVENT_REASON", field(event, "reason")},
               {"MLSUP_EVENT_CAMPAIGN", field(event, "campaign")}, {"MLSUP_EVENT_ATTEMPT", field(event, "attempt")},
               {"MLSUP_EVENT_JOB_ID", field(event, "job_id")},     {"MLSUP_EVENT_JSON", event.dump()}};
  r.working_dir = working_dir_;
  r.timeout = std::chrono::seconds(30);
  const auto result = edges::run_process(r);
  if (!result.started) return "could not start: " + result.start_error;
  if (result.timed_out) return "killed after 30s";
  return result.exit_code == 0 ? "sent" : "exited " + std::to_string(result.exit_code);
}

std::string Notifier::post_webhook(const json& event) const {
  return post_json(settings_.webhook, event.dump(), std::chrono::seconds(10));
}

std::string post_json(const std::string& target, const std::string& body, std::chrono::milliseconds timeout) {
  static const std::regex url("http://([^/:]+)(?::(\\d+))?(/.*)?");
  std::smatch m;
  if (!std::regex_match(target, m, url)) return "not an http:// URL";
  try {
    boost::asio::io_context io;
    beast::tcp_stream stream(io);
    stream.expires_after(timeout);
    boost::asio::ip::tcp::resolver resolver(io);
    stream.connect(resolver.resolve(m[1].str(), m[2].matched ? m[2].str() : "80"));
    http::request<http::string_body> req{http::verb::post, m[3].matched ? m[3].str() : "/", 11};
    req.set(http::field::host, m[1].str());
    req.set(http::field::content_type, "application/json");
    req.body() = body;
    req.prepare_payload();
    http::write(stream, req);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(stream, buffer, res);
    const unsigned status = res.result_int();
    return status < 300 ? "sent" : "HTTP " + std::to_string(status);
  } catch (const std::exception& e) {
    return std::string("failed: ") + e.what();
  }
}

}  // namespace mlsup::engine
