// The power model: what each device of a plan draws while it prefills and
// decodes, what a cap below its board limit costs in clocks and speed, and
// the energy per output token and per request (docs/planning.md, "Power and
// energy"). It reads the speed model's own terms (StageLoad), so power and
// speed never disagree about what bounds a step.
module;
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
module hwaccel.plan;
import :internals;

namespace hwaccel {

const PowerModel& default_power_model() noexcept {
  // Fitted on tests/data/energy/measurements.json's calibration rows (test
  // PowerModel.CalibrationRowsFitTheBuiltInModel); idle from the H100 SXM
  // capture (72.65 W of 700, fixtures/captures/nvidia-h100-firecracker-driver-580).
  static constexpr PowerModel model{
      .idle_share = 0.104,
      .busy_weight = 0.00,
      .memory_weight = 0.60,
      .compute_weight = 2.0,
      .watts_interval_low = 0.66,
      .watts_interval_high = 1.43,
  };
  return model;
}

namespace planner_detail {

namespace {

const PowerModel& model_of(const InferenceSettings& s) { return s.power_model ? *s.power_model : default_power_model(); }

// The stages' loads of one phase and the pipeline hops between them.
struct PhaseLoads {
  std::vector<StageLoad> stages;
  double hops_s = 0;
};

std::optional<PhaseLoads> loads_of(const Fleet& f, const CostModel& c, const Replica& r, bool prefill) {
  PhaseLoads out;
  out.stages.reserve(r.stages.size());
  for (const auto& st : r.stages) {
    auto load = prefill ? prefill_stage(f, c, r, st) : decode_stage(f, c, r, st);
    if (!load) return std::nullopt;
    out.stages.push_back(*load);
  }
  const double tokens = static_cast<double>(c.batch) * (prefill ? static_cast<double>(c.context) : 1.0);
  out.hops_s = pipeline_hops_s(f, c, r, tokens);
  return out;
}

double phase_seconds(const PhaseLoads& p, double clock) {
  double total = p.hops_s;
  for (const auto& st : p.stages) total += st.seconds(st.host ? 1.0 : clock);
  return total;
}

// A device's activity in its stage over a phase of `seconds` (PowerModel).
double activity(const PowerModel& m, const StageLoad& st, double seconds, double clock) {
  if (seconds <= 0) return 0;
  return m.busy_weight * st.seconds(clock) / seconds + m.memory_weight * st.bytes_at_peak_s / seconds +
         m.compute_weight * st.flops_at_peak_s / seconds * clock * clock;
}

}  // namespace

std::optional<DeviceLimit> device_limit(const Device& d, const InferenceSettings& s) {
  std::optional<double> board;
  if (d.spec && d.spec->tdp_watts) board = *d.spec->tdp_watts;
  const std::optional<double> enforced =
      d.profile && d.profile->power_limit_watts && *d.profile->power_limit_watts > 0 ? d.profile->power_limit_watts
                                                                                     : std::nullopt;
  if (!board) board = enforced;
  if (!board || *board <= 0) return std::nullopt;
  DeviceLimit out;
  out.board_watts = *board;
  out.idle_watts = model_of(s).idle_share * *board;
  if (s.power_cap_watts) {
    out.limit_watts = std::min(*s.power_cap_watts, *board);
    out.source = "power cap";
  } else if (enforced) {
    out.limit_watts = std::min(*enforced, *board);
    out.source = "enforced cap";
  } else {
    out.limit_watts = *board;
    out.source = "spec TDP";
  }
  out.limit_watts = std::max(out.limit_watts, out.idle_watts);
  return out;
}

std::optional<PhasePower> phase_power(const Fleet& f, const CostModel& c, const Replica& r, bool prefill,
                                      const InferenceSettings& s) {
  const PowerModel& m = model_of(s);
  std::vector<DeviceLimit> limits;
  for (const auto& st : r.stages) {
    if (!st.group) continue;
    for (auto member : st.group->members) {
      auto limit = device_limit(f.accelerators[member], s);
      if (!limit) return std::nullopt;
      limits.push_back(*limit);
    }
  }
  if (limits.empty()) return std::nullopt;
  const auto loads = loads_of(f, c, r, prefill);
  if (!loads) return std::nullopt;
  // At the profile's clocks a device draws what its activity asks, up to its
  // board limit (the profiles were measured under it); at lower clocks,
  // that draw above idle scales with the activity.
  const double base_seconds = phase_seconds(*loads, 1.0);
  const auto draw = [&](double clock, std::vector<double>& out) {
    out.clear();
    const double seconds = phase_seconds(*loads, clock);
    std::size_t k = 0;
    bool over = false;
    for (std::size_t j = 0; j < r.stages.size(); ++j) {
      if (!r.stages[j].group) continue;
      const StageLoad& st = loads->stages[j];
      const double a1 = activity(m, st, base_seconds, 1.0);
      const double a = activity(m, st, seconds, clock);
      for (std::size_t member = 0; member < r.stages[j].group->members.size(); ++member, ++k) {
        const DeviceLimit& lim = limits[k];
        const double at_base = lim.idle_watts + (lim.board_watts - lim.idle_watts) * std::min(1.0, a1);
        const double watts = a1 > 0 ? lim.idle_watts + (at_base - lim.idle_watts) * a / a1 : lim.idle_watts;
        over |= watts > lim.limit_watts * (1 + 1e-9);
        out.push_back(watts);
      }
    }
    return over;
  };
  PhasePower out;
  if (draw(1.0, out.watts)) {
    // The highest clock at which no device draws above its limit: draw falls
    // monotonically with the clock, so bisect.
    double lo = 0.05, hi = 1.0;
    std::vector<double> trial;
    for (int i = 0; i < 40; ++i) {
      const double mid = (lo + hi) / 2;
      (draw(mid, trial) ? hi : lo) = mid;
    }
    out.clock = lo;
    draw(lo, out.watts);
  }
  out.seconds = phase_seconds(*loads, out.clock);
  for (double w : out.watts) out.total_watts += w;
  return out;
}

namespace {

std::optional<PowerEstimate> power_estimate(const Fleet& f, const CostModel& c, const CostModel* serving_decode,
                                            const CostModel* serving_prefill, const Layout& l, Plan& plan,
                                            const InferenceSettings& s, std::string& why_not) {
  const PowerModel& m = model_of(s);
  if (l.replicas.empty()) return std::nullopt;
  for (const auto& st : l.replicas.front().stages)
    if (st.group)
      for (auto member : st.group->members)
        if (!device_limit(f.accelerators[member], s)) {
          why_not = text::cat("power: ", f.accelerators[member].profile ? f.accelerators[member].profile->id : "a device",
                              " has no TDP in its spec and reports no power cap");
          return std::nullopt;
        }
  const bool serving = serving_decode && serving_prefill && plan.throughput.serving;
  PowerEstimate out;
  // Decode: joules per second and tokens per second; serving: joules and
  // requests per wave; all copies of every replica shape together.
  double joules = 0, tokens_per_s = 0, watts = 0, wave_requests = 0;
  double decode_rate_total = 0, serving_rate_total = 0;
  bool capped_speed = false;
  const std::size_t shapes = l.uniform ? 1 : l.replicas.size();
  for (std::size_t i = 0; i < shapes; ++i) {
    const Replica& r = l.shape(i);
    const double copies = l.uniform ? static_cast<double>(l.replica_total()) : 1.0;
    const auto decode = phase_power(f, serving ? *serving_decode : c, r, false, s);
    if (!decode) {
      why_not = "power: a device of the plan has no speed figure";
      return std::nullopt;
    }
    std::optional<PhasePower> prefill;
    if (serving) {
      prefill = phase_power(f, *serving_prefill, r, true, s);
      if (!prefill) {
        why_not = "power: a device of the plan has no dense peak for prefill";
        return std::nullopt;
      }
    }
    capped_speed |= decode->clock < 1 || (prefill && prefill->clock < 1);
    if (serving) {
      const double batch = static_cast<double>(plan.throughput.serving->batch);
      const double output = static_cast<double>(plan.throughput.serving->output_tokens);
      const double wave_s = prefill->seconds + output * decode->seconds;
      const double wave_j = prefill->total_watts * prefill->seconds + decode->total_watts * output * decode->seconds;
      watts += copies * wave_j / wave_s;
      tokens_per_s += copies * batch * output / wave_s;
      joules += copies * wave_j;
      wave_requests += copies * batch;
      serving_rate_total += copies * batch * output / wave_s;
      if (i == 0) {
        plan.throughput.serving->time_to_first_token_s = prefill->seconds;
        plan.throughput.serving->time_per_output_token_s = decode->seconds;
      }
    } else {
      const double batch = static_cast<double>(c.batch);
      watts += copies * decode->total_watts;
      tokens_per_s += copies * batch / decode->seconds;
      joules += copies * decode->total_watts;
      decode_rate_total += copies * batch / decode->seconds;
    }
    if (i == 0) {
      std::size_t k = 0;
      for (const auto& st : r.stages) {
        if (!st.group) continue;
        for (auto member : st.group->members) {
          const Device& d = f.accelerators[member];
          const DeviceLimit lim = *device_limit(d, s);
          DevicePower dp;
          if (f.several_nodes()) dp.node = std::string(f.node_names[d.node]);
          dp.device = d.profile ? d.profile->id : std::string();
          dp.idle_watts = lim.idle_watts;
          dp.limit_watts = lim.limit_watts;
          dp.limit_source = std::string(lim.source);
          dp.decode_watts = decode->watts[k];
          dp.decode_clock_ratio = decode->clock;
          if (prefill) {
            dp.prefill_watts = prefill->watts[k];
            dp.prefill_clock_ratio = prefill->clock;
          }
          out.devices.push_back(std::move(dp));
          ++k;
        }
      }
    }
  }
  if (tokens_per_s <= 0) return std::nullopt;
  out.power_capped = capped_speed;
  out.watts = watts;
  out.watts_low = watts * m.watts_interval_low;
  out.watts_high = watts * m.watts_interval_high;
  // Joules are watts times seconds: the low end is low power at high speed.
  const double energy_low = m.watts_interval_low / c.profile->interval_high;
  const double energy_high = m.watts_interval_high / c.profile->interval_low;
  if (serving) {
    const auto& sv = *plan.throughput.serving;
    out.energy_per_output_token_j = joules / (wave_requests * static_cast<double>(sv.output_tokens));
    out.energy_per_request_j = joules / wave_requests;
    out.energy_per_request_j_low = *out.energy_per_request_j * energy_low;
    out.energy_per_request_j_high = *out.energy_per_request_j * energy_high;
    out.basis = text::cat("serving: waves of ", sv.batch, " requests per replica, ", sv.input_tokens, " prompt and ",
                          sv.output_tokens, " output tokens each, prefill and decode");
    if (capped_speed) {
      plan.throughput.serving->output_tokens_per_s = serving_rate_total;
      plan.throughput.serving->output_tokens_per_s_low = serving_rate_total * c.profile->interval_low;
      plan.throughput.serving->output_tokens_per_s_high = serving_rate_total * c.profile->interval_high;
    }
  } else {
    out.energy_per_output_token_j = joules / tokens_per_s;
    out.basis = text::cat("decode of ", c.batch, c.batch == 1 ? " sequence" : " sequences", " per replica at ",
                          c.context, " tokens of context");
  }
  out.energy_per_output_token_j_low = out.energy_per_output_token_j * energy_low;
  out.energy_per_output_token_j_high = out.energy_per_output_token_j * energy_high;
  out.tokens_per_joule = 1.0 / out.energy_per_output_token_j;
  if (capped_speed && !serving) {
    // The cap's clocks set the decode speed: replica 0's one sequence and every replica together.
    if (auto d0 = phase_power(f, c, l.replicas.front(), false, s)) {
      auto& tp = plan.throughput;
      tp.decode_tokens_per_s = 1.0 / d0->seconds;
      tp.decode_tokens_per_s_total = decode_rate_total;
      const double ceiling = tp.decode_ceiling_tokens_per_s.value_or(*tp.decode_tokens_per_s);
      tp.decode_tokens_per_s_low = std::min(*tp.decode_tokens_per_s * c.profile->interval_low, ceiling);
      tp.decode_tokens_per_s_high = std::min(*tp.decode_tokens_per_s * c.profile->interval_high, ceiling);
    }
  }
  return out;
}

}  // namespace

void settle_power(const Fleet& f, const CostModel& c, const Layout& l, Plan& plan, const InferenceSettings& s) {
  auto& as = plan.assumptions;
  if (f.accelerators.empty() || !plan.fits) return;
  std::optional<CostModel> decode, prefill;
  if (const auto& sv = plan.throughput.serving) {
    auto d = reshaped(c, sv->input_tokens + sv->output_tokens / 2, sv->batch);
    auto p = reshaped(c, sv->input_tokens, sv->batch);
    if (d && p) {
      decode.emplace(std::move(*d));
      prefill.emplace(std::move(*p));
    }
  }
  std::string why_not;
  plan.power = power_estimate(f, c, decode ? &*decode : nullptr, prefill ? &*prefill : nullptr, l, plan, s, why_not);
  if (!plan.power) {
    if (!why_not.empty()) as.push_back(std::move(why_not));
    return;
  }
  const PowerEstimate& p = *plan.power;
  const PowerModel& m = model_of(s);
  std::string limits;
  for (const auto& d : p.devices) {
    const std::string one = text::cat(std::round(d.limit_watts), " W (", d.limit_source, ")");
    if (limits.find(one) == std::string::npos) limits += (limits.empty() ? "" : ", ") + one;
  }
  as.push_back(text::cat("power: ", p.basis, "; each device draws idle (", std::round(m.idle_share * 1000) / 10,
                         " % of its board limit) plus its activity's share of the rest, up to its limit of ", limits,
                         "; the host, its CPUs and idle devices are not counted"));
  if (s.objective == PlanObjective::energy) {
    const auto& sv = plan.throughput.serving;
    const std::optional<double> rate = sv ? std::optional<double>(sv->output_tokens_per_s) : plan.throughput.decode_tokens_per_s_total;
    if (!s.min_tokens_per_s) as.push_back("objective energy: the layout with the least energy per output token");
    else if (rate && *rate >= *s.min_tokens_per_s)
      as.push_back(text::cat("objective energy: the layout with the least energy per output token of those reaching ",
                             *s.min_tokens_per_s, " tokens/s"));
    else
      as.push_back(text::cat("objective energy: no layout reaches ", *s.min_tokens_per_s,
                             " tokens/s; this is the fastest"));
  }
  for (const auto& d : p.devices) {
    if (d.decode_clock_ratio >= 1 && d.prefill_clock_ratio >= 1) continue;
    as.push_back(text::cat("power: under the ", std::round(d.limit_watts), " W limit the clocks fall to ",
                           std::round(d.decode_clock_ratio * 100), " % decoding",
                           d.prefill_watts ? text::cat(" and ", std::round(d.prefill_clock_ratio * 100), " % prefilling")
                                           : std::string(),
                           " of the board's own; compute slows with them, memory traffic does not, and the speeds "
                           "above say so"));
    break;
  }
}

}  // namespace planner_detail

}  // namespace hwaccel
