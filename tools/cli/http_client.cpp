// http_get on Boost.Beast, as C++20 coroutines on a private io_context run
// until the deadline.
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <chrono>
#include <exception>
#include <functional>
#include <type_traits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <openssl/ssl.h>

import hwaccel;

#include "http_client.hpp"

namespace hwaccel::cli {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct Url {
  bool tls = false;
  std::string host;  ///< without brackets
  std::string port;
  std::string target;
};

std::optional<Url> parse_url(std::string_view url) {
  Url u;
  if (url.starts_with("http://")) url.remove_prefix(7);
  else if (url.starts_with("https://")) {
    url.remove_prefix(8);
    u.tls = true;
  } else {
    return std::nullopt;
  }
  const auto slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  u.target = slash == std::string_view::npos ? "/" : std::string(url.substr(slash));
  if (authority.find('@') != std::string_view::npos) return std::nullopt;  // credentials go in their own field
  std::string_view port;
  if (authority.starts_with('[')) {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    u.host = std::string(authority.substr(1, close - 1));
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return std::nullopt;
      port = authority.substr(close + 2);
    }
  } else {
    const auto colon = authority.rfind(':');
    u.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (u.host.empty()) return std::nullopt;
  if (port.empty()) port = u.tls ? "443" : "80";
  const auto n = text::parse_u64(port);
  if (!n || *n == 0 || *n > 65535) return std::nullopt;
  u.port = std::string(port);
  for (const char c : u.target)
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) return std::nullopt;
  return u;
}

std::string base64(std::string_view in) {
  static constexpr char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::uint32_t bits = 0;
  int count = 0;
  for (const unsigned char c : in) {
    bits = (bits << 8) | c;
    count += 8;
    while (count >= 6) {
      count -= 6;
      out += digits[(bits >> count) & 63];
    }
  }
  if (count > 0) out += digits[(bits << (6 - count)) & 63];
  while (out.size() % 4) out += '=';
  return out;
}

// One exchange on a stream, step by step on the io_context: resolve,
// connect, (handshake), write, read. `done` gets the failure, or nothing.
template <class Stream>
class Exchange {
 public:
  static constexpr bool tls = !std::is_same_v<Stream, beast::tcp_stream>;

  template <class... StreamArgs>
  Exchange(asio::io_context& io, const Url& url, const HttpGetRequest& request, std::chrono::steady_clock::time_point deadline,
           HttpGetReply& reply, StreamArgs&&... stream_args)
      : resolver_(io), stream_(io, std::forward<StreamArgs>(stream_args)...), url_(url), request_(request), deadline_(deadline),
        reply_(reply) {}

  void start(std::function<void(std::optional<std::string>)> done) {
    done_ = std::move(done);
    if constexpr (tls) {
      if (!SSL_set_tlsext_host_name(stream_.native_handle(), url_.host.c_str())) return finish("cannot set the TLS server name");
      stream_.set_verify_callback(asio::ssl::host_name_verification(url_.host));
    }
    resolver_.async_resolve(url_.host, url_.port, [this](beast::error_code ec, tcp::resolver::results_type endpoints) {
      if (ec) return finish(ec);
      lowest().expires_at(deadline_);
      lowest().async_connect(endpoints, [this](beast::error_code ec2, const tcp::endpoint&) {
        if (ec2) return finish(ec2);
        if constexpr (tls) {
          lowest().expires_at(deadline_);
          stream_.async_handshake(asio::ssl::stream_base::client, [this](beast::error_code ec3) {
            if (ec3) return finish(ec3);
            send();
          });
        } else {
          send();
        }
      });
    });
  }

