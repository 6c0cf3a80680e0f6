// `hwaccel serve`: the Prometheus exporter. GET /metrics, /registry and
// /healthz over HTTP (Boost.Beast; TLS through OpenSSL), with bounded
// connections, request sizes and times, and a graceful stop on SIGTERM.
#include "commands.hpp"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <sys/stat.h>

import hwaccel;

#include "detect_builder.hpp"

namespace hwaccel::cli {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct ServeArgs {
  DetectArgs detect;
  std::string listen = "127.0.0.1:9464";
  std::size_t max_connections = 64;
  int request_timeout_s = 10;
  int inventory_ttl_s = 60;
  unsigned threads = 4;
  std::string tls_cert;
  std::string tls_key;
  std::string basic_auth_file;
  bool no_watch = false;
};

constexpr std::size_t max_request_header_bytes = 8192;

struct Shared {
  TelemetryCollector& collector;
  std::size_t max_connections;
  std::chrono::seconds request_timeout;
  std::optional<std::string> credentials;  ///< "user:password" when basic auth is on
  bool pretty_registry = false;
  std::atomic<std::size_t> active{0};
  std::atomic<bool> stopping{false};
};

std::optional<std::string> base64_decode(std::string_view in) {
  static constexpr std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::uint32_t bits = 0;
  int count = 0;
  for (const char c : in) {
    if (c == '=') break;
    const auto at = alphabet.find(c);
    if (at == std::string_view::npos) return std::nullopt;
    bits = (bits << 6) | static_cast<std::uint32_t>(at);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xff));
    }
  }
  return out;
}

// Equal length and content, in a time that depends only on the length of
// what the client sent (`expected` is never empty: read_credentials checks).
bool same_secret(std::string_view given, std::string_view expected) {
  unsigned diff = given.size() == expected.size() ? 0u : 1u;
  for (std::size_t i = 0; i < given.size(); ++i)
    diff |= static_cast<unsigned char>(given[i]) ^ static_cast<unsigned char>(expected[i % expected.size()]);
  return diff == 0;
}

bool authorized(const Shared& shared, const http::request<http::empty_body>& request) {
  if (!shared.credentials) return true;
  const auto header = request[http::field::authorization];
  constexpr std::string_view scheme = "Basic ";
  if (header.size() <= scheme.size() || !text::iequals(std::string_view(header.data(), scheme.size()), scheme)) return false;
  const auto decoded = base64_decode(text::trim(std::string_view(header.data() + scheme.size(), header.size() - scheme.size())));
  return decoded && same_secret(*decoded, *shared.credentials);
}

http::response<http::string_body> respond(Shared& shared, const http::request<http::empty_body>& request) {
  http::response<http::string_body> r{http::status::ok, request.version()};
  r.set(http::field::server, text::cat("hwaccel/", library_version()));
  r.set(http::field::content_type, "text/plain; charset=utf-8");
  const auto finish = [&](http::status status, std::string body) {
    r.result(status);
    r.body() = std::move(body);
    r.prepare_payload();
    if (request.method() == http::verb::head) r.body().clear();
    r.keep_alive(request.keep_alive() && !shared.stopping);
    return r;
  };
  if (!authorized(shared, request)) {
    r.set(http::field::www_authenticate, "Basic realm=\"hwaccel\", charset=\"UTF-8\"");
    return finish(http::status::unauthorized, "authentication required\n");
  }
  if (request.method() != http::verb::get && request.method() != http::verb::head) {
    r.set(http::field::allow, "GET, HEAD");
    return finish(http::status::method_not_allowed, "only GET and HEAD\n");
  }
  std::string_view path(request.target().data(), request.target().size());
  if (const auto query = path.find('?'); query != std::string_view::npos) path = path.substr(0, query);
  if (path == "/metrics") {
    const std::string_view accept(request[http::field::accept].data(), request[http::field::accept].size());
    const auto format = accept.find("application/openmetrics-text") != std::string_view::npos ? MetricsFormat::openmetrics
                                                                                              : MetricsFormat::prometheus_text;
    r.set(http::field::content_type, std::string(content_type(format)));
    return finish(http::status::ok, shared.collector.scrape(format));
  }
  if (path == "/registry") {
    r.set(http::field::content_type, "application/json");
    std::string json = to_json(*shared.collector.registry(), JsonOptions{.pretty = shared.pretty_registry});
    if (!json.ends_with('\n')) json += '\n';
    return finish(http::status::ok, std::move(json));
  }
  if (path == "/healthz") return finish(http::status::ok, "ok\n");
  if (path == "/") return finish(http::status::ok, "hwaccel exporter: /metrics /registry /healthz\n");
  return finish(http::status::not_found, "not found: /metrics /registry /healthz\n");
}

