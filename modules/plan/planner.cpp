// The sharding planner's entry points: settings, the quantization ladder,
// and a plan assembled from the devices (planner_devices.cpp), the cost model
// (planner_cost.cpp), the layout search (planner_layout.cpp), shards and
// throughput (planner_shards.cpp) and launch hints (planner_launch.cpp).
module;
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>
module hwaccel.plan;
import :internals;

namespace hwaccel {

// The planner's shared types and steps (planner.cppm, module-internal).
using namespace planner_detail;

std::string_view to_string(PlanObjective objective) noexcept {
  switch (objective) {
    case PlanObjective::latency: return "latency";
    case PlanObjective::energy: return "energy";
    case PlanObjective::throughput: break;
  }
  return "throughput";
}

Result<void> InferenceSettings::validate(const ModelDescription& model) const {
  if (context == 0 || context > max_plan_context)
    return fail(ErrorKind::invalid_input, text::cat("context must be 1..", max_plan_context, " tokens, got ", context));
  if (!model.architecture_assumed && model.architecture.max_context > 0 && context > model.architecture.max_context)
    return fail(ErrorKind::invalid_input, text::cat("context ", context, " exceeds ", model.name, "'s maximum of ",
                                                    model.architecture.max_context, " tokens"));
  if (batch == 0 || batch > max_plan_batch)
    return fail(ErrorKind::invalid_input, text::cat("batch must be 1..", max_plan_batch, ", got ", batch));
  if (!(reserve_fraction >= 0.0 && reserve_fraction <= 0.95))
    return fail(ErrorKind::invalid_input, text::cat("reserve must be a fraction in [0, 0.95], got ", reserve_fraction));
  if (kv_cache_type) {
    if (auto bits = kv_cache_bits(*kv_cache_type); !bits) return fail(bits.error());
  }
  if (output_tokens > 0 && (input_tokens == 0 || input_tokens > max_plan_context || output_tokens > max_plan_context ||
                            input_tokens + output_tokens != context))
    return fail(ErrorKind::invalid_input,
                text::cat("serving needs 1..", max_plan_context, " input and output tokens each, adding up to the context"
                          " (got ", input_tokens, " + ", output_tokens, " for a context of ", context, ")"));
  if (output_tokens == 0 && input_tokens > 0)
    return fail(ErrorKind::invalid_input, "serving needs output tokens as well as input tokens");
  return {};
}

std::string ParallelStrategy::name() const {
  std::string s;
  const auto part = [&](std::string_view what, std::uint32_t n) {
    if (n <= 1) return;
    if (!s.empty()) s += " x ";
    s += text::cat(what, " (", n, ")");
  };
  part("pipeline parallel", pipeline_parallel);
  part("tensor parallel", tensor_parallel);
  part("data parallel", data_parallel);
  if (s.empty()) s = "none";
  if (expert_parallel > 1) s += text::cat(" with expert parallel (", expert_parallel, ")");
  if (nodes > 1) s += text::cat(", ", nodes, " nodes per replica");
  if (cpu_offload_layers > 0) s += text::cat(" + CPU offload of ", cpu_offload_layers, " layers");
  return s;
}

namespace {

// The levels a suggestion tries, best first, for the registry's accelerators:
// serving-engine formats for datacenter accelerators, llama.cpp GGUF for
// CPUs, Apple and Vulkan GPUs, fp16/int8/int4 for NPUs.
std::vector<QuantizationLevel> ladder(const Machines& machines, std::optional<QuantizationFamily> family) {
  using Q = QuantizationLevel;
  const std::vector<Q> datacenter = {Q::bf16, Q::fp16, Q::fp8_e4m3, Q::int8, Q::int4};
  const std::vector<Q> gguf = {Q::bf16, Q::fp16, Q::q8_0, Q::q6_k, Q::q5_k_m, Q::q4_k_m, Q::q3_k_m, Q::q2_k};
  const std::vector<Q> npu = {Q::fp16, Q::int8, Q::int4};
  if (family) return *family == QuantizationFamily::gguf ? gguf : datacenter;
  std::size_t datacenter_votes = 0, gguf_votes = 0, npu_votes = 0;
  for (const auto* registry : machines.registries) {
    for (const auto& d : registry->devices()) {
      if (!d.available || !d.visible || d.family == Family::cpu) continue;
      if (d.backend == Backend::apple && d.family == Family::gpu) ++gguf_votes;
      else if (d.backend == Backend::vulkan) ++gguf_votes;
      else if (d.family == Family::npu) ++npu_votes;
      else ++datacenter_votes;
    }
  }
  if (datacenter_votes + gguf_votes + npu_votes == 0) return gguf;
  if (npu_votes > datacenter_votes && npu_votes > gguf_votes) return npu;
  return gguf_votes > datacenter_votes ? gguf : datacenter;
}

// Devices one MoE layer's experts spread over: the tensor-parallel group,
// when expert parallelism was asked for and the experts divide evenly.
std::uint32_t expert_parallel_degree(const ModelArchitecture& a, const InferenceSettings& s, std::uint32_t t) {
  if (!s.expert_parallel || !a.moe.is_moe() || t < 2 || a.moe.experts % t != 0) return 1;
  return t;
}

// The runtime the speeds assume: the settings' own profile or runtime, else
// the default for the first accelerator's backend (the CPU's when none); a
// model read from a GGUF file runs under llama.cpp whatever its level.
const RuntimeProfile& profile_for(const Fleet& f, QuantizationLevel level, const InferenceSettings& s,
                                  const ModelDescription& model) {
  if (s.profile) return *s.profile;
  if (s.runtime) return runtime_profile(*s.runtime, s.runtime_profiles);
  const Backend backend =
      f.accelerators.empty() || !f.accelerators.front().profile ? Backend::cpu : f.accelerators.front().profile->backend;
  return runtime_profile(default_runtime(backend, level, model.source == ModelSource::gguf), s.runtime_profiles);
}

// The cost model of `level` with what the settings add to it.
Result<CostModel> settled_cost_model(const ModelDescription& model, QuantizationLevel level, const InferenceSettings& s) {
  auto cost = cost_model(model, level, s.kv_cache_type.value_or(default_kv_cache_type(level)), s.context, s.batch);
  if (!cost) return cost;
  cost->expert_parallel = s.expert_parallel;
  cost->full_kv_every_layer = s.full_kv_every_layer;
  cost->flash_attention = s.flash_attention.value_or(false);
  return cost;
}

// The runtime the speeds assume, and the PCIe domains it shards tensors over.
void settle_runtime(Fleet& f, CostModel& c, QuantizationLevel level, const InferenceSettings& s,
                    const ModelDescription& model) {
  c.profile = &profile_for(f, level, s, model);
  c.host_profile = &runtime_profile(Runtime::llama_cpp_cpu, s.runtime_profiles);
  join_pcie_domains(f, *c.profile);
}

// A server's speed for `requested` concurrent requests per replica: the KV
// cache left after replica 0's weights and fixed costs caps the batch; each
// wave prefills its prompts, then decodes with the KV cache at the prompt
// plus half the output on average.
std::optional<ServingEstimate> serving_estimate(const Fleet& f, const CostModel& memory_cost, const Layout& l,
                                                const Plan& plan, std::uint32_t requested, std::uint64_t input,
                                                std::uint64_t output, std::string& why_not) {
  std::uint64_t capacity = std::numeric_limits<std::uint64_t>::max();
  for (const auto& sh : plan.shards) {
    if (sh.replica != 0) break;
    const std::uint64_t fixed = sat_add(sat_add(sh.weights_bytes, sh.activation_bytes), sh.overhead_bytes);
    const std::uint64_t free = sh.capacity_bytes > fixed ? sh.capacity_bytes - fixed : 0;
    if (sh.kv_cache_bytes > 0) capacity = std::min(capacity, free / sh.kv_cache_bytes);
  }
  if (capacity == 0) {
    why_not = "serving: no room for the KV cache of one sequence";
    return std::nullopt;
  }
  ServingEstimate out;
  out.requested_batch = requested;
  out.kv_capacity_sequences = capacity;
  out.batch = static_cast<std::uint32_t>(std::min<std::uint64_t>(requested, capacity));
  out.input_tokens = input;
  out.output_tokens = output;
  out.replicas = static_cast<std::uint32_t>(l.replica_total());
  auto decode = reshaped(memory_cost, input + output / 2, out.batch);
  auto prefill = reshaped(memory_cost, input, out.batch);
  if (!decode || !prefill) {
    why_not = text::cat("serving: ", (!decode ? decode.error() : prefill.error()).message);
    return std::nullopt;
  }
  const auto per_replica = [&](const Replica& r, double& ttft, double& tpot, std::string& bottleneck) {
    const DecodeTime d = decode_time(f, *decode, r);
    const PrefillTime p = prefill_time(f, *prefill, r);
    if (!d.step_s || !p.seconds) return 0.0;
    ttft = *p.seconds;
    tpot = *d.step_s;
    bottleneck = d.bottleneck;
    return static_cast<double>(out.batch) * static_cast<double>(output) / (ttft + static_cast<double>(output) * tpot);
  };
  double total = 0;
  const std::size_t shapes = l.uniform ? 1 : l.replicas.size();
  for (std::size_t i = 0; i < shapes; ++i) {
    double ttft = 0, tpot = 0;
    std::string bottleneck;
    const double rate = per_replica(l.shape(i), ttft, tpot, bottleneck);
    if (rate <= 0) {
      why_not = "serving speed unknown: a device has no published bandwidth or dense peak";
      return std::nullopt;
    }
    if (i == 0) {
      out.time_to_first_token_s = ttft;
      out.time_per_output_token_s = tpot;
      out.decode_bottleneck = bottleneck;
    }
    total += l.uniform ? rate * static_cast<double>(l.replica_total()) : rate;
  }
  out.output_tokens_per_s = total;
  out.output_tokens_per_s_low = total * memory_cost.profile->interval_low;
  out.output_tokens_per_s_high = total * memory_cost.profile->interval_high;
  return out;
}

// Serving plans memory for one sequence of input + output tokens; the rest
// of memory is KV cache for the batch.
InferenceSettings one_sequence(const InferenceSettings& requested) {
  InferenceSettings s = requested;
  if (s.output_tokens > 0) s.batch = 1;
  return s;
}

Result<Plan> build_plan(const Machines& machines, const ModelDescription& model, const InferenceSettings& requested,
                        QuantizationLevel level, bool suggested) {
  const InferenceSettings s = one_sequence(requested);
  auto cost = settled_cost_model(model, level, s);
  if (!cost) return fail(cost.error());
  const QuantizationLevel kv_type = cost->kv_type;
  Fleet f = gather(machines, level, s.reserve_fraction, s.device_specs);
  settle_runtime(f, *cost, level, s, model);
  const CostModel& c = *cost;
  if (f.accelerators.empty() && f.several_nodes())
    return fail(ErrorKind::unsupported,
                text::cat("no accelerator on any of the ", f.node_names.size(), " nodes can run ", to_string(level),
                          f.skipped.by_reason.empty() ? std::string() : std::string(" (see the devices' reasons with --json)")));
  if (f.accelerators.empty() && !f.host)
    return fail(ErrorKind::unsupported,
                text::cat("no available device can run ", to_string(level),
                          f.skipped.by_reason.empty() ? std::string(" (the registry has no usable device)")
                                                      : std::string(" (see the devices' reasons with --json)")));
  const Layout l = place(f, c, s);

  Plan plan;
  plan.model_name = model.name;
  plan.model_source = model.source;
  plan.parameters = model.parameters;
  plan.active_parameters = model.active_parameters;
  plan.layers = model.architecture.layers;
  plan.architecture_assumed = model.architecture_assumed;
  plan.quantization = level;
  plan.quantization_suggested = suggested;
  plan.kv_cache_type = kv_type;
  plan.context = s.context;
  plan.batch = s.batch;
  plan.reserve_fraction = s.reserve_fraction;
  plan.fits = l.fits;
  plan.weight_bits_per_parameter =
      model.parameters ? static_cast<double>(c.layout.total()) * 8.0 / static_cast<double>(model.parameters) : 0.0;

  const Replica& first = l.replicas.front();
  std::uint32_t offloaded = 0, accelerator_stages = 0;
  for (const auto& st : first.stages) {
    if (st.group) ++accelerator_stages;
    else if (!f.accelerators.empty()) offloaded += static_cast<std::uint32_t>(st.layer_count);
  }
  plan.strategy.tensor_parallel = l.tp;
  plan.strategy.pipeline_parallel = std::max<std::uint32_t>(accelerator_stages, 1);
  plan.strategy.data_parallel = static_cast<std::uint32_t>(l.replica_total());
  plan.strategy.cpu_offload_layers = offloaded;
  plan.strategy.expert_parallel = expert_parallel_degree(model.architecture, s, l.tp);
  if (f.several_nodes()) {
    // The nodes replica 0 spans, then every node any replica uses, in order.
    std::vector<bool> seen(f.node_names.size(), false);
    std::vector<std::uint32_t> order;
    const auto note = [&](std::uint32_t node) {
      if (!seen[node]) {
        seen[node] = true;
        order.push_back(node);
      }
    };
    for (const auto& st : first.stages)
      if (st.group)
        for (auto m : st.group->members) note(f.accelerators[m].node);
    plan.strategy.nodes = std::max<std::uint32_t>(static_cast<std::uint32_t>(order.size()), 1);
    for (std::size_t ri = 1; ri < l.replica_total(); ++ri)
      for (std::size_t si = 0; si < l.shape(ri).stages.size(); ++si)
        if (const Group* g = l.stage(ri, si).group) note(f.accelerators[g->members.front()].node);
    for (auto n : order) plan.nodes.emplace_back(f.node_names[n]);
    plan.fabric = f.fabric;
  }

  emit_shards(f, c, l, plan);
  // Replica 0's memory, summed over its devices.
  if (auto per_token = kv_cache_bytes_per_token(model.architecture, kv_type)) plan.memory.kv_cache_bytes_per_token = *per_token;
  for (const auto& sh : plan.shards) {
    if (sh.replica != 0) break;
    plan.memory.weights_bytes = sat_add(plan.memory.weights_bytes, sh.weights_bytes);
    plan.memory.kv_cache_bytes = sat_add(plan.memory.kv_cache_bytes, sh.kv_cache_bytes);
    plan.memory.activation_bytes = sat_add(plan.memory.activation_bytes, sh.activation_bytes);
    plan.memory.overhead_bytes = sat_add(plan.memory.overhead_bytes, sh.overhead_bytes);
  }
  plan.memory.total_bytes = sat_add(sat_add(plan.memory.weights_bytes, plan.memory.kv_cache_bytes),
                                    sat_add(plan.memory.activation_bytes, plan.memory.overhead_bytes));
  for (const auto& sh : plan.shards)
    if (sh.total_bytes > sh.capacity_bytes) plan.fits = false;

  // Throughput.
  const DecodeTime d0 = decode_time(f, c, first);
  ThroughputEstimate& tp = plan.throughput;
  tp.decode_bottleneck = d0.bottleneck;
  if (d0.step_s && *d0.step_s > 0) {
    tp.decode_tokens_per_s = 1.0 / *d0.step_s;
    tp.decode_ceiling_tokens_per_s = 1.0 / *d0.ceiling_step_s;
    double total = 0;
    bool all = true;
    if (l.uniform) {
      total = static_cast<double>(s.batch) * static_cast<double>(l.replica_total()) / *d0.step_s;
    } else {
      for (const auto& r : l.replicas) {
        const DecodeTime d = &r == &first ? d0 : decode_time(f, c, r);
        if (!d.step_s || *d.step_s <= 0) {
          all = false;
          break;
        }
        total += static_cast<double>(s.batch) / *d.step_s;
      }
    }
    if (all) tp.decode_tokens_per_s_total = total;
  }
  tp.runtime = std::string(c.profile->name);
  tp.runtime_calibrated = c.profile->calibrated();
  if (tp.decode_tokens_per_s) {
    const double ceiling = tp.decode_ceiling_tokens_per_s.value_or(*tp.decode_tokens_per_s);
    tp.decode_tokens_per_s_low = std::min(*tp.decode_tokens_per_s * c.profile->interval_low, ceiling);
    tp.decode_tokens_per_s_high = std::min(*tp.decode_tokens_per_s * c.profile->interval_high, ceiling);
  }
  if (c.profile->row_split_sync_us > 0 && first.tp == 1 && first.stages.size() > 1) {
    std::vector<const Device*> devices;
    devices.reserve(first.stages.size());
    for (const auto& st : first.stages)
      if (st.group) devices.push_back(&f.accelerators[st.group->members.front()]);
    if (devices.size() == first.stages.size()) tp.llama_row_split = row_split_estimate(c, devices);
  }
  const PrefillTime p0 = prefill_time(f, c, first);
  tp.prefill_bottleneck = p0.bottleneck;
  if (p0.seconds && *p0.seconds > 0)
    tp.prefill_tokens_per_s = static_cast<double>(s.batch) * static_cast<double>(s.context) / *p0.seconds;
  {
    bool reported = false, published = false, derived = false;
    for (const auto& st : first.stages) {
      if (!st.group) {
        reported |= f.host && f.host->bandwidth_reported;
        continue;
      }
      for (auto m : st.group->members) {
        const Device& dv = f.accelerators[m];
        if (!dv.bandwidth_gbps) continue;
        (dv.bandwidth_reported ? reported : dv.bandwidth_derived ? derived : published) = true;
      }
    }
    tp.bandwidth_source = reported && published ? "reported by the device and published spec"
                          : reported             ? "reported by the device"
                          : published            ? "published spec"
                                                 : "unknown";
    if (derived)
      tp.bandwidth_source = tp.bandwidth_source == "unknown"
                                ? std::string("derived from the architecture (not published)")
                                : text::cat(tp.bandwidth_source, " and derived from the architecture (not published)");
  }

  // Assumptions, in the order a reader needs them.
  auto& as = plan.assumptions;
  for (const auto& n : model.notes) as.push_back(n);
  as.push_back(text::cat("weights: ", c.layout.basis));
  {
    const auto& a = model.architecture;
    std::string kv = text::cat("KV cache: ", to_string(kv_type), ", ", plan.memory.kv_cache_bytes_per_token,
                               " bytes per token (");
    if (a.mla)
      kv += text::cat(a.layers, " layers x (kv_lora_rank ", a.mla->kv_lora_rank, " + rope ", a.mla->qk_rope_head_dim,
                      "): the MLA latent as vLLM/SGLang cache it; a runtime without MLA caches full keys and values)");
    else
      kv += text::cat("2 x ", a.layers, " layers x ", a.kv_heads, " KV heads x ", a.head_dim, " x ",
                      kv_cache_bits(kv_type).value_or(16) / 8, " bytes)");
    kv += text::cat(" for ", s.batch, " sequence(s) of ", s.context, " tokens");
    if (const std::uint32_t windowed = a.windowed_layer_count(); windowed > 0) {
      LayerAttention kind = LayerAttention::full;
      for (std::uint32_t l = 0; l < a.layers && kind == LayerAttention::full; ++l) kind = a.layer_attention(l);
      const bool chunked = kind == LayerAttention::chunked;
      const std::uint32_t span = chunked ? *a.attention_chunk : *a.sliding_window;
      kv += text::cat("; ", windowed, " of ", a.layers, " layers ",
                      chunked ? text::cat("attend within ", span, "-token chunks")
                              : text::cat("slide within a ", span, "-token window"),
                      s.full_kv_every_layer
                          ? " but are counted at the full context (llama.cpp --swa-full, vLLM "
                            "--disable-hybrid-kv-cache-manager)"
                          : text::cat(" and keep min(context, ", span,
                                      ") tokens, as vLLM's hybrid KV cache manager and llama.cpp's SWA cache allocate "
                                      "them (prefill's extra blocks not counted)"));
    }
    as.push_back(std::move(kv));
  }
  const bool scores_not_counted = c.profile->kv_read_per_query_head && !c.flash_attention;
  as.push_back(text::cat("activations: one prefill chunk of up to ", c.profile->prefill_chunk_tokens, " tokens (",
                         c.profile->name,
                         ") sized as with flash attention (no context x context scores), plus fp32 logits",
                         scores_not_counted ? "; with flash attention off, llama.cpp's compute buffer also holds the "
                                              "chunk's attention scores, which grow with the context and are not counted"
                                            : ""));
  if (c.embedding_on_host() && c.layout.embedding_bytes > 0 && !f.accelerators.empty())
    as.push_back(text::cat("weights: the token embedding (", gib(c.layout.embedding_bytes),
                           ") stays in host memory, as llama.cpp keeps its input layer on the CPU",
                           c.arch.tied_embeddings ? "; tied to the head, it is loaded again beside the last layer" : ""));
  {
    std::map<std::string_view, std::string_view> overheads;
    const bool communicates = first.tp > 1 || first.stages.size() > 1;
    for (const auto& st : first.stages) {
      const Backend b = st.group ? backend_of(f, *st.group) : Backend::cpu;
      overheads.emplace(to_string(b), runtime_overhead(b, communicates && st.group && c.collective_buffers()).reason);
    }
    for (const auto& [backend, reason] : overheads)
      as.push_back(text::cat("runtime overhead per ", backend, " device: ", reason));
  }
  as.push_back(text::cat("usable memory: each device's memory less a ", std::round(s.reserve_fraction * 1000) / 10,
                         "% reserve", f.unified_memory ? "; Apple GPUs get 75% of unified memory (Metal's working set)" : ""));
  if (f.accelerators.size() > 1) {
    bool any_domain = false, pcie_domain = false;
    for (const auto& dom : f.domains) {
      any_domain |= dom.members.size() > 1 && !dom.pcie;
      pcie_domain |= dom.pcie;
    }
    const Domain* sharded = nullptr;  // where replica 0's ranks talk over PCIe
    for (const auto& st : first.stages)
      if (const Domain* dom = domain_of(f, st); first.tp > 1 && dom && dom->pcie) sharded = dom;
    if (sharded) {
      const auto& link = sharded->link_gbps;
      as.push_back(text::cat(
          "devices that no NVLink/xGMI/ICI link joins: ", c.profile->name,
          " runs tensor parallelism between them over PCIe (NCCL all-reduce ", std::round(pcie_allreduce_latency_s * 1e6),
          " us + 2(t-1)/t x message / ",
          link ? text::cat(std::round(*link * 10) / 10, " GB/s, the host link") : std::string("an unknown host link: latency only"),
          ")"));
    } else if (!any_domain) {
      as.push_back(pcie_domain ? text::cat("no NVLink/xGMI/ICI links between the devices in the registry: PCIe only, "
                                           "over which ", c.profile->name, " could shard layers at ",
                                           std::round(pcie_allreduce_latency_s * 1e6), " us per all-reduce; this plan does not")
                               : std::string("no NVLink/xGMI/ICI links between the devices in the registry: they are "
                                             "treated as PCIe-only (pipeline stages, no tensor parallelism)"));
    }
  }
  if (f.several_nodes()) {
    as.push_back(text::cat("nodes: ", f.node_names.size(), " given, ", plan.nodes.size(), " used; ",
                           plan.strategy.nodes, " per replica; tensor parallelism stays inside one node's "
                           "high-bandwidth domain, pipeline stages fill a node before the next"));
    if (f.fabric)
      as.push_back(text::cat("inter-node fabric: ", f.fabric->describe(), " (", f.fabric->source, "); a pipeline hop "
                             "between nodes costs ", f.fabric->latency_us, " us plus the activations over one port"));
    else
      as.push_back("inter-node fabric unknown (no active RDMA port in the nodes' registries; give --fabric): hops "
                   "between nodes are counted like hops inside a node");
  }
  if (s.expert_parallel && !model.architecture.moe.is_moe())
    as.push_back("expert parallelism asked for, but the model has no experts: not used");
  else if (s.expert_parallel && plan.strategy.expert_parallel == 1)
    as.push_back(l.tp < 2 ? std::string("expert parallelism not used: the plan has no tensor-parallel group to spread "
                                        "the experts over")
                          : text::cat("expert parallelism not used: the ", model.architecture.moe.experts,
                                      " experts do not divide evenly over a tensor-parallel group of ", l.tp));
  else if (plan.strategy.expert_parallel > 1)
    as.push_back(text::cat("expert parallel (", plan.strategy.expert_parallel, "): each device of a tensor-parallel "
                           "group holds ", model.architecture.moe.experts / plan.strategy.expert_parallel,
                           " whole experts; per MoE layer, two all-to-alls (dispatch, combine) of ",
                           model.architecture.moe.experts_per_token,
                           " x hidden activations per token replace the FFN's all-reduce"));
  if (model.architecture.moe.is_moe())
    as.push_back(text::cat("decode reads the experts a batch of ", s.batch, " token(s) is expected to touch: ",
                           model.architecture.moe.experts, " x (1 - (1 - ", model.architecture.moe.experts_per_token,
                           "/", model.architecture.moe.experts, ")^", s.batch, ") per MoE layer"));
  {
    const RuntimeProfile& p = *c.profile;
    as.push_back(text::cat(
        "speed: the ", p.name, " runtime profile (", p.description,
        s.runtime || s.profile ? "" : "; give --runtime for another", "): bandwidth at ",
        std::round(p.bandwidth_efficiency * 1000) / 10, "% of peak, ",
        std::round(p.layer_overhead_us * 10) / 10, " us per layer per token, ",
        std::round(p.dequant_ops_per_weight * 10) / 10, " vector ops per quantized weight, compute at ",
        std::round(p.compute_efficiency * 1000) / 10, "% of dense peak; ",
        p.calibrated() ? text::cat("fitted on ", p.calibration_points, " measurements (", p.calibrated_on,
                                   "); 80% of them within ", std::round(p.interval_low * 100), "-",
                                   std::round(p.interval_high * 100), "% of the prediction")
                       : text::cat("not calibrated (", p.calibrated_on, "): the interval is a wide default")));
  }
  if (const double rereads = kv_rereads(c.arch, *c.profile, false); rereads > 0)
    as.push_back(c.flash_attention
                     ? std::string("decode: flash attention on (-fa 1): each KV head is read once per token")
                     : text::cat("decode: flash attention off (-fa 0, as the profile's calibration runs): each KV head is "
                                 "read once per query head, ",
                                 1.0 + rereads, " times per token (--flash-attention on if "
                                 "your build runs with it, as recent builds' -fa auto does)"));
  as.push_back(text::cat("decode: KV cache read at the full context (a sliding-window or chunked layer reads at most "
                         "its window); tensor-parallel all-reduce 10 us + 2(t-1)/t x "
                         "message / link bandwidth, twice per layer; 20 us per pipeline hop; never above the ceiling "
                         "(every byte at full bandwidth)"));
  if (const auto& rs = plan.throughput.llama_row_split; rs && rs->decode_tokens_per_s)
    as.push_back(text::cat(
        "llama.cpp --split-mode row over the same ", rs->devices, " GPUs: each reads its rows of every matrix at "
        "once, the first keeps the KV cache", c.arch.moe.is_moe() ? " and the routed experts" : "",
        " and gathers the others' rows after each split product (", std::round(c.profile->row_split_sync_us * 10) / 10,
        " us per product and extra GPU, ", std::round(rs->sync_s_per_token * 1e4) / 10, " ms per token): decode ",
        std::round(*rs->decode_tokens_per_s * 10) / 10, " tok/s; ",
        rs->fits ? "it fits" : "it does not fit: the first GPU would need more than it has",
        " (the first GPU holds ", gib(rs->main_device_bytes),
        "); only builds that still have it: recent CUDA and HIP builds refuse it (\"does not support split "
        "buffers\")"));
  as.push_back(text::cat("memory bandwidth: ", tp.bandwidth_source));
  if (!tp.decode_tokens_per_s)
    as.push_back(f.accelerators.empty() || plan.strategy.cpu_offload_layers > 0
                     ? "decode speed unknown: the host's memory bandwidth is neither reported nor published"
                     : "decode speed unknown: a device has neither a reported nor a published memory bandwidth");
  if (!tp.prefill_tokens_per_s) as.push_back("prefill speed unknown: a device has no published dense peak for this arithmetic");
  if (plan.strategy.cpu_offload_layers > 0)
    as.push_back(text::cat("CPU offload: the accelerators hold the first ",
                           plan.layers - plan.strategy.cpu_offload_layers,
                           " layers; host memory keeps the token embedding, the other layers and the head (llama.cpp -ngl)"));
  if (l.idle_devices > 0) {
    std::vector<bool> used(f.accelerators.size(), false);
    std::size_t used_count = 0;
    for (std::size_t ri = 0; ri < l.replica_total(); ++ri)
      for (std::size_t si = 0; si < l.shape(ri).stages.size(); ++si)
        if (const Group* g = l.stage(ri, si).group)
          for (auto m : g->members)
            if (!used[m]) {
              used[m] = true;
              ++used_count;
            }
    std::string idle;
    std::size_t listed = 0;
    for (std::size_t i = 0; i < used.size() && listed < 4; ++i)
      if (!used[i])
        idle += text::cat(listed++ ? ", " : "",
                          f.several_nodes() ? text::cat(f.node_names[f.accelerators[i].node], "/") : std::string(),
                          f.accelerators[i].profile->id);
    const std::size_t unused = used.size() - used_count;
    if (unused > listed) idle += text::cat(" and ", unused - listed, " more");
    as.push_back(text::cat(idle, " left idle: too few for another replica"));
  }
  for (const auto& [how, ids] : f.derived) {
    std::string list;
    for (std::size_t i = 0; i < ids.size() && i < 4; ++i) list += (i ? ", " : "") + ids[i];
    if (ids.size() > 4) list += text::cat(" and ", ids.size() - 4, " more");
    as.push_back(text::cat(list, " (no published spec matches): ", how));
  }
  f.skipped.report(as);
  if (!plan.fits) {
    std::uint64_t capacity = 0;
    for (const auto& sh : plan.shards)
      if (sh.replica == 0) capacity = sat_add(capacity, sh.capacity_bytes);
    as.push_back(text::cat("does not fit: a replica needs ", gib(plan.memory.total_bytes), ", the devices used hold ",
                           gib(capacity), " after the reserve"));
  }
  if (requested.output_tokens > 0) {
    std::string why_not;
    if (plan.fits)
      tp.serving = serving_estimate(f, c, l, plan, requested.batch, requested.input_tokens, requested.output_tokens, why_not);
    else
      why_not = "serving: the model does not fit";
    if (tp.serving)
      as.push_back(text::cat("serving: memory planned for one sequence of ", s.context, " tokens; the KV cache left holds ",
                             tp.serving->kv_capacity_sequences, " such sequences per replica, so ", tp.serving->batch,
                             " of the ", requested.batch, " requests run at once; each wave prefills its prompts, then "
                             "decodes with the KV cache at the prompt plus half the output"));
    else
      as.push_back(std::move(why_not));
  }
  settle_power(f, c, l, plan, s);
  plan.launch = launch_hints(f, c, l, s, model, plan);
  return plan;
}

}  // namespace

namespace {

Result<QuantizationLevel> suggest_level(const Machines& machines, const ModelDescription& model,
                                        const InferenceSettings& requested) {
  if (auto v = requested.validate(model); !v) return fail(v.error());
  const InferenceSettings settings = one_sequence(requested);
  bool accelerators = false;
  for (const auto* registry : machines.registries) accelerators |= registry->has_accelerator();
  std::optional<QuantizationLevel> with_offload;
  // A model published at its own level (gpt-oss: MXFP4) tries that first.
  auto levels = ladder(machines, settings.quantization_family);
  if (model.native_level) levels.insert(levels.begin(), *model.native_level);
  for (const auto level : levels) {
    auto cost = settled_cost_model(model, level, settings);
    if (!cost) return fail(cost.error());
    Fleet f = gather(machines, level, settings.reserve_fraction, settings.device_specs);
    // A level no accelerator runs is no suggestion for a machine that has them.
    if (accelerators ? f.accelerators.empty() : !f.host) continue;
    settle_runtime(f, *cost, level, settings, model);
    const Layout l = place(f, *cost, settings);
    if (!l.fits) continue;
    bool offload = false;
    for (const auto& st : l.replicas.front().stages) offload |= st.group == nullptr && !f.accelerators.empty();
    if (!offload) return level;
    if (!with_offload) with_offload = level;
  }
  if (with_offload) return *with_offload;
  return fail(ErrorKind::unsupported,
              text::cat("no quantization level fits ", model.name, " (", model.parameters, " parameters) with ",
                        settings.context, " tokens x ", settings.batch, " sequence(s) on these ",
                        machines.several() ? text::cat(machines.registries.size(), " nodes") : std::string("devices")));
}

// The model's load time from the registry's storage, when it knows any. On
// several nodes each node reads the layers of its own stages, at the same
// time: the estimate is one node's share, from the first node's storage.
void attach_load_time(const Machines& machines, const ModelDescription& model, Plan& plan) {
  const AcceleratorRegistry& registry = *machines.registries.front();
  if (registry.system().storage.empty()) return;
  std::uint64_t bytes = model.stored ? model.stored->total_bytes() : plan.memory.weights_bytes;
  if (plan.strategy.nodes > 1) bytes = div_up(bytes, plan.strategy.nodes);
  if (bytes == 0) return;
  std::string path;
  const bool from_files = model.source == ModelSource::gguf || model.source == ModelSource::safetensors ||
                          model.source == ModelSource::hf_config;
  if (from_files && !model.origin.empty()) path = absolute_path(model.origin);
  auto estimate = estimate_load_time(registry, bytes, path);
  if (!estimate) {
    plan.assumptions.push_back(text::cat("load time unknown: ", estimate.error().message));
    return;
  }
  plan.assumptions.push_back(text::cat("load time: ", estimate->assumption,
                                       plan.strategy.nodes > 1 ? text::cat(" (each of ", plan.strategy.nodes,
                                                                           " nodes reads its own stages)")
                                                               : std::string()));
  plan.load_time = std::move(*estimate);
  plan.load_bytes = bytes;
}

Result<Plan> plan_without_load_time(const Machines& machines, const ModelDescription& model,
                                    const InferenceSettings& settings) {
  if (settings.quantization) return build_plan(machines, model, settings, *settings.quantization, false);
  if (model.source == ModelSource::gguf && model.stored && model.stored->level)
    return build_plan(machines, model, settings, *model.stored->level, false);
  auto level = suggest_level(machines, model, settings);
  if (level) return build_plan(machines, model, settings, *level, true);
  // Nothing fits: plan the smallest level of the ladder so the shortfall shows.
  const auto levels = ladder(machines, settings.quantization_family);
  for (auto it = levels.rbegin(); it != levels.rend(); ++it) {
    auto plan = build_plan(machines, model, settings, *it, true);
    if (plan) {
      plan->assumptions.push_back(level.error().message);
      return plan;
    }
  }
  return fail(level.error());
}

Result<Plan> plan_on(const Machines& machines, const ModelDescription& model, const InferenceSettings& settings) {
  if (auto v = settings.validate(model); !v) return fail(v.error());
  if (machines.several() && std::none_of(machines.registries.begin(), machines.registries.end(),
                                         [](const AcceleratorRegistry* r) { return r->has_accelerator(); }))
    return fail(ErrorKind::unsupported, text::cat("no accelerator on any of the ", machines.registries.size(),
                                                  " nodes: host memory is not planned across nodes"));
  auto plan = plan_without_load_time(machines, model, settings);
  if (plan) attach_load_time(machines, model, *plan);
  return plan;
}

Result<void> check_cluster(const Cluster& cluster) {
  if (cluster.nodes.empty()) return fail(ErrorKind::invalid_input, "the cluster has no nodes");
  if (cluster.nodes.size() > max_cluster_nodes)
    return fail(ErrorKind::invalid_input, text::cat("more than ", max_cluster_nodes, " nodes"));
  if (cluster.fabric && !(cluster.fabric->port_gbps > 0))
    return fail(ErrorKind::invalid_input, text::cat("the fabric '", cluster.fabric->source, "' has no bandwidth"));
  return {};
}

}  // namespace

Result<QuantizationLevel> suggest_quantization(const AcceleratorRegistry& registry, const ModelDescription& model,
                                               const InferenceSettings& settings) {
  return suggest_level(machines_of(registry), model, settings);
}

Result<QuantizationLevel> suggest_quantization(const Cluster& cluster, const ModelDescription& model,
                                               const InferenceSettings& settings) {
  if (auto ok = check_cluster(cluster); !ok) return fail(ok.error());
  return suggest_level(machines_of(cluster), model, settings);
}

Result<Plan> plan_inference(const AcceleratorRegistry& registry, const ModelDescription& model,
                            const InferenceSettings& settings) {
  return plan_on(machines_of(registry), model, settings);
}

Result<RowSplitEstimate> llama_row_split(const AcceleratorRegistry& registry, const ModelDescription& model,
                                         const InferenceSettings& settings) {
  if (!settings.quantization)
    return fail(ErrorKind::invalid_input, "a row-split estimate needs a quantization level");
  if (auto v = settings.validate(model); !v) return fail(v.error());
  const QuantizationLevel level = *settings.quantization;
  auto cost = settled_cost_model(model, level, settings);
  if (!cost) return fail(cost.error());
  const Fleet f = gather(machines_of(registry), level, settings.reserve_fraction, settings.device_specs);
  cost->profile = &profile_for(f, level, settings, model);
  if (cost->profile->row_split_sync_us <= 0)
    return fail(ErrorKind::unsupported, text::cat(cost->profile->name,
                                                  " has no row split (llama.cpp on CUDA or ROCm has)"));
  if (f.accelerators.size() < 2)
    return fail(ErrorKind::unsupported, text::cat("a row split needs two or more devices that run ",
                                                  to_string(level), ", found ", f.accelerators.size()));
  std::vector<const Device*> devices;
  devices.reserve(f.accelerators.size());
  for (const auto& d : f.accelerators) devices.push_back(&d);
  auto estimate = row_split_estimate(*cost, devices);
  if (!estimate || !estimate->decode_tokens_per_s)
    return fail(ErrorKind::unsupported, "a device of the row split has no known memory bandwidth, or the devices "
                                        "are on several nodes");
  return *estimate;
}

Result<Plan> plan_inference(const Cluster& cluster, const ModelDescription& model, const InferenceSettings& settings) {
  if (auto ok = check_cluster(cluster); !ok) return fail(ok.error());
  return plan_on(machines_of(cluster), model, settings);
}

Result<NodeCount> fewest_nodes(const AcceleratorRegistry& node, const ModelDescription& model,
                               const InferenceSettings& settings, std::uint32_t max_nodes,
                               const std::optional<Fabric>& fabric) {
  if (max_nodes == 0 || max_nodes > max_cluster_nodes)
    return fail(ErrorKind::invalid_input, text::cat("the most nodes to try must be 1..", max_cluster_nodes));
  // No more copies than a cluster may hold devices.
  max_nodes = std::max<std::uint32_t>(
      1, static_cast<std::uint32_t>(std::min<std::uint64_t>(
             max_nodes, max_cluster_devices / std::max<std::size_t>(node.devices().size(), 1))));
  const auto plan_on = [&](std::uint32_t n) {
    auto cluster = Cluster::replicate(node, n);
    if (!cluster) return Result<Plan>(fail(cluster.error()));
    cluster->fabric = fabric;
    return plan_inference(*cluster, model, settings);
  };
  std::uint32_t low = 0, high = 1;  // low: known not to fit (0: none tried)
  NodeCount out;
  for (;;) {
    auto plan = plan_on(high);
    if (!plan) return fail(plan.error());
    out.plan = std::move(*plan);
    if (out.plan.fits) break;
    low = high;
    if (high >= max_nodes) return out;
    high = high > max_nodes / 2 ? max_nodes : high * 2;
  }
  while (high - low > 1) {
    const std::uint32_t mid = low + (high - low) / 2;
    auto plan = plan_on(mid);
    if (!plan) return fail(plan.error());
    if (plan->fits) {
      high = mid;
      out.plan = std::move(*plan);
    } else {
      low = mid;
    }
  }
  out.nodes = high;
  return out;
}

Result<QuantizationLevel> suggest_quantization(const AcceleratorRegistry& registry, std::uint64_t parameters) {
  auto model = ModelDescription::from_parameter_count(parameters);
  if (!model) return fail(model.error());
  return suggest_quantization(registry, *model, InferenceSettings{});
}

Result<Plan> plan_sharding(const AcceleratorRegistry& registry, std::uint64_t parameters, QuantizationLevel level) {
  auto model = ModelDescription::from_parameter_count(parameters);
  if (!model) return fail(model.error());
  InferenceSettings s;
  s.quantization = level;
  return plan_inference(registry, *model, s);
}

}  // namespace hwaccel
