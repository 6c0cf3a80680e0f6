// Fitting runtime profiles to decode measurements: the decode step of a
// measured setting split into terms linear in the profile's parameters,
// and a bound-constrained least-squares fit of those parameters.
module;
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.plan;
import :internals;

namespace hwaccel {

using namespace planner_detail;

double DecodeTerms::step_s(const RuntimeProfile& profile) const noexcept {
  const double step = memory_s_at_peak / profile.bandwidth_efficiency +
                      dequant_s_per_op * profile.dequant_ops_per_weight +
                      layers * profile.layer_overhead_us * 1e-6 + fixed_s;
  return std::max(step, memory_s_at_peak + fixed_s);
}

Result<DecodeTerms> decode_terms(const DecodeMeasurement& m) {
  if (!(m.tokens_per_s > 0) || !std::isfinite(m.tokens_per_s))
    return fail(ErrorKind::invalid_input, text::cat("a measurement of ", m.model, " on ", m.device, " has no speed"));
  if (m.devices == 0 || m.devices > 64)
    return fail(ErrorKind::invalid_input, text::cat("a measurement must use 1..64 devices, got ", m.devices));
  auto registry = hypothetical_registry(text::cat(m.devices, "x", m.device));
  if (!registry) return fail(registry.error());
  auto model = catalogue_model(m.model);
  if (!model) return fail(model.error());
  InferenceSettings s;
  s.quantization = m.quantization;
  // The KV cache a generated token reads grows from the prompt to the end: its mean.
  s.context = std::max<std::uint64_t>(1, m.prompt_tokens + m.generated_tokens / 2);
  s.allow_cpu_offload = false;
  s.objective = PlanObjective::latency;
  // The measurement ran, so the model fitted: no headroom is held back.
  s.reserve_fraction = 0;
  if (auto v = s.validate(*model); !v) return fail(v.error());
  const QuantizationLevel kv_type = default_kv_cache_type(m.quantization);
  auto cost = cost_model(*model, m.quantization, kv_type, s.context, 1);
  if (!cost) return fail(cost.error());
  cost->flash_attention = m.flash_attention;
  const Machines machines = machines_of(*registry);
  Fleet f = gather(machines, m.quantization, s.reserve_fraction);
  // The terms depend on the runtime only through how it reads the KV cache.
  cost->profile = &runtime_profile(m.runtime);
  join_pcie_domains(f, *cost->profile);
  const Layout l = place(f, *cost, s);
  if (!l.fits)
    return fail(ErrorKind::unsupported, text::cat(m.model, " at ", to_string(m.quantization), " does not fit ",
                                                  m.devices, " x ", m.device));
  const DecodeTime d = decode_time(f, *cost, l.replicas.front());
  if (!d.step_s) return fail(ErrorKind::unsupported, text::cat(m.device, " has no known memory bandwidth"));
  return d.terms;
}

namespace {

// The 0-based q-quantile of sorted values, interpolated linearly.
double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 1.0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto i = static_cast<std::size_t>(std::floor(pos));
  const std::size_t j = std::min(i + 1, sorted.size() - 1);
  return sorted[i] + (sorted[j] - sorted[i]) * (pos - static_cast<double>(i));
}

struct FitRow {
  DecodeTerms terms;
  double seconds = 0;     // measured, per token
  std::size_t device = 0;  // index of the row's device, for cross-validation
};

// The terms' coefficients of the fitted variables: 1/efficiency, ops per
// weight, seconds per layer.
std::array<double, 3> coefficients(const DecodeTerms& t) { return {t.memory_s_at_peak, t.dequant_s_per_op, t.layers}; }

// `base` with the fitted variables (1/efficiency, ops per weight, seconds per layer).
RuntimeProfile with_variables(const RuntimeProfile& base, const std::array<double, 3>& v) {
  RuntimeProfile out = base;
  out.bandwidth_efficiency = 1.0 / v[0];
  out.dequant_ops_per_weight = v[1];
  out.layer_overhead_us = v[2] * 1e6;
  return out;
}

// Minimises the squared relative error of the step time over the rows
// `use` selects: each row divided by its measured time. Bounds:
// 1/efficiency >= 1, the others >= 0. The problem is a convex quadratic
// with bounds on three variables, so its optimum is the best feasible
// solution among the 8 choices of which bounds hold with equality.
// `at_bound` gives each variable's value when its bound holds; with
// `efficiency_fixed` the first variable always stays there.
std::array<double, 3> solve(const std::vector<FitRow>& rows, const std::vector<bool>& use,
                            const std::array<double, 3>& at_bound, bool efficiency_fixed) {
  constexpr std::array<double, 3> lower = {1.0, 0.0, 0.0};
  std::array<double, 3> best = at_bound;
  double best_cost = std::numeric_limits<double>::infinity();
  for (unsigned fixed_mask = 0; fixed_mask < 8; ++fixed_mask) {
    if (efficiency_fixed && !(fixed_mask & 1u)) continue;
    std::array<std::size_t, 3> free{};
    std::size_t n = 0;
    for (std::size_t k = 0; k < 3; ++k)
      if (!(fixed_mask & (1u << k))) free[n++] = k;
    std::array<std::array<double, 4>, 3> a{};  // normal equations, augmented
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (!use[i]) continue;
      const FitRow& r = rows[i];
      const auto x = coefficients(r.terms);
      const double w = 1.0 / r.seconds;
      double target = (r.seconds - r.terms.fixed_s) * w;
      for (std::size_t k = 0; k < 3; ++k)
        if (fixed_mask & (1u << k)) target -= at_bound[k] * x[k] * w;
      for (std::size_t p = 0; p < n; ++p) {
        for (std::size_t q = 0; q < n; ++q) a[p][q] += x[free[p]] * w * x[free[q]] * w;
        a[p][3] += x[free[p]] * w * target;
      }
    }
    // Gauss-Jordan elimination with partial pivoting; a singular system (a
    // term that is zero in every row) is skipped: a choice with that
    // variable at its bound covers it.
    std::array<double, 3> solution = at_bound;
    bool singular = false;
    for (std::size_t col = 0; col < n && !singular; ++col) {
      std::size_t pivot = col;
      for (std::size_t r = col + 1; r < n; ++r)
        if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
      if (std::abs(a[pivot][col]) < 1e-300) {
        singular = true;
        break;
      }
      std::swap(a[col], a[pivot]);
      for (std::size_t r = 0; r < n; ++r) {
        if (r == col) continue;
        const double factor = a[r][col] / a[col][col];
        for (std::size_t c = col; c < 4; ++c) a[r][c] -= factor * a[col][c];
      }
    }
    if (singular) continue;
    bool feasible = true;
    for (std::size_t p = 0; p < n; ++p) {
      solution[free[p]] = a[p][3] / a[p][p];
      feasible &= std::isfinite(solution[free[p]]) && solution[free[p]] >= lower[free[p]];
    }
    if (!feasible) continue;
    double cost = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (!use[i]) continue;
      const FitRow& r = rows[i];
      const auto x = coefficients(r.terms);
      const double predicted = solution[0] * x[0] + solution[1] * x[1] + solution[2] * x[2] + r.terms.fixed_s;
      const double e = (predicted - r.seconds) / r.seconds;
      cost += e * e;
    }
    if (cost < best_cost) {
      best_cost = cost;
      best = solution;
    }
  }
  return best;
}


}  // namespace

