// hwaccel-mdns: DNS-SD through the Avahi daemon, for `hwaccel serve
// --advertise` and `hwaccel fleet scan --mdns` (docs/fleet.md). A small
// dynamic program apart from the CLI: libavahi-client speaks D-Bus, and
// libdbus needs libsystemd, which Debian ships as a shared library only, so
// the static CLI cannot link it. The CLI runs this program instead.
//
//   hwaccel-mdns browse TYPE [--timeout-ms N]
//       Resolves every TYPE service on every interface and prints one JSON
//       object per service and address on stdout; exits once the daemon has
//       said "all for now" and every resolution has ended, or at the timeout.
//   hwaccel-mdns publish --name NAME --port PORT TYPE [KEY=VALUE...] [TYPE [KEY=VALUE...]]...
//       Publishes the services (each followed by its TXT pairs) under NAME, or
//       the name Avahi suggests when NAME is taken; prints one JSON line per
//       name established; runs until its standard input closes (the parent's
//       life-line) or it is signalled. A daemon that goes away and comes back
//       gets the services again.
//
// Exit status: 0 done, 1 the daemon cannot be reached or refused, 2 usage.
#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-client/publish.h>
#include <avahi-common/address.h>
#include <avahi-common/alternative.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/simple-watch.h>
#include <avahi-common/strlst.h>
#include <avahi-common/timeval.h>
#include <net/if.h>
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

// A hostile LAN can announce any number of services: beyond this many
// resolutions the browse stops and says so.
constexpr std::size_t max_services = 4096;
constexpr int max_timeout_ms = 600'000;

// Names and TXT values come from the network: JSON-escaped, with bytes that
// are not UTF-8 replaced by U+FFFD, so that the reader's strict parser takes
// every line.
std::string json_string(std::string_view in) {
  std::string out = "\"";
  const auto* s = reinterpret_cast<const unsigned char*>(in.data());
  const std::size_t n = in.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    std::size_t len = 0;
    std::uint32_t min = 0;
    if (c >= 0xc2 && c <= 0xdf) len = 2, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef) len = 3, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4) len = 4, min = 0x10000;
    bool ok = len != 0 && i + len <= n;
    std::uint32_t cp = len ? c & (0x7f >> len) : 0;
    for (std::size_t k = 1; ok && k < len; ++k) {
      if ((s[i + k] & 0xc0) != 0x80) ok = false;
      else cp = (cp << 6) | (s[i + k] & 0x3f);
    }
    if (ok && (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))) ok = false;
    if (ok) {
      out.append(in.substr(i, len));
      i += len;
    } else {
      out += "\\ufffd";
      ++i;
    }
  }
  out += '"';
  return out;
}

void emit(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void warn(const std::string& what) { std::fprintf(stderr, "hwaccel-mdns: %s\n", what.c_str()); }

std::string interface_name(AvahiIfIndex index) {
  char name[IF_NAMESIZE] = {};
  if (index >= 0 && ::if_indextoname(static_cast<unsigned>(index), name)) return name;
  return std::to_string(index);
}

std::string txt_json(AvahiStringList* txt) {
  std::string out = "{";
  bool first = true;
  for (AvahiStringList* l = txt; l; l = avahi_string_list_get_next(l)) {
    char* key = nullptr;
    char* value = nullptr;
    std::size_t size = 0;
    if (avahi_string_list_get_pair(l, &key, &value, &size) != 0) continue;
    if (!first) out += ',';
    first = false;
    out += json_string(key);
    out += ':';
    out += value ? json_string(std::string_view(value, size)) : "null";
    avahi_free(key);
    avahi_free(value);
  }
  out += '}';
  return out;
}

struct PollDeleter {
  void operator()(AvahiSimplePoll* p) const { avahi_simple_poll_free(p); }
};
struct ClientDeleter {
  void operator()(AvahiClient* c) const { avahi_client_free(c); }
};

std::optional<int> whole(std::string_view text, int low, int high) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < low || v > high) return std::nullopt;
  return v;
}

// --- browse -----------------------------------------------------------------

struct Browse {
  AvahiSimplePoll* poll = nullptr;
  AvahiClient* client = nullptr;
  std::size_t pending = 0;   // resolutions under way
  std::size_t started = 0;   // resolutions begun
  bool all_for_now = false;
  bool failed = false;
  bool capped = false;

  void maybe_done() {
    if (all_for_now && pending == 0) avahi_simple_poll_quit(poll);
  }
};

