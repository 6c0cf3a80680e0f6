// `hwaccel serve`: the Prometheus exporter. What GET /metrics, /registry and
// /healthz answer; the server itself (limits, TLS, auth, the graceful stop on
// SIGTERM) is http_server.cpp.
#include "commands.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <sys/stat.h>
#include <unistd.h>

import hwaccel;

#include "detect_builder.hpp"
#include "http_server.hpp"
#include "web_files.hpp"

namespace hwaccel::cli {
namespace {

struct ServeArgs {
  DetectArgs detect;
  HttpServerOptions http;
  int request_timeout_s = 10;
  int inventory_ttl_s = 60;
  std::string basic_auth_file;
  std::string web_folder;
  std::string baseline;
  std::string fleet_file;
  int sd_port = 9464;
  double thermal_horizon_s = 300;
  bool no_watch = false;
  bool advertise = false;
  std::string advertise_name;  // default: "hwaccel on HOST"
};

// `--advertise`: the exporter's DNS-SD services, published while it runs.
CommandResult<MdnsAdvertisement> start_advertisement(const ServeArgs& args, std::uint16_t port, bool loopback) {
  const auto live = make_live_system();
  MdnsAdvertisement::Options o;
  o.helper = mdns_helper(*live);
  o.port = port;
  o.name = args.advertise_name;
  if (o.name.empty()) {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    o.name = text::cat("hwaccel on ", host);
    if (o.name.size() > 63) o.name.resize(63);  // a DNS label
  }
  o.on_message = [](std::string_view line) { note("serve", text::cat("mDNS: ", line)); };
  if (loopback)
    note("serve", "--advertise with a loopback --listen: only this host can reach the exporter at the addresses Avahi "
                  "publishes");
  auto started = MdnsAdvertisement::start(std::move(o));
  if (!started) return failure(text::cat("--advertise: ", started.error().message));
  return std::move(*started);
}

// GET /sd: Prometheus http_sd targets of the fleet file, read at each
// request (Prometheus asks once a minute by default), so a rescan that
// replaces the file is served at once.
HttpResponse service_discovery(const std::string& fleet_file, int port) {
  HttpResponse r;
  if (fleet_file.empty()) {
    r.status = 404;
    r.body = "not found: /sd needs hwaccel serve --fleet FILE\n";
    return r;
  }
  auto content = read_file(fleet_file, std::size_t{256} << 20);
  auto fleet = content ? fleet_from_json(*content) : Result<Fleet>(fail(ErrorKind::io_error, content.error().message));
  if (!fleet) {
    r.status = 503;
    r.body = text::cat("the fleet file cannot be read: ", fleet.error().message, "\n");
    return r;
  }
  r.content_type = "application/json";
  r.body = prometheus_targets(*fleet, static_cast<std::uint16_t>(port)) + "\n";
  return r;
}

// The accelerators this node's entry of a baseline has (a fleet or registry
// file, as `fleet check --baseline` reads): its own host's entry, else the
// only one.
CommandResult<std::uint32_t> baseline_accelerators(const std::string& file, const std::string& host) {
  auto content = read_file(file, std::size_t{256} << 20);
  if (!content) return tl::unexpected(content.error());
  auto fleet = fleet_from_json(*content);
  if (!fleet) return failure("--baseline " + file + ": " + fleet.error().message);
  const FleetNode* node = fleet->find(host);
  if (!node && fleet->nodes.size() == 1) node = &fleet->nodes.front();
  if (!node) return failure("--baseline " + file + ": no node " + host + " and more than one to choose from");
  if (!node->registry) return failure("--baseline " + file + ": node " + node->host + " has no inventory");
  std::uint32_t n = 0;
  for (const auto& d : node->registry->devices()) n += d.family != Family::cpu;
  return n;
}

constexpr std::string_view endpoints = "/metrics /registry /telemetry /healthz /sd";

// GET /telemetry: a sample with the devices' processes (what `hwaccel top
// --hosts` reads), taken once for every request that arrives while it is
// taken, and shared for a second: walking /proc on each of many viewers'
// requests would cost more than the scrape.
class ProcessSamples {
 public:
  ProcessSamples(TelemetryCollector& collector, const System& system, TelemetryOptions options)
      : collector_(collector), system_(system), options_(std::move(options)) {
    options_.processes = true;
    if (!options_.slow_tools) options_.slow_tools = std::make_shared<SlowToolCache>();
  }
  std::string json() {
    const std::lock_guard lock(mutex_);
    const auto now = std::chrono::steady_clock::now();
    if (json_.empty() || now - taken_ > std::chrono::seconds(1)) {
      json_ = to_json(sample_telemetry(*collector_.registry(), system_, options_)) + "\n";
      taken_ = std::chrono::steady_clock::now();
    }
    return json_;
  }

