// The HTTP server of `hwaccel serve` on Boost.Beast: a bounded accept loop,
// request limits, TLS streams and basic auth (http_server.hpp).
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

import hwaccel;

#include "http_server.hpp"

namespace hwaccel::cli {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr std::size_t max_request_header_bytes = 8192;

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
// what the client sent (`expected` is never empty: serve checks its file).
bool same_secret(std::string_view given, std::string_view expected) {
  unsigned diff = given.size() == expected.size() ? 0u : 1u;
  for (std::size_t i = 0; i < given.size(); ++i)
    diff |= static_cast<unsigned char>(given[i]) ^ static_cast<unsigned char>(expected[i % expected.size()]);
  return diff == 0;
}

std::string_view view(beast::string_view s) { return {s.data(), s.size()}; }

}  // namespace

struct HttpServer::State {
  HttpServerOptions options;
  HttpHandler handler;
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::optional<asio::ssl::context> tls;
  std::atomic<std::size_t> active{0};
  std::atomic<bool> stopping{false};

  explicit State(const HttpServerOptions& o, HttpHandler h)
      : options(o), handler(std::move(h)), io(static_cast<int>(o.threads)) {}

  bool authorized(const http::request<http::empty_body>& request) const {
    if (!options.credentials) return true;
    const auto header = view(request[http::field::authorization]);
    constexpr std::string_view scheme = "Basic ";
    if (header.size() <= scheme.size() || !text::iequals(header.substr(0, scheme.size()), scheme)) return false;
    const auto decoded = base64_decode(text::trim(header.substr(scheme.size())));
    return decoded && same_secret(*decoded, *options.credentials);
  }

  http::response<http::string_body> respond(const http::request<http::empty_body>& request) {
    http::response<http::string_body> r{http::status::ok, request.version()};
    r.set(http::field::server, options.server);
    r.set(http::field::content_type, "text/plain; charset=utf-8");
    const bool head = request.method() == http::verb::head;
    const auto finish = [&](unsigned status, std::string body) {
      r.result(status);
      r.body() = std::move(body);
      r.prepare_payload();
      if (head) r.body().clear();
      r.keep_alive(request.keep_alive() && !stopping);
      return r;
    };
    if (!authorized(request)) {
      r.set(http::field::www_authenticate, "Basic realm=\"hwaccel\", charset=\"UTF-8\"");
      return finish(401, "authentication required\n");
    }
    if (request.method() != http::verb::get && !head) {
      r.set(http::field::allow, "GET, HEAD");
      return finish(405, "only GET and HEAD\n");
    }
    HttpRequest asked;
    std::string_view target = view(request.target());
    if (const auto q = target.find('?'); q != std::string_view::npos) {
      asked.query = target.substr(q + 1);
      target = target.substr(0, q);
    }
    asked.path = target;
    asked.accept = view(request[http::field::accept]);
    asked.head = head;
    HttpResponse answer = handler(asked);
    r.set(http::field::content_type, answer.content_type);
    for (const auto& [name, value] : answer.headers) r.set(name, value);
    return finish(static_cast<unsigned>(answer.status), std::move(answer.body));
  }
};

namespace {

using State = HttpServer::State;

template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(Stream stream, State& state) : stream_(std::move(stream)), state_(state) {}
  ~Session() { --state_.active; }