void on_resolved(AvahiServiceResolver* r, AvahiIfIndex interface, AvahiProtocol protocol, AvahiResolverEvent event,
                 const char* name, const char* type, const char* domain, const char* host, const AvahiAddress* address,
                 std::uint16_t port, AvahiStringList* txt, AvahiLookupResultFlags, void* data) {
  auto& b = *static_cast<Browse*>(data);
  if (event == AVAHI_RESOLVER_FOUND && address) {
    char text[AVAHI_ADDRESS_STR_MAX] = {};
    avahi_address_snprint(text, sizeof text, address);
    emit("{\"name\":" + json_string(name ? name : "") + ",\"type\":" + json_string(type ? type : "") +
         ",\"domain\":" + json_string(domain ? domain : "") + ",\"interface\":" + json_string(interface_name(interface)) +
         ",\"protocol\":\"" + (protocol == AVAHI_PROTO_INET6 ? "ipv6" : "ipv4") + "\",\"host\":" +
         json_string(host ? host : "") + ",\"address\":" + json_string(text) + ",\"port\":" + std::to_string(port) +
         ",\"txt\":" + txt_json(txt) + "}");
  } else {
    warn(std::string("service ") + json_string(name ? name : "") + " on " + interface_name(interface) +
         " not resolved: " + avahi_strerror(avahi_client_errno(b.client)));
  }
  avahi_service_resolver_free(r);
  --b.pending;
  b.maybe_done();
}

void on_browsed(AvahiServiceBrowser*, AvahiIfIndex interface, AvahiProtocol protocol, AvahiBrowserEvent event,
                const char* name, const char* type, const char* domain, AvahiLookupResultFlags, void* data) {
  auto& b = *static_cast<Browse*>(data);
  switch (event) {
    case AVAHI_BROWSER_NEW:
      if (b.started >= max_services) {
        b.capped = true;
        return;
      }
      if (avahi_service_resolver_new(b.client, interface, protocol, name, type, domain, protocol, AvahiLookupFlags{},
                                     on_resolved, &b)) {
        ++b.pending;
        ++b.started;
      } else {
        warn(std::string("cannot resolve ") + json_string(name ? name : "") + ": " +
             avahi_strerror(avahi_client_errno(b.client)));
      }
      return;
    case AVAHI_BROWSER_ALL_FOR_NOW:
      b.all_for_now = true;
      b.maybe_done();
      return;
    case AVAHI_BROWSER_FAILURE:
      warn(std::string("browsing failed: ") + avahi_strerror(avahi_client_errno(b.client)));
      b.failed = true;
      avahi_simple_poll_quit(b.poll);
      return;
    case AVAHI_BROWSER_REMOVE:
    case AVAHI_BROWSER_CACHE_EXHAUSTED:
      return;
  }
}

void on_deadline(AvahiTimeout*, void* data) {
  auto& b = *static_cast<Browse*>(data);
  warn(b.all_for_now ? std::to_string(b.pending) + " resolutions still under way at the timeout"
                     : std::string("the daemon had not finished browsing at the timeout"));
  avahi_simple_poll_quit(b.poll);
}

void on_browse_client(AvahiClient* c, AvahiClientState state, void* data) {
  auto& b = *static_cast<Browse*>(data);
  if (state == AVAHI_CLIENT_FAILURE) {
    warn(std::string("the Avahi daemon went away: ") + avahi_strerror(avahi_client_errno(c)));
    b.failed = true;
    avahi_simple_poll_quit(b.poll);
  }
}

int browse(std::string_view type, int timeout_ms) {
  const std::unique_ptr<AvahiSimplePoll, PollDeleter> poll(avahi_simple_poll_new());
  if (!poll) return warn("out of memory"), 1;
  Browse b;
  b.poll = poll.get();
  int error = 0;
  const std::unique_ptr<AvahiClient, ClientDeleter> client(
      avahi_client_new(avahi_simple_poll_get(poll.get()), AvahiClientFlags{}, on_browse_client, &b, &error));
  if (!client)
    return warn(std::string("cannot reach the Avahi daemon (avahi-daemon, over the D-Bus system bus): ") +
                avahi_strerror(error)),
           1;
  b.client = client.get();
  const std::string type_text(type);
  if (!avahi_service_browser_new(client.get(), AVAHI_IF_UNSPEC, AVAHI_PROTO_UNSPEC, type_text.c_str(), nullptr,
                                 AvahiLookupFlags{}, on_browsed, &b))
    return warn(std::string("cannot browse ") + type_text + ": " + avahi_strerror(avahi_client_errno(client.get()))), 1;
  timeval deadline{};
  avahi_elapse_time(&deadline, static_cast<unsigned>(timeout_ms), 0);
  const AvahiPoll* api = avahi_simple_poll_get(poll.get());
  api->timeout_new(api, &deadline, on_deadline, &b);
  avahi_simple_poll_loop(poll.get());
  if (b.capped) warn("more than " + std::to_string(max_services) + " services announced; the rest were not resolved");
  return b.failed ? 1 : 0;
}