 private:
  TelemetryCollector& collector_;
  const System& system_;
  TelemetryOptions options_;
  std::mutex mutex_;
  std::string json_;
  std::chrono::steady_clock::time_point taken_{};
};

// What each path answers; the server has checked the method and the credentials.
HttpResponse respond(TelemetryCollector& collector, ProcessSamples& processes, bool pretty_registry, const WebFiles* web,
                     const ServeArgs& args, const HttpRequest& request) {
  if (request.path == "/sd") return service_discovery(args.fleet_file, args.sd_port);
  HttpResponse r;
  if (const WebFile* file = web ? web->find(request.path) : nullptr) {
    // The page and its module; it asks /registry for this node's devices.
    r.content_type = file->content_type;
    r.body = file->body;
    r.headers = {{"X-Content-Type-Options", "nosniff"}, {"Cache-Control", "no-cache"}};
  } else if (request.path == "/metrics") {
    const auto format = request.accept.find("application/openmetrics-text") != std::string_view::npos
                            ? MetricsFormat::openmetrics
                            : MetricsFormat::prometheus_text;
    r.content_type = std::string(content_type(format));
    r.body = collector.scrape(format);
  } else if (request.path == "/registry") {
    r.content_type = "application/json";
    r.body = to_json(*collector.registry(), JsonOptions{.pretty = pretty_registry});
    if (!r.body.ends_with('\n')) r.body += '\n';
  } else if (request.path == "/telemetry") {
    r.content_type = "application/json";
    r.body = processes.json();
  } else if (request.path == "/healthz") {
    r.body = "ok\n";
  } else if (request.path == "/") {
    r.body = text::cat("hwaccel exporter: ", endpoints, " (--web DIR serves the planner page here)\n");
  } else {
    r.status = 404;
    r.body = text::cat("not found: ", endpoints, web ? " and the planner page's files" : "", "\n");
  }
  return r;
}

int run_serve(const ServeArgs& args) {
  const auto settings = detect_settings(args.detect);
  if (!settings) return fail_with("serve", settings.error());
  auto builder = make_builder(args.detect);
  if (!builder) return fail_with("serve", builder.error());
  if (!parse_listen_address(args.http.listen))
    return fail_with("serve", "--listen: '" + args.http.listen + "' is not HOST:PORT (127.0.0.1:9464, [::1]:9464)",
                     exit_usage);
  if (args.http.tls_cert.empty() != args.http.tls_key.empty())
    return fail_with("serve", "give both --tls-cert and --tls-key, or neither", exit_usage);
  HttpServerOptions http = args.http;
  http.request_timeout = std::chrono::seconds(args.request_timeout_s);
  http.server = text::cat("hwaccel/", library_version());
  if (!args.basic_auth_file.empty()) {
    auto credentials = read_credentials(args.basic_auth_file, "--basic-auth-file");
    if (!credentials) return fail_with("serve", credentials.error());
    http.credentials = std::move(*credentials);
  }

  std::optional<WebFiles> web;
  if (!args.web_folder.empty()) {
    auto loaded = WebFiles::load(args.web_folder);
    if (!loaded) return fail_with("serve", loaded.error());
    web = std::move(*loaded);
  }

  auto opened = machine_system(args.detect);
  if (!opened) return fail_with("serve", opened.error());
  const std::unique_ptr<System> system = std::move(*opened);
  CollectorOptions options;
  options.inventory_ttl = std::chrono::seconds(args.inventory_ttl_s);
  options.detect = builder->options();
  options.telemetry.tool_timeout = settings->tool_timeout;
  options.thermal_horizon = std::chrono::seconds(static_cast<std::int64_t>(args.thermal_horizon_s));
  options.on_thermal_warning = [](const ThermalWarning& w) {
    note("serve", text::cat("health: ", w.device_id, " ", w.sensor, " sensor at ", std::round(w.celsius), " C rises ",
                            std::round(w.degrees_per_minute * 10) / 10, " C a minute: its slowdown temperature (",
                            std::round(w.slowdown_celsius), " C) in about ", w.eta.count(), " s"));
  };
  if (!args.baseline.empty()) {
    const auto inventory = builder->detect(*system);
    auto expected = baseline_accelerators(args.baseline, inventory.system().host.value_or("localhost"));
    if (!expected) return fail_with("serve", expected.error());
    options.baseline_accelerators = *expected;
  }
  TelemetryCollector collector(*system, options);

  ProcessSamples processes(collector, *system, options.telemetry);
  const WebFiles* page = web ? &*web : nullptr;
  auto server = HttpServer::start(http, [&collector, &processes, pretty = args.detect.pretty, page, &args](const HttpRequest& request) {
    return respond(collector, processes, pretty, page, args, request);
  });
  if (!server)
    return fail_with("serve", server.error().message,
                     server.error().kind == ErrorKind::invalid_input ? exit_usage : exit_failure);
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
    // Health reports become hwaccel_health_events_total (the alert rules' Xid alerts).
    watch.on_change = [&collector](const RegistryChange& change) {
      for (const auto& e : change.events)
        if (e.health)
          collector.count_health_event({e.id.empty() ? e.health->pci_bus_id.value_or(e.identity) : e.id, e.health->source,
                                        e.health->code ? std::to_string(*e.health->code) : std::string(),
                                        std::string(to_string(e.health->severity))});
    };
    if (auto started = Watcher::start(*system, std::move(watch)))
      watcher = std::move(*started);
    else
      note("serve", text::cat("hot-plug events not followed (the inventory is re-detected every ", args.inventory_ttl_s,
                              " s): ", started.error().message));
  }