template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(Stream stream, Shared& shared) : stream_(std::move(stream)), shared_(shared) {}
  ~Session() { --shared_.active; }

  void start() {
    if constexpr (is_tls) {
      beast::get_lowest_layer(stream_).expires_after(shared_.request_timeout);
      stream_.async_handshake(asio::ssl::stream_base::server, [self = this->shared_from_this()](beast::error_code ec) {
        if (!ec) self->read();
      });
    } else {
      read();
    }
  }

 private:
  static constexpr bool is_tls = !std::is_same_v<Stream, beast::tcp_stream>;

  void read() {
    parser_.emplace();
    parser_->header_limit(max_request_header_bytes);
    parser_->body_limit(0);  // GET and HEAD carry no body
    beast::get_lowest_layer(stream_).expires_after(shared_.request_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == asio::error::operation_aborted ||
        ec == asio::error::connection_reset || ec == asio::error::eof)
      return close();
    if (ec) {
      // Malformed, oversized or with a body: answer once, then close.
      const bool too_large = ec == http::error::header_limit || ec == http::error::buffer_overflow;
      const bool has_body = ec == http::error::body_limit;
      error_response(too_large ? http::status::request_header_fields_too_large
                     : has_body ? http::status::payload_too_large
                                : http::status::bad_request,
                     text::cat(ec.message(), "\n"));
      return;
    }
    response_ = respond(shared_, parser_->get());
    write();
  }

  void error_response(http::status status, std::string body) {
    response_ = {};
    response_.result(status);
    response_.version(11);
    response_.set(http::field::content_type, "text/plain; charset=utf-8");
    response_.body() = std::move(body);
    response_.prepare_payload();
    response_.keep_alive(false);
    write();
  }

  void write() {
    beast::get_lowest_layer(stream_).expires_after(shared_.request_timeout);
    http::async_write(stream_, response_, [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec || !self->response_.keep_alive()) return self->close();
      self->read();
    });
  }

  void close() {
    beast::error_code ignored;
    if constexpr (is_tls) {
      beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(1));
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {
        beast::error_code e;
        beast::get_lowest_layer(self->stream_).socket().close(e);
      });
    } else {
      stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
      stream_.socket().close(ignored);
    }
  }

  Stream stream_;
  Shared& shared_;
  beast::flat_buffer buffer_{max_request_header_bytes + 1024};
  std::optional<http::request_parser<http::empty_body>> parser_;
  http::response<http::string_body> response_;
};

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  Listener(asio::io_context& io, tcp::acceptor acceptor, Shared& shared, asio::ssl::context* tls)
      : io_(io), acceptor_(std::move(acceptor)), shared_(shared), tls_(tls) {}

  void accept() {
    acceptor_.async_accept(asio::make_strand(io_), [self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
      self->on_accept(ec, std::move(socket));
    });
  }

  void stop() {
    beast::error_code ignored;
    acceptor_.close(ignored);
  }

 private:
  void on_accept(beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (!ec) {
      if (shared_.active.load() >= shared_.max_connections) {
        refuse(socket);
      } else {
        ++shared_.active;
        if (tls_)
          std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(
              beast::ssl_stream<beast::tcp_stream>(beast::tcp_stream(std::move(socket)), *tls_), shared_)
              ->start();
        else
          std::make_shared<Session<beast::tcp_stream>>(beast::tcp_stream(std::move(socket)), shared_)->start();
      }
    }
    if (!shared_.stopping) accept();
  }

  // Over the limit: a 503 if the socket takes it at once, never a queue.
  static void refuse(tcp::socket& socket) {
    static constexpr std::string_view busy =
        "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    beast::error_code ignored;
    socket.non_blocking(true, ignored);
    socket.write_some(asio::buffer(busy.data(), busy.size()), ignored);
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
  }

  asio::io_context& io_;
  tcp::acceptor acceptor_;
  Shared& shared_;
  asio::ssl::context* tls_;
};