 private:
  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }

  void send() {
    get_ = {http::verb::get, url_.target, 11};
    get_.set(http::field::host, url_.host.find(':') != std::string::npos ? "[" + url_.host + "]:" + url_.port : url_.host + ":" + url_.port);
    get_.set(http::field::user_agent, text::cat("hwaccel/", library_version()));
    get_.set(http::field::accept, "application/json");
    if (request_.credentials) get_.set(http::field::authorization, "Basic " + base64(*request_.credentials));
    lowest().expires_at(deadline_);
    http::async_write(stream_, get_, [this](beast::error_code ec, std::size_t) {
      if (ec) return finish(ec);
      parser_.body_limit(request_.max_body_bytes);
      parser_.header_limit(64 * 1024);
      lowest().expires_at(deadline_);
      http::async_read(stream_, buffer_, parser_, [this](beast::error_code ec2, std::size_t) {
        if (ec2) return finish(ec2);
        auto response = parser_.release();
        reply_.status = static_cast<int>(response.result_int());
        reply_.content_type = std::string(response[http::field::content_type]);
        reply_.body = std::move(response.body());
        finish(std::optional<std::string>());
      });
    });
  }

  void finish(beast::error_code ec) {
    finish(std::optional<std::string>(ec == beast::error::timeout ? std::string("timeout") : ec.message()));
  }
  void finish(const char* message) { finish(std::optional<std::string>(message)); }
  void finish(std::optional<std::string> failure) {
    if (done_) std::exchange(done_, nullptr)(std::move(failure));
  }

  tcp::resolver resolver_;
  Stream stream_;
  const Url& url_;
  const HttpGetRequest& request_;
  std::chrono::steady_clock::time_point deadline_;
  HttpGetReply& reply_;
  http::request<http::empty_body> get_;
  beast::flat_buffer buffer_;
  http::response_parser<http::string_body> parser_;
  std::function<void(std::optional<std::string>)> done_;
};

}  // namespace

std::string node_url(std::string_view node, std::string_view path) {
  std::string base(node);
  if (!base.starts_with("http://") && !base.starts_with("https://")) base = "http://" + base;
  // A node given as a URL with a path keeps it only when it is the root.
  const auto scheme_end = base.find("://") + 3;
  if (const auto slash = base.find('/', scheme_end); slash != std::string::npos) base.resize(slash);
  return base + std::string(path);
}

Result<HttpGetReply> http_get(const HttpGetRequest& request) {
  const auto url = parse_url(request.url);
  if (!url) return fail(ErrorKind::invalid_input, text::cat("'", text::excerpt(request.url, 80), "' is not http(s)://HOST:PORT/PATH"));
  const auto deadline = std::chrono::steady_clock::now() + request.timeout;
  asio::io_context io;
  HttpGetReply reply;
  std::optional<std::string> failure;
  bool done_flag = false;
  std::optional<asio::ssl::context> tls;
  try {
    if (url->tls) {
      tls.emplace(asio::ssl::context::tls_client);
      if (request.ca_file.empty()) tls->set_default_verify_paths();
      else tls->load_verify_file(request.ca_file);
      tls->set_verify_mode(asio::ssl::verify_peer);
    }
  } catch (const std::exception& e) {
    return fail(ErrorKind::invalid_input, text::cat("TLS set-up for ", request.url, ": ", e.what()));
  }
  const auto done = [&](std::optional<std::string> why) {
    done_flag = true;
    failure = std::move(why);
  };
  std::optional<Exchange<beast::tcp_stream>> plain;
  std::optional<Exchange<beast::ssl_stream<beast::tcp_stream>>> secure;
  if (tls) secure.emplace(io, *url, request, deadline, reply, *tls).start(done);
  else plain.emplace(io, *url, request, deadline, reply).start(done);
  io.run_until(deadline + std::chrono::milliseconds(50));
  if (!done_flag) return fail(ErrorKind::timeout, text::cat("GET ", request.url, ": no answer within ", request.timeout.count(), " ms"));
  if (failure && *failure == "timeout")
    return fail(ErrorKind::timeout, text::cat("GET ", request.url, ": no answer within ", request.timeout.count(), " ms"));
  if (failure) return fail(ErrorKind::io_error, text::cat("GET ", request.url, ": ", *failure));
  return reply;
}

}  // namespace hwaccel::cli
