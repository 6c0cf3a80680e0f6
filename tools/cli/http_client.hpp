// GET over HTTP or HTTPS for the commands that read other nodes' `hwaccel
// serve` (the fleet view of `hwaccel top`): one request, one deadline for the
// whole exchange, a cap on the body, basic auth, TLS verified against the
// system's CAs or a given file. Its implementation (http_client.cpp,
// Boost.Beast) compiles beside the server's. Include after `import hwaccel;`.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace hwaccel::cli {

struct HttpGetRequest {
  /// http://HOST:PORT/PATH or https://...; HOST a name, an IPv4 address or [IPv6].
  std::string url;
  std::chrono::milliseconds timeout{2000};      ///< connect, TLS, request and reply together
  std::size_t max_body_bytes = std::size_t{16} << 20;
  std::optional<std::string> credentials;      ///< "USER:PASSWORD" for basic auth
  std::string ca_file;                          ///< https: the CAs to trust; empty: the system's
};

struct HttpGetReply {
  int status = 0;
  std::string content_type;
  std::string body;
};

/// The reply, whatever its status. Errors: invalid_input for a URL that is
/// not http(s)://HOST:PORT/PATH, timeout when the deadline passes, io_error
/// for a refused connection, a failed handshake, a body over the cap or a
/// malformed reply, each naming the URL.
[[nodiscard]] Result<HttpGetReply> http_get(const HttpGetRequest& request);

/// "HOST:PORT" (or a URL) as the URL of `path` on it: "127.0.0.2:9464" ->
/// "http://127.0.0.2:9464/telemetry".
std::string node_url(std::string_view node, std::string_view path);

}  // namespace hwaccel::cli