std::optional<tcp::endpoint> parse_listen(std::string_view text_value) {
  std::string_view host = text_value;
  std::string_view port = "9464";
  if (host.starts_with('[')) {
    const auto close = host.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    if (close + 1 < host.size()) {
      if (host[close + 1] != ':') return std::nullopt;
      port = host.substr(close + 2);
    }
    host = host.substr(1, close - 1);
  } else if (const auto colon = host.rfind(':'); colon != std::string_view::npos) {
    port = host.substr(colon + 1);
    host = host.substr(0, colon);
  }
  const auto number = text::parse_u64(port);
  if (!number || *number > 65535) return std::nullopt;
  beast::error_code ec;
  const auto address = asio::ip::make_address(host.empty() ? "0.0.0.0" : std::string(host), ec);
  if (ec) return std::nullopt;
  return tcp::endpoint(address, static_cast<unsigned short>(*number));
}

std::optional<std::string> read_credentials(const std::string& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    std::cerr << "hwaccel serve: --basic-auth-file: cannot read " << file << "\n";
    return std::nullopt;
  }
  if (st.st_mode & 0077) {
    std::cerr << "hwaccel serve: --basic-auth-file: " << file << " is readable by others (chmod 600 it)\n";
    return std::nullopt;
  }
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.pop_back();
  if (line.find(':') == std::string::npos || line.front() == ':') {
    std::cerr << "hwaccel serve: --basic-auth-file: the first line must be USER:PASSWORD\n";
    return std::nullopt;
  }
  return line;
}

int run_serve(const ServeArgs& args) {
  auto builder = make_builder(args.detect);
  if (!builder) return exit_usage;
  const auto endpoint = parse_listen(args.listen);
  if (!endpoint) {
    std::cerr << "hwaccel serve: --listen: '" << args.listen << "' is not HOST:PORT (127.0.0.1:9464, [::1]:9464)\n";
    return exit_usage;
  }
  if (args.tls_cert.empty() != args.tls_key.empty()) {
    std::cerr << "hwaccel serve: give both --tls-cert and --tls-key, or neither\n";
    return exit_usage;
  }
  std::optional<std::string> credentials;
  if (!args.basic_auth_file.empty()) {
    credentials = read_credentials(args.basic_auth_file);
    if (!credentials) return exit_usage;
  }

  const std::unique_ptr<System> system = machine_system("serve", args.detect);
  if (!system) return exit_failure;
  CollectorOptions options;
  options.inventory_ttl = std::chrono::seconds(args.inventory_ttl_s);
  options.detect = builder->options();
  options.telemetry.tool_timeout = std::chrono::milliseconds(args.detect.timeout_ms);
  TelemetryCollector collector(*system, options);
  Shared shared{collector, args.max_connections, std::chrono::seconds(args.request_timeout_s), credentials,
                args.detect.pretty};

  std::optional<asio::ssl::context> tls;
  if (!args.tls_cert.empty()) {
    tls.emplace(asio::ssl::context::tls_server);
    tls->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                     asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
    beast::error_code ec;
    tls->use_certificate_chain_file(args.tls_cert, ec);
    if (!ec) tls->use_private_key_file(args.tls_key, asio::ssl::context::pem, ec);
    if (ec) {
      std::cerr << "hwaccel serve: TLS: " << ec.message() << "\n";
      return exit_failure;
    }
  }

  asio::io_context io(static_cast<int>(args.threads));
  tcp::acceptor acceptor(io);
  beast::error_code ec;
  acceptor.open(endpoint->protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(*endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    std::cerr << "hwaccel serve: cannot listen on " << args.listen << ": " << ec.message() << "\n";
    return exit_failure;
  }
  const auto bound = acceptor.local_endpoint();
  // The inventory is detected before the first scrape arrives.
  collector.registry();
  // Kernel notifications make the next scrape re-detect at once: a GPU that
  // fell off the bus is not reported until the inventory TTL ends. The TTL
  // stays the re-scan, so the watcher runs none of its own.
  std::unique_ptr<Watcher> watcher;
  if (!args.no_watch) {
    WatchOptions watch;
    watch.detect = options.detect;
    watch.rescan_interval = std::chrono::milliseconds(0);
    watch.caches = {&collector.inventory_cache()};
    if (auto started = Watcher::start(*system, std::move(watch)))
      watcher = std::move(*started);
    else
      std::cerr << "hwaccel serve: hot-plug events not followed (the inventory is re-detected every "
                << args.inventory_ttl_s << " s): " << started.error().message << "\n";
  }
  auto listener = std::make_shared<Listener>(io, std::move(acceptor), shared, tls ? &*tls : nullptr);
  listener->accept();

  asio::signal_set signals(io, SIGINT, SIGTERM);
  asio::steady_timer grace(io);
  signals.async_wait([&](beast::error_code, int) {
    // Stop accepting, let the requests in flight finish, then leave.
    shared.stopping = true;
    listener->stop();
    grace.expires_after(std::chrono::seconds(2));
    grace.async_wait([&](beast::error_code) { io.stop(); });
  });

  const bool loopback = bound.address().is_loopback();
  std::cerr << "hwaccel serve: listening on " << (tls ? "https" : "http") << "://"
            << (bound.address().is_v6() ? "[" + bound.address().to_string() + "]" : bound.address().to_string()) << ":"
            << bound.port() << "/metrics" << (loopback ? "" : " (not loopback: consider --tls-cert and --basic-auth-file)")
            << std::endl;

  std::vector<std::thread> threads;
  for (unsigned i = 1; i < args.threads; ++i) threads.emplace_back([&io] { io.run(); });
  io.run();
  for (auto& t : threads) t.join();
  if (watcher) watcher->stop();
  std::cerr << "hwaccel serve: stopped\n";
  return 0;
}

}  // namespace