  void start() {
    if constexpr (is_tls) {
      beast::get_lowest_layer(stream_).expires_after(state_.options.request_timeout);
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
    beast::get_lowest_layer(stream_).expires_after(state_.options.request_timeout);
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
    response_ = state_.respond(parser_->get());
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
    beast::get_lowest_layer(stream_).expires_after(state_.options.request_timeout);
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
  State& state_;
  beast::flat_buffer buffer_{max_request_header_bytes + 1024};
  std::optional<http::request_parser<http::empty_body>> parser_;
  http::response<http::string_body> response_;
};

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  explicit Listener(State& state) : state_(state) {}

  void accept() {
    state_.acceptor.async_accept(asio::make_strand(state_.io),
                                 [self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
                                   self->on_accept(ec, std::move(socket));
                                 });
  }

  void stop() {
    beast::error_code ignored;
    state_.acceptor.close(ignored);
  }

 private:
  void on_accept(beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !state_.acceptor.is_open()) return;
    if (!ec) {
      if (state_.active.load() >= state_.options.max_connections) {
        refuse(socket);
      } else {
        ++state_.active;
        if (state_.tls)
          std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(
              beast::ssl_stream<beast::tcp_stream>(beast::tcp_stream(std::move(socket)), *state_.tls), state_)
              ->start();
        else
          std::make_shared<Session<beast::tcp_stream>>(beast::tcp_stream(std::move(socket)), state_)->start();
      }
    }
    if (!state_.stopping) accept();
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

  State& state_;
};

}  // namespace

std::optional<std::pair<std::string, unsigned short>> parse_listen_address(std::string_view text_value) {
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
  asio::ip::make_address(host.empty() ? "0.0.0.0" : std::string(host), ec);
  if (ec) return std::nullopt;
  return std::pair{host.empty() ? std::string("0.0.0.0") : std::string(host), static_cast<unsigned short>(*number)};
}

HttpServer::HttpServer(std::unique_ptr<State> state) : state_(std::move(state)) {}
HttpServer::~HttpServer() = default;

Result<std::unique_ptr<HttpServer>> HttpServer::start(const HttpServerOptions& options, HttpHandler handler) {
  const auto address = parse_listen_address(options.listen);
  if (!address)
    return fail(ErrorKind::invalid_input,
                text::cat("'", options.listen, "' is not HOST:PORT (127.0.0.1:9464, [::1]:9464)"));
  auto state = std::make_unique<State>(options, std::move(handler));
  if (!options.tls_cert.empty()) {
    auto& tls = state->tls.emplace(asio::ssl::context::tls_server);
    tls.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                    asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
    beast::error_code ec;
    tls.use_certificate_chain_file(options.tls_cert, ec);
    if (!ec) tls.use_private_key_file(options.tls_key, asio::ssl::context::pem, ec);
    if (ec) return fail(ErrorKind::io_error, text::cat("TLS: ", ec.message()));
  }
  const tcp::endpoint endpoint(asio::ip::make_address(address->first), address->second);
  beast::error_code ec;
  state->acceptor.open(endpoint.protocol(), ec);
  if (!ec) state->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) state->acceptor.bind(endpoint, ec);
  if (!ec) state->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return fail(ErrorKind::io_error, text::cat("cannot listen on ", options.listen, ": ", ec.message()));
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(state)));
}

std::string HttpServer::url() const {
  const auto bound = state_->acceptor.local_endpoint();
  const std::string host = bound.address().to_string();
  return text::cat(state_->tls ? "https" : "http", "://", bound.address().is_v6() ? text::cat("[", host, "]") : host,
                   ":", bound.port());
}

unsigned short HttpServer::port() const { return state_->acceptor.local_endpoint().port(); }

bool HttpServer::loopback() const { return state_->acceptor.local_endpoint().address().is_loopback(); }

void HttpServer::run() {
  auto listener = std::make_shared<Listener>(*state_);
  listener->accept();
  asio::signal_set signals(state_->io, SIGINT, SIGTERM);
  asio::steady_timer grace(state_->io);
  signals.async_wait([&](beast::error_code, int) {
    // Stop accepting, let the requests in flight finish, then leave.
    state_->stopping = true;
    listener->stop();
    grace.expires_after(std::chrono::seconds(2));
    grace.async_wait([&](beast::error_code) { state_->io.stop(); });
  });
  std::vector<std::thread> threads;
  for (unsigned i = 1; i < state_->options.threads; ++i) threads.emplace_back([this] { state_->io.run(); });
  state_->io.run();
  for (auto& t : threads) t.join();
}

}  // namespace hwaccel::cli
