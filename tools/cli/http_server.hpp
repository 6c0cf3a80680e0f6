// The HTTP server behind `hwaccel serve`: connections, limits, TLS and basic
// auth, with what each path answers left to the caller. Its implementation
// (http_server.cpp, Boost.Beast) is a translation unit of its own, compiled
// beside the rest of the CLI: Beast and Asio are most of the CLI's compile
// time. Include after `import hwaccel;`.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hwaccel::cli {

/// What a handler is asked: a GET or HEAD, authorized where auth is on.
struct HttpRequest {
  std::string_view path;    ///< the target without its query ("/metrics")
  std::string_view query;   ///< after '?', or empty
  std::string_view accept;  ///< the Accept header
  bool head = false;        ///< HEAD: the body is measured, then dropped
};

/// What a handler answers.
struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  ///< extra header fields
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  std::string listen = "127.0.0.1:9464";  ///< HOST:PORT, [V6]:PORT; port 0 picks a free one
  std::size_t max_connections = 64;       ///< more are answered 503 and closed, never queued
  std::chrono::seconds request_timeout{10};
  unsigned threads = 4;
  std::string tls_cert;  ///< PEM chain and key: HTTPS instead of HTTP
  std::string tls_key;
  std::optional<std::string> credentials;  ///< "user:password": basic auth on every request
  std::string server;                      ///< the Server header
};

/// Only GET and HEAD are served (405 otherwise), requests with a body or
/// headers over 8 KiB are refused, a client silent for the request timeout is
/// dropped; SIGINT or SIGTERM end run() after the requests in flight (at most 2 s).
class HttpServer {
 public:
  /// Binds the address and loads the TLS files; a bad address or file is an
  /// invalid_input or io_error naming it.
  [[nodiscard]] static Result<std::unique_ptr<HttpServer>> start(const HttpServerOptions& options,
                                                                 HttpHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// "http://127.0.0.1:9464", with the port actually bound.
  std::string url() const;
  /// The port actually bound.
  unsigned short port() const;
  bool loopback() const;
  /// Serves until SIGINT or SIGTERM.
  void run();

  struct State;  ///< the connections and their limits (http_server.cpp)

 private:
  explicit HttpServer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

/// "HOST:PORT" as --listen takes it; nullopt when it is not one.
std::optional<std::pair<std::string, unsigned short>> parse_listen_address(std::string_view text);

}  // namespace hwaccel::cli
