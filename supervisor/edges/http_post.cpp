#include "edges/http_post.h"

#include <fstream>
#include <future>
#include <memory>
#include <optional>
#include <regex>
#include <thread>
#include <type_traits>
#include <utility>  // Boost 1.74's asio needs std::exchange declared before it under C++23

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include "util/error.h"

namespace mlsup::edges {
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

struct Url {
  bool tls = false;
  std::string host, port, target;
};

std::optional<Url> parse_url(const std::string& text) {
  static const std::regex url("(https?)://([^/:]+)(?::(\\d+))?(/.*)?");
  std::smatch m;
  if (!std::regex_match(text, m, url)) return std::nullopt;
  const bool tls = m[1].str() == "https";
  return Url{tls, m[2].str(), m[3].matched ? m[3].str() : tls ? "443" : "80", m[4].matched ? m[4].str() : "/"};
}

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

// A client context that verifies the peer against ca_file's CAs, or the system's store.
util::Result<void> trust(ssl::context& ctx, const std::string& ca_file) {
  error_code ec;
  ctx.set_verify_mode(ssl::verify_peer, ec);
  if (!ec) {
    if (ca_file.empty()) ctx.set_default_verify_paths(ec);
    else ctx.load_verify_file(ca_file, ec);
  }
  if (!ec) return {};
  if (ca_file.empty()) return util::fail("cannot load the system's CA store: " + ec.message());
  const bool readable = std::ifstream(ca_file).good();
  return util::fail("cannot read notify.ca_file " + ca_file + ": " +
                    (readable ? "it holds no PEM certificate (" + ec.message() + ")" : std::string("no such readable file")));
}

// Makes the handshake send host (SNI) and accept only a certificate that names it (a name, or an address).
void expect_host(SSL* ssl, const std::string& host) {
  error_code not_ip;
  (void)asio::ip::make_address(host, not_ip);
  if (not_ip) {
    SSL_set_tlsext_host_name(ssl, host.c_str());
    SSL_set1_host(ssl, host.c_str());
  } else {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
  }
}

// One request and its answer as a chain of asynchronous steps (connect, the TLS handshake, send, read),
// all of which end by the deadline: the stream closes itself then, and the step in flight ends with a timeout.
template <bool kTls>
class Exchange {
  using Stream = std::conditional_t<kTls, beast::ssl_stream<beast::tcp_stream>, beast::tcp_stream>;

 public:
  Exchange(asio::io_context& io, ssl::context* ctx, http::request<http::string_body> request, Clock::time_point deadline)
      : request_(std::move(request)), deadline_(deadline) {
    if constexpr (kTls) stream_.emplace(io, *ctx);
    else stream_.emplace(io);
  }

  // Starts the exchange with the first address that answers; the io_context runs it.
  void start(const tcp::resolver::results_type& addresses, const std::string& host) {
    if constexpr (kTls) expect_host(stream_->native_handle(), host);
    lowest().expires_at(deadline_);
    lowest().async_connect(addresses, [this](error_code ec, const tcp::endpoint&) { connected(ec); });
  }

  // "sent" (a 2xx answer), "HTTP <status>", or what went wrong; "" while it runs.
  const std::string& outcome() const { return outcome_; }

 private:
  beast::tcp_stream& lowest() { return beast::get_lowest_layer(*stream_); }

  void connected(error_code ec) {
    if (ec) return fail("connect", ec);
    lowest().expires_at(deadline_);
    if constexpr (kTls) stream_->async_handshake(ssl::stream_base::client, [this](error_code e) { shaken(e); });
    else shaken(ec);
  }

  void shaken(error_code ec) {
    if (ec) return refused(ec);
    http::async_write(*stream_, request_, [this](error_code e, std::size_t) { sent(e); });
  }

  void sent(error_code ec) {
    if (ec) return fail("send", ec);
    lowest().expires_at(deadline_);
    http::async_read(*stream_, buffer_, response_, [this](error_code e, std::size_t) { answered(e); });
  }

  void answered(error_code ec) {
    if (ec) return fail("read the answer", ec);
    const unsigned status = response_.result_int();
    outcome_ = status < 300 ? "sent" : "HTTP " + std::to_string(status);
    error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
  }

  // A failed handshake: the certificate's verdict when it was refused, else what failed.
  void refused(error_code ec) {
    if constexpr (kTls) {
      const long verdict = SSL_get_verify_result(stream_->native_handle());
      if (verdict != X509_V_OK) {
        outcome_ = std::string("failed to verify the server's certificate: ") + X509_verify_cert_error_string(verdict);
        return;
      }
    }
    fail("complete the TLS handshake", ec);
  }

  void fail(const char* step, error_code ec) {
    outcome_ = ec == beast::error::timeout ? std::string("timed out while trying to ") + step
                                           : std::string("failed to ") + step + ": " + ec.message();
  }

  std::optional<Stream> stream_;
  http::request<http::string_body> request_;
  Clock::time_point deadline_;
  beast::flat_buffer buffer_;
  http::response<http::string_body> response_;
  std::string outcome_;
};

template <bool kTls>
std::string exchange(const Url& url, const tcp::resolver::results_type& addresses, http::request<http::string_body> req,
                     ssl::context* ctx, Clock::time_point deadline) {
  asio::io_context io;
  Exchange<kTls> e(io, ctx, std::move(req), deadline);
  e.start(addresses, url.host);
  io.run();
  return e.outcome();
}

}  // namespace

std::string post(const Post& p) {
  const auto url = parse_url(p.url);
  if (!url) return "not an http:// or https:// URL";
  const auto deadline = Clock::now() + p.timeout;
  try {
    const auto addresses = resolve(url->host, url->port, p.timeout);
    if (!addresses) return addresses.error().message;
    http::request<http::string_body> req{http::verb::post, url->target, 11};
    req.set(http::field::host, url->host);
    req.set(http::field::content_type, p.content_type);
    req.body() = p.body;
    req.prepare_payload();
    if (!url->tls) return exchange<false>(*url, *addresses, std::move(req), nullptr, deadline);
    ssl::context ctx(ssl::context::tls_client);
    if (auto trusted = trust(ctx, p.ca_file); !trusted) return trusted.error().message;
    return exchange<true>(*url, *addresses, std::move(req), &ctx, deadline);
  } catch (const std::exception& e) {
    return std::string("failed: ") + e.what();
  }
}

}  // namespace mlsup::edges