Result<RuntimeProfile> fit_decode_profile(const RuntimeProfile& base, std::span<const DecodeMeasurement> measurements) {
  std::vector<FitRow> rows;
  std::vector<std::string_view> devices;
  rows.reserve(measurements.size());
  for (const auto& m : measurements) {
    auto terms = decode_terms(m);
    if (!terms) continue;
    const auto known = std::find(devices.begin(), devices.end(), m.device);
    const std::size_t device = static_cast<std::size_t>(known - devices.begin());
    if (known == devices.end()) devices.push_back(m.device);
    rows.push_back({*terms, 1.0 / m.tokens_per_s, device});
  }
  if (rows.size() < 3)
    return fail(ErrorKind::invalid_input,
                text::cat("fitting needs at least 3 measurements that plan, got ", rows.size(), " of ", measurements.size()));
  // With only quantized rows (or only 16-bit ones) the bandwidth and
  // dequantization terms grow together and cannot be told apart: the
  // efficiency then stays at the base profile's.
  const auto quantized_rows =
      std::count_if(rows.begin(), rows.end(), [](const FitRow& r) { return r.terms.dequant_s_per_op > 0; });
  const bool efficiency_fixed = quantized_rows == 0 || quantized_rows == static_cast<std::ptrdiff_t>(rows.size());
  std::array<double, 3> at_bound = {1.0, 0.0, 0.0};
  if (efficiency_fixed) at_bound[0] = 1.0 / std::clamp(base.bandwidth_efficiency, 0.05, 1.0);
  const std::array<double, 3> best = solve(rows, std::vector<bool>(rows.size(), true), at_bound, efficiency_fixed);
  RuntimeProfile out = with_variables(base, best);
  // The interval comes from cross-validated residuals: each device's rows
  // predicted by a fit on the other devices' rows, since residuals of the
  // rows a fit has seen understate the error on a device it has not.
  std::vector<double> ratios;  // measured speed / predicted speed
  ratios.reserve(rows.size());
  for (std::size_t d = 0; d < devices.size(); ++d) {
    std::vector<bool> use(rows.size());
    std::size_t others = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) others += use[i] = rows[i].device != d;
    const RuntimeProfile fold = others >= 3 ? with_variables(base, solve(rows, use, at_bound, efficiency_fixed)) : out;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (!use[i]) ratios.push_back(rows[i].terms.step_s(fold) / rows[i].seconds);
  }
  std::sort(ratios.begin(), ratios.end());
  out.interval_low = quantile(ratios, 0.1);
  out.interval_high = quantile(ratios, 0.9);
  out.calibration_points = static_cast<std::uint32_t>(rows.size());
  return out;
}

}  // namespace hwaccel