Command add_serve_command(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  auto* cmd = app.add_subcommand("serve", "Serve every device's telemetry as a Prometheus exporter over HTTP");
  cmd->footer(
      "GET /metrics (Prometheus text, or OpenMetrics when the request's Accept asks for it), /registry (the\n"
      "registry JSON) and /healthz. The inventory is re-detected every --inventory-ttl seconds, and at once\n"
      "after a hot-plug or health event from the kernel (docs/watch.md; --no-watch turns that off); telemetry is\n"
      "read at each scrape (concurrent scrapes share one reading). Loopback by default; beyond it, use\n"
      "--tls-cert/--tls-key and --basic-auth-file (docs/metrics.md). At most --max-connections connections\n"
      "are served at once: more are answered 503 and closed, never queued. Only GET and HEAD; requests with\n"
      "a body or headers over 8 KiB are refused; a client silent for --request-timeout seconds is dropped.\n"
      "SIGTERM or SIGINT stop it after the requests in flight (at most 2 s).\n"
      "\n"
      "Examples:\n"
      "  hwaccel serve\n"
      "  hwaccel serve --listen 0.0.0.0:9464 --tls-cert cert.pem --tls-key key.pem --basic-auth-file auth\n"
      "  hwaccel serve --listen 127.0.0.1:0 --fixture fixtures/machines/dgx-h100-8x-nvswitch\n"
      "\n" +
      std::string(common_help_footer));
  cmd->add_option("--listen", args->listen, "HOST:PORT to listen on (port 0: any free port, printed on stderr)")
      ->capture_default_str();
  add_machine_options(*cmd, args->detect, "Serve a captured machine (fixture folder) instead of this one");
  cmd->add_option("--max-connections", args->max_connections, "Connections served at once")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}))
      ->capture_default_str();
  cmd->add_option("--request-timeout", args->request_timeout_s, "Seconds a request may take to arrive or be sent")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  cmd->add_option("--inventory-ttl", args->inventory_ttl_s, "Seconds between re-detections of the inventory")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  cmd->add_option("--threads", args->threads, "Threads serving requests")->check(CLI::Range(1u, 256u))->capture_default_str();
  cmd->add_option("--tls-cert", args->tls_cert, "PEM certificate chain: serve HTTPS")->check(CLI::ExistingFile);
  cmd->add_option("--tls-key", args->tls_key, "PEM private key of --tls-cert")->check(CLI::ExistingFile);
  cmd->add_option("--basic-auth-file", args->basic_auth_file,
                  "File whose first line is USER:PASSWORD (mode 600): require HTTP basic auth")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--pretty", args->detect.pretty, "Indent /registry's JSON");
  cmd->add_flag("--no-watch", args->no_watch, "Do not follow kernel hot-plug events (re-detect on the TTL only)");
  add_log_options(*cmd, args->detect.log);
  return {cmd, [args] { return run_serve(*args); }};
}

}  // namespace hwaccel::cli