// --- publish ----------------------------------------------------------------

struct Service {
  std::string type;
  std::vector<std::string> txt;
};

struct Publish {
  AvahiSimplePoll* poll = nullptr;
  AvahiClient* client = nullptr;
  AvahiEntryGroup* group = nullptr;
  std::string name;
  std::uint16_t port = 0;
  std::vector<Service> services;
  int status = 0;
};

void add_services(Publish& p);

void rename_and_retry(Publish& p) {
  char* alternative = avahi_alternative_service_name(p.name.c_str());
  warn("the name " + json_string(p.name) + " is taken; trying " + json_string(alternative));
  p.name = alternative;
  avahi_free(alternative);
  avahi_entry_group_reset(p.group);
  add_services(p);
}

void on_group(AvahiEntryGroup* g, AvahiEntryGroupState state, void* data) {
  auto& p = *static_cast<Publish*>(data);
  p.group = g;
  switch (state) {
    case AVAHI_ENTRY_GROUP_ESTABLISHED: {
      std::string types;
      for (const auto& s : p.services) types += (types.empty() ? "" : ",") + json_string(s.type);
      emit("{\"published\":" + json_string(p.name) + ",\"port\":" + std::to_string(p.port) + ",\"types\":[" + types +
           "]}");
      return;
    }
    case AVAHI_ENTRY_GROUP_COLLISION:
      rename_and_retry(p);
      return;
    case AVAHI_ENTRY_GROUP_FAILURE:
      warn(std::string("publishing failed: ") + avahi_strerror(avahi_client_errno(avahi_entry_group_get_client(g))));
      p.status = 1;
      avahi_simple_poll_quit(p.poll);
      return;
    case AVAHI_ENTRY_GROUP_UNCOMMITED:
    case AVAHI_ENTRY_GROUP_REGISTERING:
      return;
  }
}

void add_services(Publish& p) {
  if (!p.group) {
    p.group = avahi_entry_group_new(p.client, on_group, &p);
    if (!p.group) {
      warn(std::string("cannot make an entry group: ") + avahi_strerror(avahi_client_errno(p.client)));
      p.status = 1;
      avahi_simple_poll_quit(p.poll);
      return;
    }
  }
  if (!avahi_entry_group_is_empty(p.group)) return;
  for (const auto& s : p.services) {
    AvahiStringList* txt = nullptr;
    for (auto it = s.txt.rbegin(); it != s.txt.rend(); ++it) txt = avahi_string_list_add(txt, it->c_str());
    const int added = avahi_entry_group_add_service_strlst(p.group, AVAHI_IF_UNSPEC, AVAHI_PROTO_UNSPEC,
                                                           AvahiPublishFlags{}, p.name.c_str(), s.type.c_str(), nullptr,
                                                           nullptr, p.port, txt);
    avahi_string_list_free(txt);
    if (added == AVAHI_ERR_COLLISION) return rename_and_retry(p);
    if (added < 0) {
      warn("cannot publish " + s.type + ": " + avahi_strerror(added));
      p.status = 1;
      avahi_simple_poll_quit(p.poll);
      return;
    }
  }
  if (const int committed = avahi_entry_group_commit(p.group); committed < 0) {
    warn(std::string("cannot commit the services: ") + avahi_strerror(committed));
    p.status = 1;
    avahi_simple_poll_quit(p.poll);
  }
}