  std::optional<MdnsAdvertisement> advertisement;
  if (args.advertise) {
    auto started = start_advertisement(args, (*server)->port(), (*server)->loopback());
    if (!started) return fail_with("serve", started.error());
    advertisement = std::move(*started);
  }

  if (page) note("serve", text::cat("the planner page is at ", (*server)->url(), "/"));
  note("serve", text::cat("listening on ", (*server)->url(), "/metrics",
                          (*server)->loopback() ? "" : " (not loopback: consider --tls-cert and --basic-auth-file)"));
  (*server)->run();
  if (watcher) watcher->stop();
  advertisement.reset();  // the services are withdrawn before the process says it stopped
  note("serve", "stopped");
  return 0;
}

}  // namespace

Command add_serve_command(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  auto* cmd = app.add_subcommand("serve", "Serve every device's telemetry as a Prometheus exporter over HTTP");
  cmd->footer(
      "GET /metrics (Prometheus text, or OpenMetrics when the request's Accept asks for it), /registry (the\n"
      "registry JSON), /telemetry (a sample with the devices' processes, as `hwaccel top --json`; what\n"
      "`hwaccel top --hosts` reads) and /healthz. The inventory is re-detected every --inventory-ttl seconds,\n"
      "and at once after a hot-plug or health event from the kernel (docs/watch.md; --no-watch turns that off); telemetry is\n"
      "read at each scrape (concurrent scrapes share one reading). Loopback by default; beyond it, use\n"
      "--tls-cert/--tls-key and --basic-auth-file (docs/metrics.md). At most --max-connections connections\n"
      "are served at once: more are answered 503 and closed, never queued. Only GET and HEAD; requests with\n"
      "a body or headers over 8 KiB are refused; a client silent for --request-timeout seconds is dropped.\n"
      "SIGTERM or SIGINT stop it after the requests in flight (at most 2 s). --web DIR serves the planner page\n"
      "(the assembled build-wasm/web, docs/web.md) at /, pre-filled with this node's devices from /registry;\n"
      "its files are read once at start and served from memory.\n"
      "\n"
      "Examples:\n"
      "  hwaccel serve\n"
      "  hwaccel serve --listen 0.0.0.0:9464 --tls-cert cert.pem --tls-key key.pem --basic-auth-file auth\n"
      "  hwaccel serve --listen 127.0.0.1:0 --fixture fixtures/machines/dgx-h100-8x-nvswitch\n"
      "\n" +
      std::string(common_help_footer));
  cmd->add_option("--listen", args->http.listen, "HOST:PORT to listen on (port 0: any free port, printed on stderr)")
      ->capture_default_str();
  add_machine_options(*cmd, args->detect, "Serve a captured machine (fixture folder) instead of this one");
  cmd->add_option("--max-connections", args->http.max_connections, "Connections served at once")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}))
      ->capture_default_str();
  cmd->add_option("--request-timeout", args->request_timeout_s, "Seconds a request may take to arrive or be sent")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  cmd->add_option("--baseline", args->baseline,
                  "A fleet or registry file (what `fleet check --baseline` takes): export its accelerator count for "
                  "this node as hwaccel_baseline_accelerators, for the missing-device alert");
  cmd->add_option("--thermal-horizon", args->thermal_horizon_s,
                  "Warn (hwaccel_device_thermal_slowdown_eta_seconds, a logged health line) when a device's temperature "
                  "trend reaches its slowdown threshold within this many seconds; 0: no trend")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("--fleet", args->fleet_file,
                  "A fleet file (hwaccel fleet scan): GET /sd answers Prometheus http_sd targets of its nodes");
  cmd->add_option("--sd-port", args->sd_port, "The port /sd gives the fleet's exporters")->check(CLI::Range(1, 65535))
      ->capture_default_str();
  cmd->add_option("--inventory-ttl", args->inventory_ttl_s, "Seconds between re-detections of the inventory")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  cmd->add_option("--threads", args->http.threads, "Threads serving requests")->check(CLI::Range(1u, 256u))->capture_default_str();
  cmd->add_option("--tls-cert", args->http.tls_cert, "PEM certificate chain: serve HTTPS")->check(CLI::ExistingFile);
  cmd->add_option("--tls-key", args->http.tls_key, "PEM private key of --tls-cert")->check(CLI::ExistingFile);
  cmd->add_option("--basic-auth-file", args->basic_auth_file,
                  "File whose first line is USER:PASSWORD (mode 600): require HTTP basic auth")
      ->check(CLI::ExistingFile);
  cmd->add_option("--web", args->web_folder, "Serve the planner page's folder (build-wasm/web) at /")
      ->check(CLI::ExistingDirectory);
  cmd->add_flag("--pretty", args->detect.pretty, "Indent /registry's JSON");
  cmd->add_flag("--advertise", args->advertise,
                "Publish the exporter on the local network through the Avahi daemon: _hwaccel._tcp (TXT "
                "path=/registry, what `fleet scan --mdns` finds) and _prometheus-http._tcp (TXT path=/metrics)");
  cmd->add_option("--advertise-name", args->advertise_name,
                  "With --advertise: the service name (default \"hwaccel on HOST\"; Avahi adds \" #2\" when taken)")
      ->check([](const std::string& v) { return v.empty() || v.size() > 63 ? std::string("1 to 63 bytes") : std::string(); });
  cmd->add_flag("--no-watch", args->no_watch, "Do not follow kernel hot-plug events (re-detect on the TTL only)");
  add_log_options(*cmd, args->detect.log);
  return {cmd, [args] { return run_serve(*args); }};
}

}  // namespace hwaccel::cli
