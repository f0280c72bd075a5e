// --metrics-listen's address and the answers of its responder (the live endpoint: tests/integration/test_metrics.sh).
#include <doctest/doctest.h>

#include <string>

#include "edges/metrics_server.h"

using namespace mlsup;

TEST_CASE("metrics listen address: HOST:PORT with an IP address, [IPv6]:PORT, localhost") {
  const auto v4 = edges::parse_listen("127.0.0.1:9410");
  REQUIRE(v4);
  CHECK(v4->host == "127.0.0.1");
  CHECK(v4->port == 9410);
  const auto v6 = edges::parse_listen("[::1]:9000");
  REQUIRE(v6);
  CHECK(v6->host == "::1");
  CHECK(edges::parse_listen("localhost:9100")->host == "127.0.0.1");
  CHECK(edges::parse_listen("0.0.0.0:65535"));
}

TEST_CASE("metrics listen address: what is wrong is said") {
  for (const char* bad : {"9410", ":9410", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:70000", "127.0.0.1:94x", "::1:9410",
                          "example.org:9410", "127.0.0.1:-1"}) {
    const auto r = edges::parse_listen(bad);
    CHECK_MESSAGE(!r, bad);
    if (!r) CHECK(r.error().message.find("HOST:PORT") != std::string::npos);
  }
  CHECK(edges::parse_listen("example.org:9410").error().message.find("not an IP address") != std::string::npos);
}

TEST_CASE("metrics responder: GET /metrics answers the exposition; other paths 404, other methods 405") {
  const std::string text = "# HELP x y\n# TYPE x gauge\nx 1\n";
  const auto ok = edges::http_answer("GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n", text);
  CHECK(ok.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(ok.find("Content-Type: text/plain; version=0.0.4") != std::string::npos);
  CHECK(ok.find("Content-Length: " + std::to_string(text.size()) + "\r\n") != std::string::npos);
  CHECK(ok.ends_with("\r\n\r\n" + text));
  CHECK(edges::http_answer("GET /metrics?x=1 HTTP/1.0\r\n\r\n", text).rfind("HTTP/1.1 200", 0) == 0);
  const auto head = edges::http_answer("HEAD /metrics HTTP/1.1\r\n\r\n", text);
  CHECK(head.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(head.ends_with("\r\n\r\n"));
  CHECK(edges::http_answer("GET / HTTP/1.1\r\n\r\n", text).rfind("HTTP/1.1 404", 0) == 0);
  CHECK(edges::http_answer("GET /metricsx HTTP/1.1\r\n\r\n", text).rfind("HTTP/1.1 404", 0) == 0);
  CHECK(edges::http_answer("POST /metrics HTTP/1.1\r\n\r\n", text).rfind("HTTP/1.1 405", 0) == 0);
  CHECK(edges::http_answer("garbage\r\n\r\n", text).rfind("HTTP/1.1 400", 0) == 0);
}
