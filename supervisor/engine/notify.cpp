#include "engine/notify.h"

#include <chrono>
#include <future>
#include <memory>
#include <regex>
#include <thread>
#include <utility>  // Boost 1.74's asio needs std::exchange declared before it under C++23

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "edges/process.h"
#include "journal/atomic_file.h"
#include "util/error.h"
#include "util/json.h"

namespace mlsup::engine {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using nlohmann::json;
using tcp = asio::ip::tcp;
using boost::system::error_code;

std::string field(const json& e, const char* key) { return e.contains(key) ? util::json_text(e[key]) : ""; }

// The addresses of host:port, found within timeout. getaddrinfo cannot be interrupted, so it runs on a
// thread of its own, which is left to finish by itself when it takes longer.
util::Result<tcp::resolver::results_type> resolve(const std::string& host, const std::string& port,
                                                  std::chrono::milliseconds timeout) {
  using Answer = std::pair<tcp::resolver::results_type, error_code>;
  auto promise = std::make_shared<std::promise<Answer>>();
  auto answer = promise->get_future();
  std::thread([promise, host, port] {
    asio::io_context io;
    tcp::resolver resolver(io);
    error_code ec;
    auto found = resolver.resolve(host, port, ec);
    promise->set_value({std::move(found), ec});
  }).detach();
  if (answer.wait_for(timeout) != std::future_status::ready) return util::fail("timed out while resolving " + host);
  auto [found, ec] = answer.get();
  if (ec) return util::fail("failed to resolve " + host + ": " + ec.message());
  return found;
}

// One request and its answer as a chain of asynchronous steps (connect, send, read), all of which end
// by the deadline: the stream closes itself then, and the step in flight ends with a timeout.
class Exchange {
 public:
  Exchange(asio::io_context& io, http::request<http::string_body> request, std::chrono::steady_clock::time_point deadline)
      : stream_(io), request_(std::move(request)), deadline_(deadline) {}

  // Starts the exchange with the first address that answers; the io_context runs it.
  void start(const tcp::resolver::results_type& addresses) {
    stream_.expires_at(deadline_);
    stream_.async_connect(addresses, [this](error_code ec, const tcp::endpoint&) { connected(ec); });
  }

  // "sent" (a 2xx answer), "HTTP <status>", or what went wrong; "" while it runs.
  const std::string& outcome() const { return outcome_; }

 private:
  void connected(error_code ec) {
    if (ec) return fail("connect", ec);
    stream_.expires_at(deadline_);
    http::async_write(stream_, request_, [this](error_code e, std::size_t) { sent(e); });
  }

  void sent(error_code ec) {
    if (ec) return fail("send", ec);
    stream_.expires_at(deadline_);
    http::async_read(stream_, buffer_, response_, [this](error_code e, std::size_t) { answered(e); });
  }

  void answered(error_code ec) {
    if (ec) return fail("read the answer", ec);
    const unsigned status = response_.result_int();
    outcome_ = status < 300 ? "sent" : "HTTP " + std::to_string(status);
    error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  }

  void fail(const char* step, error_code ec) {
    outcome_ = ec == beast::error::timeout ? std::string("timed out while trying to ") + step
                                           : std::string("failed to ") + step + ": " + ec.message();
  }

  beast::tcp_stream stream_;
  http::request<http::string_body> request_;
  std::chrono::steady_clock::time_point deadline_;
  beast::flat_buffer buffer_;
  http::response<http::string_body> response_;
  std::string outcome_;
};

}  // namespace

Notifier::Notifier(config::NotifySettings settings, std::string state_dir, std::string working_dir, AlertBounds bounds)
    : settings_(std::move(settings)),
      state_file_(std::move(state_dir) + "/notify.json"),
      working_dir_(std::move(working_dir)),
      bounds_(bounds) {}

std::string Notifier::alert(const json& event, double now) {
  if (settings_.command.empty() && settings_.webhook.empty()) return "none configured";
  const std::string kind = field(event, "event");
  auto text = journal::read_file_if_exists(state_file_);
  json last = text && *text ? json::parse(**text, nullptr, false) : json::object();
  if (!last.is_object()) last = json::object();
  const auto previous = last.find(kind);  // a value of another type than a time is no earlier alert
  if (previous != last.end() && previous->is_number() &&
      now - previous->get<double>() < static_cast<double>(settings_.cooldown.count()))
    return "cooldown";
  last[kind] = now;
  (void)journal::write_atomically(state_file_, util::dump_json(last) + "\n");
  // Side by side, so that the alert takes the longer of the two bounds, not their sum. (The default
  // policy runs the webhook at get() when no thread can be started.)
  std::future<std::string> webhook;
  if (!settings_.webhook.empty()) webhook = std::async([this, &event] { return post_webhook(event); });
  std::string outcome;
  if (!settings_.command.empty()) outcome += "command: " + run_command(event);
  if (webhook.valid()) outcome += std::string(outcome.empty() ? "" : "; ") + "webhook: " + webhook.get();
  return outcome;
}

std::string Notifier::run_command(const json& event) const {
  edges::ProcessRequest r;
  r.argv = {"/bin/sh", "-c", settings_.command};
  r.env_add = {{"MLSUP_EVENT", field(event, "event")},     {"MLSUP_EVENT_REASON", field(event, "reason")},
               {"MLSUP_EVENT_CAMPAIGN", field(event, "campaign")}, {"MLSUP_EVENT_ATTEMPT", field(event, "attempt")},
               {"MLSUP_EVENT_JOB_ID", field(event, "job_id")},     {"MLSUP_EVENT_JSON", util::dump_json(event)}};
  r.working_dir = working_dir_;
  r.timeout = bounds_.command;
  const auto result = edges::run_process(r);
  if (!result.started) return "could not start: " + result.start_error;
  if (result.timed_out) return result.timeout_message;
  return result.exit_code == 0 ? "sent" : "exited " + std::to_string(result.exit_code);
}

std::string Notifier::post_webhook(const json& event) const {
  return post_json(settings_.webhook, util::dump_json(event), bounds_.webhook);
}

std::string post_json(const std::string& target, const std::string& body, std::chrono::milliseconds timeout) {
  static const std::regex url("http://([^/:]+)(?::(\\d+))?(/.*)?");
  std::smatch m;
  if (!std::regex_match(target, m, url)) return "not an http:// URL";
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  try {
    const auto addresses = resolve(m[1].str(), m[2].matched ? m[2].str() : "80", timeout);
    if (!addresses) return addresses.error().message;
    http::request<http::string_body> req{http::verb::post, m[3].matched ? m[3].str() : "/", 11};
    req.set(http::field::host, m[1].str());
    req.set(http::field::content_type, "application/json");
    req.body() = body;
    req.prepare_payload();
    asio::io_context io;
    Exchange exchange(io, std::move(req), deadline);
    exchange.start(*addresses);
    io.run();
    return exchange.outcome();
  } catch (const std::exception& e) {
    return std::string("failed: ") + e.what();
  }
}

}  // namespace mlsup::engine
