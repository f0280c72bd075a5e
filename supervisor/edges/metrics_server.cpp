#include "edges/metrics_server.h"

#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <set>
#include <utility>  // Boost 1.74's asio needs std::exchange declared before it under C++23

#include <boost/asio.hpp>

namespace mlsup::edges {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

constexpr std::size_t kMaxHead = 8192;              // a request head longer than this is not answered
constexpr auto kDeadline = std::chrono::seconds(5);  // one connection's time, request and answer
constexpr std::size_t kMaxOpen = 32;                 // connections served at once; more wait in the backlog
constexpr std::size_t kFdShare = 4;                  // ... and at most 1/kFdShare of the descriptors allowed
constexpr auto kAcceptRetry = std::chrono::milliseconds(200);  // after a failed accept (no fd left: EMFILE)

std::string response(const char* status, const char* type, const std::string& body) {
  return std::string("HTTP/1.1 ") + status + "\r\nContent-Type: " + type + "\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

// Connections served at once: kMaxOpen, or fewer under a low descriptor limit, so that a flood of idle
// scrapers never leaves the supervisor without descriptors for Slurm, munge and its own files (libslurm
// gives up on a controller it cannot open a socket to, and may end the process on a plugin it cannot load).
std::size_t connection_cap() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return kMaxOpen;
  return std::clamp<std::size_t>(limit.rlim_cur / kFdShare, 1, kMaxOpen);
}

}  // namespace

util::Result<ListenAddress> parse_listen(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return util::fail("\"" + text + "\": " + why + " (HOST:PORT, e.g. 127.0.0.1:9410 or [::1]:9410)");
  };
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) return bad("no HOST:PORT");
  std::string host = text.substr(0, colon);
  const std::string port = text.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  else if (host.find(':') != std::string::npos) return bad("an IPv6 address goes in brackets");
  if (host == "localhost") host = "127.0.0.1";
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535)
    return bad("the port is not a number from 1 to 65535");
  boost::system::error_code parse_error;
  (void)asio::ip::make_address(host, parse_error);
  if (parse_error) return bad("\"" + host + "\" is not an IP address (or localhost)");
  return ListenAddress{host, static_cast<unsigned short>(value)};
}

std::string http_answer(const std::string& head, const std::string& metrics) {
  const auto line = head.substr(0, head.find("\r\n"));
  const auto sp1 = line.find(' ');
  const auto sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string::npos || line.compare(sp2 + 1, 5, "HTTP/") != 0)
    return response("400 Bad Request", "text/plain; charset=utf-8", "not an HTTP request\n");
  const auto method = line.substr(0, sp1);
  auto target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  target = target.substr(0, target.find('?'));
  if (target != "/metrics") return response("404 Not Found", "text/plain; charset=utf-8", "mlsup serves /metrics only\n");
  if (method != "GET" && method != "HEAD")
    return response("405 Method Not Allowed", "text/plain; charset=utf-8", "GET /metrics\n");
  auto answer = response("200 OK", "text/plain; version=0.0.4; charset=utf-8", metrics);
  if (method == "HEAD") answer.resize(answer.size() - metrics.size());
  return answer;
}

struct MetricsServer::Impl : std::enable_shared_from_this<MetricsServer::Impl> {
  struct Connection {
    explicit Connection(asio::io_context& io) : socket(io), deadline(io), head(kMaxHead) {}
    tcp::socket socket;
    asio::steady_timer deadline;
    asio::streambuf head;
    std::string answer;
  };

  explicit Impl(asio::io_context& context) : io(context), acceptor(context), retry(context) {}

  // One accept at a time: none while max_open are open (end() resumes), and after a failure (a process
  // out of file descriptors fails every accept at once) the next one only after kAcceptRetry, not in a loop.
  void accept() {
    auto c = std::make_shared<Connection>(io);
    acceptor.async_accept(c->socket, [self = shared_from_this(), c](const boost::system::error_code& ec) {
      if (ec == asio::error::operation_aborted || !self->acceptor.is_open()) return;
      if (ec) return self->accept_later();
      self->serve(c);
      if (self->open.size() < self->max_open) self->accept();
      else self->paused = true;
    });
  }

  void accept_later() {
    retry.expires_after(kAcceptRetry);
    retry.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (!ec && self->acceptor.is_open()) self->accept();
    });
  }

  void serve(const std::shared_ptr<Connection>& c) {
    open.insert(c);
    c->deadline.expires_after(kDeadline);
    c->deadline.async_wait([self = shared_from_this(), c](const boost::system::error_code& ec) {
      if (!ec) self->end(c);
    });
    asio::async_read_until(c->socket, c->head, "\r\n\r\n", [self = shared_from_this(), c](const boost::system::error_code& ec, std::size_t) {
      if (ec) return self->end(c);
      const std::string head(asio::buffers_begin(c->head.data()), asio::buffers_end(c->head.data()));
      c->answer = http_answer(head, self->text);
      asio::async_write(c->socket, asio::buffer(c->answer), [self, c](const boost::system::error_code&, std::size_t) { self->end(c); });
    });
  }

  void end(const std::shared_ptr<Connection>& c) {
    boost::system::error_code ignored;
    c->socket.shutdown(tcp::socket::shutdown_both, ignored);
    c->socket.close(ignored);
    c->deadline.cancel();
    if (open.erase(c) > 0 && paused && acceptor.is_open()) {
      paused = false;
      accept();
    }
  }

  asio::io_context& io;
  tcp::acceptor acceptor;
  asio::steady_timer retry;
  const std::size_t max_open = connection_cap();
  bool paused = false;  // max_open connections open: the next accept waits for one to end
  std::set<std::shared_ptr<Connection>> open;
  std::string text = "# mlsup: no exposition yet\n";
};

MetricsServer::MetricsServer(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

MetricsServer::~MetricsServer() { close(); }

util::Result<std::unique_ptr<MetricsServer>> MetricsServer::listen(asio::io_context& io, const ListenAddress& where) {
  auto impl = std::make_shared<Impl>(io);
  boost::system::error_code ec;
  const tcp::endpoint at(asio::ip::make_address(where.host, ec), where.port);
  if (!ec) impl->acceptor.open(at.protocol(), ec);
  if (!ec) impl->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(at, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return util::fail("--metrics-listen " + where.host + ":" + std::to_string(where.port) + ": cannot listen: " + ec.message());
  impl->accept();
  return std::make_unique<MetricsServer>(std::move(impl));
}

void MetricsServer::set_text(std::string text) { impl_->text = std::move(text); }

void MetricsServer::close() {
  boost::system::error_code ignored;
  impl_->acceptor.close(ignored);
  impl_->retry.cancel();
  for (const auto& c : std::set(impl_->open)) impl_->end(c);
}

}  // namespace mlsup::edges
