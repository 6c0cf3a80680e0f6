// Training memory of one pipeline stage: what each rank keeps of every
// role's model under ZeRO/FSDP, offload and tensor/pipeline parallelism, the
// optimizer's states, the activations and the step's temporary buffers.
module;
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>
module hwaccel.training;
import :stage_memory;

namespace hwaccel::training_detail {

namespace {

// DeepSpeed's default reduce_bucket_size (elements) for ZeRO stage 2.
constexpr u64 deepspeed_reduce_bucket = 500'000'000;
// bitsandbytes block-wise 8-bit optimizer states: one fp32 absmax per 256
// values, and 32-bit states for tensors under min_8bit_size = 4096 values.
constexpr u64 bnb_state_block = 256;
constexpr u64 bnb_min_8bit_size = 4096;

// Layers [first, first + count) of `layers` split over `stages`: the
// remainder goes to the last stages, whose activations are held for fewer
// micro-batches under 1F1B.
std::pair<std::uint32_t, std::uint32_t> stage_layers(std::uint32_t layers, std::uint32_t stages, std::uint32_t stage) {
  const std::uint32_t base = layers / stages;
  const std::uint32_t extra = layers % stages;
  const std::uint32_t bigger_from = stages - extra;
  const std::uint32_t first = stage * base + (stage > bigger_from ? stage - bigger_from : 0);
  return {first, base + (stage >= bigger_from ? 1 : 0)};
}

// Optimizer state bytes of trainable tensors.
u64 optimizer_bytes(OptimizerKind o, TrainingPrecision p, const std::vector<TensorGroup>& groups) {
  const u64 state = p == TrainingPrecision::bf16_pure ? 2 : 4;
  u64 total = 0;
  for (const auto& g : groups) {
    const u64 n = sat_mul(g.rows, g.cols);
    u64 per = 0;
    switch (o) {
      case OptimizerKind::adamw: per = sat_mul(n, 2 * state); break;
      case OptimizerKind::adamw_32bit: per = sat_mul(n, 8); break;
      case OptimizerKind::adamw_8bit:
        per = n < bnb_min_8bit_size ? sat_mul(n, 8) : sat_add(sat_mul(n, 2), sat_mul(ceil_div_or_self(n, bnb_state_block), 8));
        break;
      case OptimizerKind::adafactor: per = sat_mul(g.rows > 1 ? sat_add(g.rows, g.cols) : g.cols, state); break;
      case OptimizerKind::sgd: per = 0; break;
      case OptimizerKind::sgd_momentum: per = sat_mul(n, state); break;
    }
    total = sat_add(total, sat_mul(per, g.count));
  }
  return total;
}

// The groups LoRA adds to a stage: A (r x d_in) and B (d_out x r) per adapted matrix.
std::vector<TensorGroup> lora_groups(const std::vector<TensorGroup>& layer_groups, std::uint32_t rank, LoraTargets targets) {
  std::vector<TensorGroup> out;
  for (const auto& g : layer_groups) {
    if (!g.is_matrix() || !lora_adapts(targets, g.role)) continue;
    out.push_back({g.role, rank, g.cols, g.count});
    out.push_back({g.role, g.rows, rank, g.count});
  }
  return out;
}

u64 params_of(const std::vector<TensorGroup>& groups) {
  u64 n = 0;
  for (const auto& g : groups) n = sat_add(n, sat_mul(sat_mul(g.rows, g.cols), g.count));
  return n;
}

}  // namespace

StageShape stage_shape(const ModelArchitecture& a, std::uint32_t stage, std::uint32_t stages, std::uint32_t tp) {
  StageShape s;
  std::tie(s.first_layer, s.layer_count) = stage_layers(a.layers, stages, stage);
  s.embedding = stage == 0;
  s.head = stage + 1 == stages;
  const std::uint32_t end = s.first_layer + s.layer_count;
  // Dense layers, then MoE ones (which Llama 4 interleaves), each as (first, count).
  std::pair<std::uint32_t, std::uint32_t> dense{0, 0}, moe{0, 0};
  for (std::uint32_t l = s.first_layer; l < end; ++l) {
    auto& kind = a.is_moe_layer(l) ? moe : dense;
    if (kind.second++ == 0) kind.first = l;
  }
  for (const auto& kind : {dense, moe})
    if (kind.second > 0) s.layer_kinds.push_back(kind);
  for (const auto& [layer, n] : s.layer_kinds) {
    u64 layer_params = 0;
    for (auto g : rank_layer_tensors(a, layer, tp)) {
      layer_params = sat_add(layer_params, sat_mul(sat_mul(g.rows, g.cols), g.count));
      if (is_block_matrix(g.role)) s.largest_matrix_raw = std::max(s.largest_matrix_raw, sat_mul(g.rows, g.cols));
      g.count = sat_mul(g.count, n);
      s.layer_groups.push_back(g);
    }
    s.largest_layer_raw = std::max(s.largest_layer_raw, layer_params);
    s.raw_params = sat_add(s.raw_params, sat_mul(layer_params, n));
  }
  for (auto g : rank_global_tensors(a, tp)) {
    const bool keep = g.role == TensorRole::token_embedding ? s.embedding : s.head;
    if (!keep) continue;
    s.global_groups.push_back(g);
  }
  // Tied embeddings across stages: the last stage keeps its own copy of the
  // embedding as the output head (Megatron all-reduces their gradients).
  if (a.tied_embeddings && stages > 1 && s.head) {
    for (auto g : rank_global_tensors(a, tp))
      if (g.role == TensorRole::token_embedding) {
        g.role = TensorRole::output_head;
        s.global_groups.push_back(g);
      }
  }
  for (const auto& g : s.global_groups) {
    const u64 p = sat_mul(sat_mul(g.rows, g.cols), g.count);
    s.raw_params = sat_add(s.raw_params, p);
    s.largest_global_raw = std::max(s.largest_global_raw, p);
  }
  return s;
}

std::string optimizer_rule(OptimizerKind o, TrainingPrecision p) {
  const std::string_view state = p == TrainingPrecision::bf16_pure ? "bf16" : "fp32";
  const std::string_view bytes = p == TrainingPrecision::bf16_pure ? "2" : "4";
  switch (o) {
    case OptimizerKind::adamw: return text::cat("AdamW: ", state, " momentum and variance, 2 x ", bytes, " bytes per parameter");
    case OptimizerKind::adamw_32bit:
      return "bitsandbytes 32-bit AdamW (paged or not): fp32 momentum and variance, 2 x 4 bytes per parameter";
    case OptimizerKind::adamw_8bit:
      return "bitsandbytes 8-bit AdamW: two 1-byte states per parameter plus an fp32 absmax per 256 values per state; "
             "tensors under 4096 values keep 32-bit states";
    case OptimizerKind::adafactor:
      return text::cat("Adafactor: factored second moment, ", bytes, " bytes x (rows + columns) per matrix and per "
                       "element of vectors; no first moment (beta1 = None)");
    case OptimizerKind::sgd: return "SGD without momentum: no state";
    case OptimizerKind::sgd_momentum: return text::cat("SGD with momentum: one ", state, " buffer, ", bytes, " bytes per parameter");
  }
  return {};
}

// Model states of trainable tensors: weights, gradients, master weights, optimizer states.
void Builder::trainable_states(DeviceMemory& d, const Role& r, std::string_view weights_name, u64 params,
                      u64 optimizer_state_bytes, std::string_view what) const {
  const TrainingPrecision p = s.precision;
  const u64 w = p == TrainingPrecision::fp32 ? 4 : 2;
  const bool offload_params = s.offload == OffloadMode::parameters;
  const bool offload_optimizer = s.offload != OffloadMode::none;
  d.components.push_back({std::string(weights_name), r.name, MemoryCategory::parameters, where(offload_params),
                          sat_mul(shard(params, 3), w),
                          text::cat(w, " bytes (", dtype_name(p), ") x ", params, " ", what, shard_rule(3),
                                    offload_params ? "; in host memory (parameter offload)" : "")});
  const bool grads_offloaded = offload_optimizer && s.zero_stage >= 2;
  d.components.push_back({"gradients", r.name, MemoryCategory::gradients, where(grads_offloaded),
                          sat_mul(shard(params, 2), w),
                          text::cat(w, " bytes (", dtype_name(p), ") x ", params, " ", what, shard_rule(2),
                                    grads_offloaded ? "; the partition moves to host memory after reduce-scatter (ZeRO-Offload)" : "")});
  if (mixed(p))
    d.components.push_back({"master_weights", r.name, MemoryCategory::optimizer, where(offload_optimizer),
                            sat_mul(shard(params, 1), 4),
                            text::cat("4 bytes (fp32 master copy) x ", params, " ", what, shard_rule(1),
                                      offload_optimizer ? "; in host memory (optimizer offload)" : "")});
  if (optimizer_state_bytes > 0 || s.optimizer != OptimizerKind::sgd)
    d.components.push_back({"optimizer_states", r.name, MemoryCategory::optimizer, where(offload_optimizer),
                            shard(optimizer_state_bytes, 1),
                            text::cat(optimizer_rule(s.optimizer, p), ": ", text::decimal_gb(optimizer_state_bytes), " for ", params,
                                      " ", what, shard_rule(1),
                                      offload_optimizer ? "; in host memory (optimizer offload)" : "")});
}

// Frozen weights (a LoRA base, a reference/reward/teacher model, prefix tuning's model).
Result<u64> Builder::frozen_weights(DeviceMemory& d, const Role& r, const StageShape& shape, std::string_view name) const {
  const QuantizationLevel dense = compute_level(s.precision);
  u64 raw = 0;
  for (const auto* list : {&shape.layer_groups, &shape.global_groups})
    for (const auto& g : *list) {
      const auto b = frozen_tensor_bytes(g, r.storage, s.double_quantization, dense);
      if (!b) return fail(ErrorKind::invalid_input, "frozen weight bytes overflow 64 bits");
      raw = sat_add(raw, *b);
    }
  const u64 bytes = r.scale(raw);
  const bool offloaded = s.offload == OffloadMode::parameters;
  std::string format;
  switch (r.storage) {
    case QuantizationLevel::nf4:
      format = s.double_quantization
                   ? "NF4 linear layers (blocks of 64, 8-bit absmax double-quantized with an fp32 constant per 256 "
                     "blocks: 4.127 bits per weight)"
                   : "NF4 linear layers (blocks of 64 with an fp32 absmax: 4.5 bits per weight)";
      break;
    case QuantizationLevel::int8: format = "LLM.int8 linear layers (1 byte per weight, an fp32 scale per row)"; break;
    case QuantizationLevel::fp8_e4m3:
    case QuantizationLevel::fp8_e5m2: format = "fp8 linear layers with an fp32 scale per tensor"; break;
    default: format = text::cat(to_string(r.storage), " weights"); break;
  }
  if (info(r.storage).family != QuantizationFamily::floating || r.storage == QuantizationLevel::fp8_e4m3 ||
      r.storage == QuantizationLevel::fp8_e5m2)
    format += text::cat(", embeddings, head and norms in ", to_string(dense));
  const u64 params = r.scale(shape.raw_params);
  d.components.push_back({std::string(name), r.name, MemoryCategory::parameters, where(offloaded), shard(bytes, 3),
                          text::cat("frozen: ", format, ", ", params, " parameters = ", text::decimal_gb(bytes), shard_rule(3),
                                    offloaded ? "; in host memory (parameter offload)" : "")});
  return bytes;
}

// One pipeline stage of the run.
Result<DeviceMemory> build_stage(const Builder& b, const std::vector<Role>& roles, std::uint32_t stage) {
  const TrainingSettings& s = b.s;
  const std::uint32_t pp = s.pipeline_parallel;
  const std::uint32_t tp = s.tensor_parallel;
  DeviceMemory d;
  d.stage = stage;
  d.micro_batches_in_flight = std::min(pp - stage, *s.micro_batches);
  const u64 in_flight = d.micro_batches_in_flight;

  u64 training_transient = 0;   // activations-phase buffers: logits, reference forward...
  u64 recompute_working_set = 0;
  u64 rollout_generation = 0;   // RLHF experience phase: the policy's KV cache while it generates
  u64 rollout_forward = 0;      // then no-grad forward passes of the reference and reward models
  u64 largest_unit_bytes = 0;   // ZeRO-3: the largest unit of a trained model, gathered
  u64 largest_unit_grads = 0;
  u64 trainable_on_rank = 0;
  u64 dequantize_bytes = 0;

  for (std::size_t i = 0; i < roles.size(); ++i) {
    const Role& r = roles[i];
    if (r.weights == Weights::shared) continue;
    const ModelArchitecture& a = r.model->architecture;
    const StageShape shape = stage_shape(a, stage, pp, tp);
    if (i == 0) {
      d.first_layer = shape.first_layer;
      d.layer_count = shape.layer_count;
      d.embedding = shape.embedding;
      d.head = shape.head;
    }
    const u64 e = s.precision == TrainingPrecision::fp32 ? 4 : 2;
    const u64 tokens_rep = s.sequence_parallel ? (s.sequence / tp) * s.micro_batch * r.batch_factor
                                               : s.sequence * s.micro_batch * r.batch_factor;
    const u64 tokens = s.sequence * s.micro_batch * r.batch_factor;
    const u64 vocab_rank = ceil_div_or_self(a.vocab_size, tp);

    if (r.weights == Weights::frozen) {
      auto bytes = b.frozen_weights(d, r, shape, "weights");
      if (!bytes) return fail(bytes.error());
      // Its forward pass runs without gradients: at most one layer's tensors live at a time.
      ActivationSettings as = b.activation_settings(r, false);
      u64 working = 0;
      for (const auto& [layer, n] : shape.layer_kinds) {
        auto la = layer_activations(a, layer, as);
        if (!la) return fail(la.error());
        working = std::max(working, la->without_recompute);
      }
      const u64 logits = shape.head && r.language_head ? sat_mul(sat_mul(tokens, vocab_rank), 4) : 0;
      const std::string who = r.name;
      if (s.method == TrainingMethod::rlhf) {
        rollout_forward = std::max(rollout_forward, sat_add(working, logits));
      } else if (s.method == TrainingMethod::distillation) {
        // The teacher runs before the student; its logits stay for the distillation loss.
        if (logits > 0)
          d.components.push_back({"logits", who, MemoryCategory::other, MemoryLocation::device, logits,
                                  text::cat("fp32 teacher logits kept for the distillation loss: 4 bytes x ", tokens,
                                            " tokens x ", vocab_rank, " vocabulary entries", tp > 1 ? " (vocabulary / tp)" : "")});
        training_transient = sat_add(training_transient, logits);
      } else {
        // DPO: the reference runs after the policy's forward pass, while its activations are alive.
        const u64 both = sat_add(working, logits);
        d.components.push_back({"forward_working_set", who, MemoryCategory::other, MemoryLocation::device, both,
                                text::cat("no-grad forward pass: at most one layer's tensors (", text::decimal_gb(working), ")",
                                          logits ? text::cat(" and fp32 logits of ", tokens, " tokens (", text::decimal_gb(logits), ")") : std::string(),
                                          " live at once")});
        training_transient = sat_add(training_transient, both);
      }
      continue;
    }

    // A trained model: full, LoRA or prefix.
    const u64 stage_params = r.scale(shape.raw_params);
    if (r.weights == Weights::full) {
      std::vector<TensorGroup> groups = shape.layer_groups;
      groups.insert(groups.end(), shape.global_groups.begin(), shape.global_groups.end());
      const u64 opt = r.scale(optimizer_bytes(s.optimizer, s.precision, groups));
      b.trainable_states(d, r, "weights", stage_params, opt, "parameters");
      trainable_on_rank = sat_add(trainable_on_rank, stage_params);
      const u64 w = s.precision == TrainingPrecision::fp32 ? 4 : 2;
      const u64 unit = r.scale(std::max(shape.largest_layer_raw, shape.largest_global_raw));
      largest_unit_bytes = std::max(largest_unit_bytes, sat_mul(unit, w));
      largest_unit_grads = std::max(largest_unit_grads, sat_mul(unit, w));
    } else if (r.weights == Weights::lora) {
      auto frozen = b.frozen_weights(d, r, shape, "frozen_weights");
      if (!frozen) return fail(frozen.error());
      const auto adapters = lora_groups(shape.layer_groups, *s.lora_rank, *s.lora_targets);
      const u64 adapter_params = params_of(adapters);
      const u64 opt = optimizer_bytes(s.optimizer, s.precision, adapters);
      b.trainable_states(d, r, "adapter_weights", adapter_params, opt,
                         text::cat("LoRA parameters (r=", *s.lora_rank, " x (d_in + d_out) on ", to_string(*s.lora_targets), ")"));
      trainable_on_rank = sat_add(trainable_on_rank, adapter_params);
      const u64 layers = std::max<u64>(shape.layer_count, 1);
      largest_unit_bytes = std::max(largest_unit_bytes, ceil_div_or_self(*frozen, layers));
      const bool dense_storage = r.storage == QuantizationLevel::fp32 || r.storage == QuantizationLevel::bf16 ||
                                 r.storage == QuantizationLevel::fp16;
      if (!dense_storage) dequantize_bytes = std::max(dequantize_bytes, sat_mul(r.scale(shape.largest_matrix_raw), 2));
    } else {  // prefix
      Role frozen_role = r;
      frozen_role.storage = compute_level(s.precision);
      auto frozen = b.frozen_weights(d, frozen_role, shape, "frozen_weights");
      if (!frozen) return fail(frozen.error());
      const u64 kv = a.mla ? static_cast<u64>(a.attention_heads / tp) * (a.mla->qk_nope_head_dim + a.mla->qk_rope_head_dim)
                           : static_cast<u64>(std::max<std::uint32_t>(a.kv_heads / tp, 1)) * a.head_dim;
      const u64 prefix_width = sat_mul(sat_mul(shape.layer_count, 2), kv);
      std::vector<TensorGroup> trainable;
      if (s.prefix_projection == 0) {
        trainable.push_back({TensorRole::norm, *s.prefix_length, prefix_width, 1});
      } else if (shape.embedding) {
        // The reparameterization MLP produces every layer's prefixes; it sits with the embedding.
        const u64 out = sat_mul(sat_mul(a.layers, 2), kv);
        const u64 width = s.prefix_projection;
        trainable.push_back({TensorRole::norm, *s.prefix_length, a.hidden_size, 1});
        trainable.push_back({TensorRole::norm, width, a.hidden_size, 1});
        trainable.push_back({TensorRole::norm, 1, width, 1});
        trainable.push_back({TensorRole::norm, out, width, 1});
        trainable.push_back({TensorRole::norm, 1, out, 1});
      }
      const u64 prefix_params = params_of(trainable);
      if (prefix_params > 0) {
        b.trainable_states(d, r, "prefix_parameters", prefix_params, optimizer_bytes(s.optimizer, s.precision, trainable),
                           s.prefix_projection ? "prefix-MLP parameters" : text::cat("prefix parameters (", *s.prefix_length,
                                                                                      " tokens x ", shape.layer_count,
                                                                                      " layers x 2 x ", kv, ")"));
        trainable_on_rank = sat_add(trainable_on_rank, prefix_params);
      }
      // The prefixes are expanded over the micro-batch and attended to like cached keys and values.
      const u64 expanded = sat_mul(sat_mul(sat_mul(*s.prefix_length, prefix_width), s.micro_batch), e);
      d.components.push_back({"prefix_key_values", r.name, MemoryCategory::activations, MemoryLocation::device,
                              sat_mul(expanded, in_flight),
                              text::cat(e, " bytes x ", *s.prefix_length, " prefix tokens x ", prefix_width,
                                        " key/value values per token x micro-batch ", s.micro_batch, " x ", in_flight,
                                        " micro-batches in flight")});
      largest_unit_bytes = std::max(largest_unit_bytes, ceil_div_or_self(*frozen, std::max<u64>(shape.layer_count, 1)));
    }

    // Activations of the trained model.
    const ActivationSettings as = b.activation_settings(r, true);
    u64 per_micro_batch = 0;
    u64 layer_stored = 0;
    for (const auto& [layer, n] : shape.layer_kinds) {
      auto la = layer_activations(a, layer, as);
      if (!la) return fail(la.error());
      per_micro_batch = sat_add(per_micro_batch, sat_mul(la->stored, n));
      layer_stored = std::max(layer_stored, la->stored);
      recompute_working_set = std::max(recompute_working_set, la->recompute_working_set);
    }
    std::string extra;
    if (shape.embedding && s.dropout) {
      per_micro_batch = sat_add(per_micro_batch, sat_mul(tokens_rep, a.hidden_size));
      extra += text::cat(" + embedding dropout mask (", tokens_rep, " x ", a.hidden_size, " bytes)");
    }
    if (shape.head) {
      // The final norm's input and the output layer's input (Korthikanti et al.'s 4sbh of the output layer).
      per_micro_batch = sat_add(per_micro_batch, sat_mul(sat_mul(tokens_rep, a.hidden_size), 2 * e));
      extra += text::cat(" + final norm and head inputs (2 x ", e, " bytes x ", tokens_rep, " x ", a.hidden_size, ")");
    }
    const u64 activations = sat_mul(per_micro_batch, in_flight);
    d.components.push_back({"activations", r.name, MemoryCategory::activations, MemoryLocation::device, activations,
                            text::cat(shape.layer_count, " layers x ", text::decimal_gb(layer_stored), " per layer",
                                      shape.layer_kinds.size() > 1 ? " (largest shape)" : "", extra, " = ",
                                      text::decimal_gb(per_micro_batch), " per micro-batch of ", s.micro_batch * r.batch_factor, " x ",
                                      s.sequence, " tokens",
                                      r.batch_factor > 1 ? " (chosen and rejected sequences together)" : "", ", x ",
                                      in_flight, " micro-batch", in_flight > 1 ? "es" : "", " in flight (1F1B, stage ",
                                      stage, " of ", pp, ")")});
    if (shape.head && r.language_head) {
      const u64 logits = sat_mul(sat_mul(tokens, vocab_rank), 4);
      d.components.push_back({"logits", r.name, MemoryCategory::other, MemoryLocation::device, logits,
                              text::cat("fp32 logits for the loss: 4 bytes x ", tokens, " tokens x ", vocab_rank,
                                        " vocabulary entries", tp > 1 ? " (vocabulary / tp)" : "",
                                        " (a fused cross-entropy; an unfused bf16 -> fp32 path holds about 3x)")});
      training_transient = sat_add(training_transient, logits);
    }
    if (s.method == TrainingMethod::rlhf && r.name == "policy") {
      // Rollouts: the policy generates micro-batch x sequence tokens with a KV cache.
      auto per_token = kv_cache_bytes_per_token_per_layer(a, compute_level(s.precision), tp);
      if (!per_token) return fail(per_token.error());
      const u64 kv = sat_mul(sat_mul(*per_token, shape.layer_count), tokens);
      const u64 logits = shape.head ? sat_mul(sat_mul(s.micro_batch, vocab_rank), 4) : 0;
      rollout_generation = sat_add(rollout_generation, sat_add(kv, logits));
    }
  }

  // Temporary buffers of the step.
  const u64 activations_total = [&] {
    u64 sum = 0;
    for (const auto& c : d.components)
      if (c.category == MemoryCategory::activations) sum = sat_add(sum, c.bytes);
    return sum;
  }();
  if (s.recompute == Recompute::full && recompute_working_set > 0)
    d.components.push_back({"recompute_working_set", roles.front().name, MemoryCategory::other, MemoryLocation::device,
                            recompute_working_set,
                            "full recomputation rebuilds one layer's activations during its backward pass"});
  if (s.zero_stage == 3 && (s.data_parallel > 1 || s.offload == OffloadMode::parameters) && largest_unit_bytes > 0) {
    d.components.push_back({"gathered_parameters", roles.front().name, MemoryCategory::other, MemoryLocation::device,
                            sat_mul(largest_unit_bytes, 2),
                            text::cat("ZeRO-3/FSDP all-gathers one layer (or the embedding) at a time and prefetches the "
                                      "next: 2 x ", text::decimal_gb(largest_unit_bytes))});
    if (largest_unit_grads > 0)
      d.components.push_back({"unsharded_gradients", roles.front().name, MemoryCategory::other, MemoryLocation::device,
                              largest_unit_grads,
                              text::cat("one layer's full gradients before their reduce-scatter: ", text::decimal_gb(largest_unit_grads))});
  }
  if (s.zero_stage == 2 && s.data_parallel > 1 && trainable_on_rank > 0) {
    const u64 w = s.precision == TrainingPrecision::fp32 ? 4 : 2;
    const u64 elements = std::min(deepspeed_reduce_bucket, trainable_on_rank);
    d.components.push_back({"reduce_bucket", roles.front().name, MemoryCategory::other, MemoryLocation::device,
                            sat_mul(elements, w),
                            text::cat("gradient reduce bucket: ", elements, " elements x ", w,
                                      " bytes (DeepSpeed reduce_bucket_size 5e8, capped at the trainable parameters)")});
  }
  if (dequantize_bytes > 0)
    d.components.push_back({"dequantized_weight", roles.front().name, MemoryCategory::other, MemoryLocation::device,
                            dequantize_bytes,
                            "the largest quantized matrix dequantized to 16-bit for its matmul (forward and backward)"});
  if (s.method == TrainingMethod::rlhf) {
    const u64 rollout_transient = std::max(rollout_generation, rollout_forward);
    const u64 training_phase = sat_add(activations_total, sat_add(training_transient, recompute_working_set));
    if (rollout_transient > training_phase)
      d.components.push_back({"rollout_working_set", "policy", MemoryCategory::other, MemoryLocation::device,
                              rollout_transient - training_phase,
                              text::cat("experience phase (policy KV cache for ", s.micro_batch, " x ", s.sequence,
                                        " generated tokens, reference and reward forward passes: ", text::decimal_gb(rollout_transient),
                                        ") beyond the training phase's ", text::decimal_gb(training_phase))});
  }
  const RuntimeOverhead overhead = runtime_overhead(b.backend, s.devices() > 1);
  if (overhead.bytes > 0)
    d.components.push_back({"runtime_overhead", "runtime", MemoryCategory::other, MemoryLocation::device, overhead.bytes,
                            std::string(overhead.reason)});

  for (const auto& c : d.components) {
    if (c.location == MemoryLocation::host) {
      d.host_bytes = sat_add(d.host_bytes, c.bytes);
      continue;
    }
    switch (c.category) {
      case MemoryCategory::parameters: d.parameters_bytes = sat_add(d.parameters_bytes, c.bytes); break;
      case MemoryCategory::gradients: d.gradients_bytes = sat_add(d.gradients_bytes, c.bytes); break;
      case MemoryCategory::optimizer: d.optimizer_bytes = sat_add(d.optimizer_bytes, c.bytes); break;
      case MemoryCategory::activations: d.activations_bytes = sat_add(d.activations_bytes, c.bytes); break;
      case MemoryCategory::other: d.other_bytes = sat_add(d.other_bytes, c.bytes); break;
    }
  }
  d.total_bytes = sat_add(sat_add(sat_add(d.parameters_bytes, d.gradients_bytes), sat_add(d.optimizer_bytes, d.activations_bytes)),
                      d.other_bytes);
  return d;
}

}  // namespace hwaccel::training_detail
