// Thermal headroom over time: a least-squares line through each device's
// recent headroom, and a warning when it reaches zero within the horizon.
module;
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>
module hwaccel.telemetry;

namespace hwaccel {

namespace {

// The least reading-to-threshold gap of a device and the sensor it is on.
std::optional<std::pair<const TemperatureReading*, double>> tightest(const DeviceTelemetry& t) {
  std::optional<std::pair<const TemperatureReading*, double>> out;
  for (const TemperatureReading& r : t.temperatures)
    if (r.slowdown_celsius && (!out || *r.slowdown_celsius - r.celsius < out->second))
      out = std::pair{&r, *r.slowdown_celsius - r.celsius};
  return out;
}

}  // namespace

std::vector<ThermalWarning> ThermalTrend::add(const TelemetrySample& sample) {
  std::vector<ThermalWarning> out;
  for (const DeviceTelemetry& t : sample.devices) {
    const auto tight = tightest(t);
    if (!tight) continue;
    Track& track = tracks_[t.device_id];
    if (!track.points.empty() && sample.taken_at <= track.points.back().at) continue;
    track.points.push_back({sample.taken_at, tight->second});
    std::erase_if(track.points, [&](const Point& p) { return sample.taken_at - p.at > window_; });
    const std::size_t n = track.points.size();
    if (n < 3) continue;  // two points make a line out of noise
    // Headroom = a + b x seconds since the first point.
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    const auto origin = track.points.front().at;
    for (const Point& p : track.points) {
      const double x = std::chrono::duration<double>(p.at - origin).count();
      sx += x;
      sy += p.headroom;
      sxx += x * x;
      sxy += x * p.headroom;
    }
    const double denominator = static_cast<double>(n) * sxx - sx * sx;
    if (denominator <= 0) continue;
    const double slope = (static_cast<double>(n) * sxy - sx * sy) / denominator;  // degrees of headroom per second
    const double now_x = std::chrono::duration<double>(sample.taken_at - origin).count();
    const double fitted_now = (sy - slope * sx) / static_cast<double>(n) + slope * now_x;
    const double headroom = std::min(tight->second, fitted_now);
    const bool warming = slope < 0;
    const double eta_s = headroom <= 0 ? 0.0 : warming ? headroom / -slope : std::numeric_limits<double>::infinity();
    const bool within = eta_s <= static_cast<double>(horizon_.count());
    const bool warned = track.latest.has_value();
    track.latest.reset();
    if (!within) continue;
    ThermalWarning w;
    w.device_id = t.device_id;
    w.sensor = tight->first->sensor;
    w.celsius = tight->first->celsius;
    w.slowdown_celsius = *tight->first->slowdown_celsius;
    w.degrees_per_minute = -slope * 60;
    w.eta = std::chrono::seconds(static_cast<std::int64_t>(std::lround(eta_s)));
    track.latest = w;
    if (!warned) out.push_back(std::move(w));
  }
  return out;
}

std::vector<ThermalWarning> ThermalTrend::approaching() const {
  std::vector<ThermalWarning> out;
  for (const auto& [id, track] : tracks_)
    if (track.latest) out.push_back(*track.latest);
  return out;
}

}  // namespace hwaccel
