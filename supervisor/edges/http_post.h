#pragma once
// One POST to a webhook, http:// or https://, bounded by a timeout. For https the server's certificate
// must chain to a trusted CA (the system's store, or the CAs of a PEM file) and name the URL's host.
#include <chrono>
#include <string>

namespace mlsup::edges {

struct Post {
  std::string url;           // http://host[:port][/path] or https://...
  std::string body;
  std::string content_type = "application/json";
  std::string ca_file;       // https: trust only these CAs; "" = the system's store
  std::chrono::milliseconds timeout{std::chrono::seconds(10)};
};

// Sends p and waits for the answer until its timeout. Returns "sent" (a 2xx answer), "HTTP <status>",
// or what went wrong ("failed to verify the server's certificate: ..." for a refused certificate).
std::string post(const Post& p);

}  // namespace mlsup::edges
