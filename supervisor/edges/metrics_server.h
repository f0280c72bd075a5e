#pragma once
// `mlsup run --metrics-listen HOST:PORT`: a small HTTP/1.1 responder on the run loop's io_context. GET /metrics
// answers the newest exposition handed to it (never computed while a scraper waits), other paths 404, other
// methods 405; one request per connection, each bounded by a deadline, so a slow client holds nothing up; at
// most 32 connections at once, and no more than a quarter of the process's descriptor limit.
#include <memory>
#include <string>
#include <utility>  // Boost 1.74's asio needs std::exchange declared before it under C++23

#include <boost/asio/io_context.hpp>

#include "util/error.h"

namespace mlsup::edges {

struct ListenAddress {
  std::string host;  // an IP address (IPv6 without its brackets)
  unsigned short port = 0;
};

// "127.0.0.1:9410", "[::1]:9410", "localhost:9410" (127.0.0.1): the address, or what is wrong with text.
util::Result<ListenAddress> parse_listen(const std::string& text);

// The answer to one request's head (its first line is read; the rest is ignored): status line, headers and body.
std::string http_answer(const std::string& request_head, const std::string& metrics);

class MetricsServer {
 public:
  // Listens on where (an error when the address cannot be bound); answers through io.
  static util::Result<std::unique_ptr<MetricsServer>> listen(boost::asio::io_context& io, const ListenAddress& where);
  ~MetricsServer();
  // The exposition GET /metrics answers from now on.
  void set_text(std::string text);
  // Stops accepting and closes the connections still open (run's loop then has nothing left of it).
  void close();

  struct Impl;
  explicit MetricsServer(std::shared_ptr<Impl> impl);

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace mlsup::edges