void on_publish_client(AvahiClient* c, AvahiClientState state, void* data) {
  auto& p = *static_cast<Publish*>(data);
  p.client = c;
  switch (state) {
    case AVAHI_CLIENT_S_RUNNING:
      add_services(p);
      return;
    case AVAHI_CLIENT_S_COLLISION:
    case AVAHI_CLIENT_S_REGISTERING:
      // The host name changed: the services are registered again once it is settled.
      if (p.group) avahi_entry_group_reset(p.group);
      return;
    case AVAHI_CLIENT_CONNECTING:
      warn("waiting for the Avahi daemon");
      return;
    case AVAHI_CLIENT_FAILURE:
      // With AVAHI_CLIENT_NO_FAIL a daemon that went away is a FAILURE with
      // DISCONNECTED: the client (and its group) is made again and waits.
      if (avahi_client_errno(c) == AVAHI_ERR_DISCONNECTED) {
        warn("the Avahi daemon went away; waiting for it to come back");
        avahi_client_free(c);
        p.client = nullptr;
        p.group = nullptr;
        int error = 0;
        if (!avahi_client_new(avahi_simple_poll_get(p.poll), AVAHI_CLIENT_NO_FAIL, on_publish_client, &p, &error)) {
          warn(std::string("cannot reach the Avahi daemon: ") + avahi_strerror(error));
          p.status = 1;
          avahi_simple_poll_quit(p.poll);
        }
        return;
      }
      warn(std::string("the Avahi daemon refused: ") + avahi_strerror(avahi_client_errno(c)));
      p.status = 1;
      avahi_simple_poll_quit(p.poll);
      return;
  }
}

void on_stdin(AvahiWatch*, int fd, AvahiWatchEvent, void* data) {
  auto& p = *static_cast<Publish*>(data);
  char buf[256];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  if (n <= 0) avahi_simple_poll_quit(p.poll);  // the parent is gone: the services go with it
}

int publish(Publish& p) {
  const std::unique_ptr<AvahiSimplePoll, PollDeleter> poll(avahi_simple_poll_new());
  if (!poll) return warn("out of memory"), 1;
  p.poll = poll.get();
  const AvahiPoll* api = avahi_simple_poll_get(poll.get());
  api->watch_new(api, STDIN_FILENO, static_cast<AvahiWatchEvent>(AVAHI_WATCH_IN | AVAHI_WATCH_HUP), on_stdin, &p);
  int error = 0;
  if (!avahi_client_new(api, AVAHI_CLIENT_NO_FAIL, on_publish_client, &p, &error))
    return warn(std::string("cannot reach the Avahi daemon: ") + avahi_strerror(error)), 1;
  avahi_simple_poll_loop(poll.get());
  if (p.client) avahi_client_free(p.client);  // withdraws the services
  return p.status;
}

int usage(const char* why) {
  std::fprintf(stderr,
               "hwaccel-mdns: %s\n"
               "usage: hwaccel-mdns browse TYPE [--timeout-ms N]\n"
               "       hwaccel-mdns publish --name NAME --port PORT TYPE [KEY=VALUE...] [TYPE [KEY=VALUE...]]...\n",
               why);
  return 2;
}

bool service_type(std::string_view t) { return t.starts_with('_') && (t.ends_with("._tcp") || t.ends_with("._udp")); }

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string_view> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  if (args.empty()) return usage("give browse or publish");
  if (args[0] == "browse") {
    if (args.size() < 2 || !service_type(args[1])) return usage("browse needs a service type (_hwaccel._tcp)");
    int timeout_ms = 3000;
    for (std::size_t i = 2; i < args.size(); ++i) {
      if (args[i] == "--timeout-ms" && i + 1 < args.size()) {
        const auto v = whole(args[++i], 1, max_timeout_ms);
        if (!v) return usage("--timeout-ms takes 1 to 600000");
        timeout_ms = *v;
      } else {
        return usage("unknown browse argument");
      }
    }
    return browse(args[1], timeout_ms);
  }
  if (args[0] == "publish") {
    Publish p;
    for (std::size_t i = 1; i < args.size(); ++i) {
      if (args[i] == "--name" && i + 1 < args.size()) {
        p.name = args[++i];
      } else if (args[i] == "--port" && i + 1 < args.size()) {
        const auto v = whole(args[++i], 1, 65535);
        if (!v) return usage("--port takes 1 to 65535");
        p.port = static_cast<std::uint16_t>(*v);
      } else if (service_type(args[i])) {
        p.services.push_back({std::string(args[i]), {}});
      } else if (args[i].find('=') != std::string_view::npos && !p.services.empty()) {
        p.services.back().txt.emplace_back(args[i]);
      } else {
        return usage("unknown publish argument");
      }
    }
    if (p.name.empty() || p.port == 0 || p.services.empty()) return usage("publish needs --name, --port and a type");
    if (p.name.size() > 63) return usage("a service name has at most 63 bytes (DNS label)");
    return publish(p);
  }
  return usage("give browse or publish");
}
