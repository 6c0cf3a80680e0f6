// Names, parsers and model-independent checks of training settings.
module;
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
module hwaccel.training;

namespace hwaccel {
namespace {

template <class E, std::size_t N>
std::string_view name_of(const std::array<std::string_view, N>& names, E value) noexcept {
  const auto i = static_cast<std::size_t>(value);
  return i < names.size() ? names[i] : "unknown";
}

// Looks `name` up case-insensitively with '_' read as '-'.
template <class E, std::size_t N>
std::optional<E> lookup(const std::array<std::pair<std::string_view, E>, N>& table, std::string_view name) {
  std::string key = text::lower(text::trim(name));
  for (char& c : key)
    if (c == '_') c = '-';
  for (const auto& [alias, value] : table)
    if (alias == key) return value;
  return std::nullopt;
}

constexpr std::array<std::string_view, 7> method_names = {"full", "lora", "qlora", "prefix", "dpo", "rlhf", "distillation"};
constexpr std::array<std::string_view, 4> precision_names = {"fp32", "bf16", "fp16", "bf16-pure"};
constexpr std::array<std::string_view, 6> optimizer_names = {"adamw", "adamw-32bit", "adamw-8bit", "adafactor", "sgd",
                                                             "sgd-momentum"};
constexpr std::array<std::string_view, 3> offload_names = {"none", "optimizer", "params"};
constexpr std::array<std::string_view, 3> recompute_names = {"none", "selective", "full"};
constexpr std::array<std::string_view, 2> attention_names = {"flash", "standard"};
constexpr std::array<std::string_view, 7> target_names = {"q", "k", "v", "o", "gate", "up", "down"};

}  // namespace

std::string_view to_string(TrainingMethod method) noexcept { return name_of(method_names, method); }
std::string_view to_string(TrainingPrecision precision) noexcept { return name_of(precision_names, precision); }
std::string_view to_string(OptimizerKind optimizer) noexcept { return name_of(optimizer_names, optimizer); }
std::string_view to_string(OffloadMode mode) noexcept { return name_of(offload_names, mode); }
std::string_view to_string(Recompute recompute) noexcept { return name_of(recompute_names, recompute); }
std::string_view to_string(AttentionKernel kernel) noexcept { return name_of(attention_names, kernel); }

Result<TrainingMethod> parse_training_method(std::string_view name) {
  using M = TrainingMethod;
  static constexpr std::array<std::pair<std::string_view, M>, 12> table = {{
      {"full", M::full}, {"pretrain", M::full}, {"pre-training", M::full}, {"finetune", M::full},
      {"lora", M::lora}, {"qlora", M::qlora}, {"prefix", M::prefix}, {"dpo", M::dpo},
      {"rlhf", M::rlhf}, {"ppo", M::rlhf}, {"distill", M::distillation}, {"distillation", M::distillation},
  }};
  if (auto m = lookup(table, name)) return *m;
  return fail(ErrorKind::invalid_input,
              text::cat("unknown training method '", text::excerpt(name), "' (one of: ", text::join(method_names), ")"));
}

Result<TrainingPrecision> parse_training_precision(std::string_view name) {
  using P = TrainingPrecision;
  static constexpr std::array<std::pair<std::string_view, P>, 12> table = {{
      {"fp32", P::fp32}, {"float32", P::fp32}, {"bf16", P::bf16_mixed}, {"bf16-mixed", P::bf16_mixed},
      {"mixed", P::bf16_mixed}, {"amp", P::bf16_mixed}, {"mixed-bf16", P::bf16_mixed}, {"fp16", P::fp16_mixed},
      {"fp16-mixed", P::fp16_mixed}, {"mixed-fp16", P::fp16_mixed}, {"bf16-pure", P::bf16_pure},
      {"pure-bf16", P::bf16_pure},
  }};
  if (auto p = lookup(table, name)) return *p;
  return fail(ErrorKind::invalid_input, text::cat("unknown precision '", text::excerpt(name), "' (one of: ",
                                                  text::join(precision_names), ")"));
}

Result<OptimizerKind> parse_optimizer(std::string_view name) {
  using O = OptimizerKind;
  static constexpr std::array<std::pair<std::string_view, O>, 16> table = {{
      {"adamw", O::adamw}, {"adam", O::adamw}, {"adamw-32bit", O::adamw_32bit}, {"adamw32bit", O::adamw_32bit},
      {"paged-adamw-32bit", O::adamw_32bit}, {"paged-adamw", O::adamw_32bit}, {"adamw-8bit", O::adamw_8bit},
      {"adamw8bit", O::adamw_8bit}, {"adam-8bit", O::adamw_8bit}, {"adam8bit", O::adamw_8bit},
      {"paged-adamw-8bit", O::adamw_8bit}, {"bnb-adamw-8bit", O::adamw_8bit},
      {"adafactor", O::adafactor}, {"sgd", O::sgd}, {"sgd-momentum", O::sgd_momentum}, {"momentum", O::sgd_momentum},
  }};
  if (auto o = lookup(table, name)) return *o;
  return fail(ErrorKind::invalid_input, text::cat("unknown optimizer '", text::excerpt(name), "' (one of: ",
                                                  text::join(optimizer_names), ")"));
}

Result<OffloadMode> parse_offload(std::string_view name) {
  using O = OffloadMode;
  static constexpr std::array<std::pair<std::string_view, O>, 5> table = {{
      {"none", O::none}, {"optimizer", O::optimizer}, {"cpu", O::optimizer}, {"params", O::parameters},
      {"parameters", O::parameters},
  }};
  if (auto o = lookup(table, name)) return *o;
  return fail(ErrorKind::invalid_input,
              text::cat("unknown offload '", text::excerpt(name), "' (one of: ", text::join(offload_names), ")"));
}

Result<Recompute> parse_recompute(std::string_view name) {
  using R = Recompute;
  static constexpr std::array<std::pair<std::string_view, R>, 4> table = {{
      {"none", R::none}, {"selective", R::selective}, {"full", R::full}, {"checkpointing", R::full},
  }};
  if (auto r = lookup(table, name)) return *r;
  return fail(ErrorKind::invalid_input, text::cat("unknown recomputation '", text::excerpt(name), "' (one of: ",
                                                  text::join(recompute_names), ")"));
}

Result<AttentionKernel> parse_attention_kernel(std::string_view name) {
  using A = AttentionKernel;
  static constexpr std::array<std::pair<std::string_view, A>, 5> table = {{
      {"flash", A::flash}, {"sdpa", A::flash}, {"flash-attention", A::flash}, {"standard", A::standard},
      {"eager", A::standard},
  }};
  if (auto a = lookup(table, name)) return *a;
  return fail(ErrorKind::invalid_input, text::cat("unknown attention kernel '", text::excerpt(name), "' (one of: ",
                                                  text::join(attention_names), ")"));
}

std::string to_string(LoraTargets targets) {
  std::string out;
  for (std::uint32_t i = 0; i < lora_target_count; ++i) {
    if (!targets.has(static_cast<LoraTarget>(i))) continue;
    if (!out.empty()) out += ',';
    out += target_names[i];
  }
  return out;
}

Result<LoraTargets> parse_lora_targets(std::string_view list) {
  const std::string_view trimmed = text::trim(list);
  if (text::iequals(trimmed, "all") || text::iequals(trimmed, "all-linear") || text::iequals(trimmed, "all_linear"))
    return LoraTargets::all_linear();
  LoraTargets out;
  for (std::string_view item : text::split_trimmed(trimmed, ',')) {
    if (item.size() > 5 && text::iequals(item.substr(item.size() - 5), "_proj")) item.remove_suffix(5);
    bool known = false;
    for (std::uint32_t i = 0; i < lora_target_count; ++i)
      if (text::iequals(item, target_names[i])) {
        out.add(static_cast<LoraTarget>(i));
        known = true;
      }
    if (!known)
      return fail(ErrorKind::invalid_input, text::cat("unknown LoRA target '", text::excerpt(item),
                                                      "' (q, k, v, o, gate, up, down, or all)"));
  }
  if (out.empty()) return fail(ErrorKind::invalid_input, "no LoRA targets given (e.g. q,v or all)");
  return out;
}

Result<std::uint32_t> parse_zero_stage(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, std::uint32_t>, 7> table = {{
      {"0", 0}, {"1", 1}, {"2", 2}, {"3", 3}, {"no-shard", 0}, {"shard-grad-op", 2}, {"full-shard", 3},
  }};
  if (auto s = lookup(table, name)) return *s;
  return fail(ErrorKind::invalid_input, text::cat("unknown ZeRO stage '", text::excerpt(name),
                                                  "' (0, 1, 2, 3, or FSDP's no_shard, shard_grad_op, full_shard)"));
}

TrainingMethod TrainingSettings::weight_method() const noexcept {
  switch (method) {
    case TrainingMethod::dpo:
    case TrainingMethod::rlhf:
    case TrainingMethod::distillation: return adapter.value_or(TrainingMethod::full);
    default: return method;
  }
}

Result<void> TrainingSettings::validate() const {
  constexpr std::uint32_t max_degree = max_parallel_degree;
  const auto degree = [&](std::uint32_t v, std::string_view what) -> Result<void> {
    if (v == 0 || v > max_degree)
      return fail(ErrorKind::invalid_input, text::cat(what, " must be in 1..", max_degree, ", got ", v));
    return {};
  };
  if (auto r = degree(data_parallel, "data-parallel degree"); !r) return r;
  if (auto r = degree(tensor_parallel, "tensor-parallel degree"); !r) return r;
  if (auto r = degree(pipeline_parallel, "pipeline-parallel degree"); !r) return r;
  if (devices() > max_degree)
    return fail(ErrorKind::invalid_input, text::cat("dp '", data_parallel, "', tp '", tensor_parallel, "', pp '",
                                                    pipeline_parallel, "': dp x tp x pp = ", devices(),
                                                    " devices is more than ", max_degree));
  if (micro_batch == 0 || micro_batch > max_micro_batch)
    return fail(ErrorKind::invalid_input,
                text::cat("micro-batch must be in 1..", max_micro_batch, " sequences, got ", micro_batch));
  if (sequence == 0 || sequence > max_training_sequence)
    return fail(ErrorKind::invalid_input,
                text::cat("sequence length must be in 1..", max_training_sequence, " tokens, got ", sequence));
  if (micro_batches && (*micro_batches == 0 || *micro_batches > max_micro_batches))
    return fail(ErrorKind::invalid_input,
                text::cat("micro-batches per step must be in 1..", max_micro_batches, ", got ", *micro_batches));
  if (zero_stage > 3) return fail(ErrorKind::invalid_input, text::cat("ZeRO stage must be 0, 1, 2 or 3, got ", zero_stage));
  if (offload == OffloadMode::optimizer && zero_stage == 0)
    return fail(ErrorKind::invalid_input,
                "offload 'optimizer': optimizer offload (ZeRO-Offload) needs ZeRO stage 1, 2 or 3: stage 0 keeps the "
                "optimizer on the device");
  if (offload == OffloadMode::parameters && zero_stage != 3)
    return fail(ErrorKind::invalid_input,
                text::cat("offload 'params': parameter offload needs ZeRO stage 3 (parameters are partitioned only "
                          "there), got zero '", zero_stage, "'"));
  if (sequence_parallel && tensor_parallel == 1)
    return fail(ErrorKind::invalid_input,
                "sequence-parallel 'true': sequence parallelism splits along the tensor-parallel group: it needs --tp 2 or "
                "more");
  if (sequence_parallel && sequence % tensor_parallel != 0)
    return fail(ErrorKind::invalid_input,
                text::cat("seq '", sequence, "': with sequence parallelism the sequence (", sequence,
                          ") must divide by the tensor-parallel degree (", tensor_parallel, ")"));
  if (lora_rank && (*lora_rank == 0 || *lora_rank > max_lora_rank))
    return fail(ErrorKind::invalid_input, text::cat("LoRA rank must be in 1..", max_lora_rank, ", got ", *lora_rank));
  if (lora_targets && lora_targets->empty()) return fail(ErrorKind::invalid_input, "LoRA needs at least one target matrix");
  if (prefix_length && (*prefix_length == 0 || *prefix_length > max_prefix_length))
    return fail(ErrorKind::invalid_input,
                text::cat("prefix length must be in 1..", max_prefix_length, " virtual tokens, got ", *prefix_length));
  if (prefix_projection > max_prefix_projection)
    return fail(ErrorKind::invalid_input, text::cat("prefix projection width is out of range: ", prefix_projection));
  if (!(reserve_fraction >= 0.0 && reserve_fraction <= 0.95))
    return fail(ErrorKind::invalid_input, text::cat("reserve must be a fraction in [0, 0.95], got ", reserve_fraction));
  if (adapter) {
    if (*adapter != TrainingMethod::lora && *adapter != TrainingMethod::qlora)
      return fail(ErrorKind::invalid_input,
                  text::cat("adapter '", to_string(*adapter), "': an adapter is lora or qlora, got ", to_string(*adapter)));
    if (method != TrainingMethod::dpo && method != TrainingMethod::rlhf && method != TrainingMethod::distillation)
      return fail(ErrorKind::invalid_input,
                  text::cat("adapter '", to_string(*adapter), "' with method '", to_string(method),
                            "': an adapter applies to dpo, rlhf and distillation; to fine-tune with adapters use --method ",
                            to_string(*adapter)));
  }
  const bool quantized_base = weight_method() == TrainingMethod::qlora;
  if (qlora_bits) {
    if (!quantized_base)
      return fail(ErrorKind::invalid_input,
                  text::cat("qlora-bits '", *qlora_bits, "' with method '", to_string(method),
                            "': QLoRA bits apply only to QLoRA"));
    if (*qlora_bits == 16 || *qlora_bits == 32)
      return fail(ErrorKind::invalid_input,
                  text::cat("qlora-bits '", *qlora_bits, "': QLoRA at ", *qlora_bits, " bits is not QLoRA: a ", *qlora_bits,
                            "-bit frozen base with adapters is plain LoRA (--method lora)"));
    if (*qlora_bits == 8)
      return fail(ErrorKind::invalid_input,
                  "qlora-bits '8': QLoRA quantizes the base to 4 bits; an 8-bit base is LoRA with --base-quant int8 "
                  "(LLM.int8)");
    if (*qlora_bits != 4)
      return fail(ErrorKind::invalid_input, text::cat("qlora-bits '", *qlora_bits, "': QLoRA stores the base in 4-bit NF4; ",
                                                      *qlora_bits, " bits is not supported"));
  }
  if (base_quantization) {
    const auto q = *base_quantization;
    if (quantized_base && q != QuantizationLevel::nf4)
      return fail(ErrorKind::invalid_input,
                  text::cat("base-quant '", to_string(q), "': QLoRA's base is 4-bit NF4; a ", to_string(q),
                            " base is LoRA (--method lora --base-quant ",
                            to_string(q), ")"));
    const bool lora_like = weight_method() == TrainingMethod::lora || quantized_base;
    if (!lora_like)
      return fail(ErrorKind::invalid_input, text::cat("base-quant '", to_string(q), "' with method '", to_string(method),
                                                      "': a base quantization applies to LoRA and QLoRA, whose base is frozen"));
    if (weight_method() == TrainingMethod::lora && q == QuantizationLevel::nf4)
      return fail(ErrorKind::invalid_input, "base-quant 'nf4': an NF4 base with adapters is QLoRA: use --method qlora");
  }
  const auto storable = [](QuantizationLevel q) {
    switch (q) {
      case QuantizationLevel::fp32:
      case QuantizationLevel::bf16:
      case QuantizationLevel::fp16:
      case QuantizationLevel::fp8_e4m3:
      case QuantizationLevel::fp8_e5m2:
      case QuantizationLevel::int8:
      case QuantizationLevel::nf4: return true;
      default: return false;
    }
  };
  for (const auto& [level, key, what] : {std::tuple{base_quantization, "base-quant", "base"},
                                         std::tuple{frozen_quantization, "frozen-quant", "frozen-model"}})
    if (level && !storable(*level))
      return fail(ErrorKind::invalid_input,
                  text::cat(key, " '", to_string(*level), "': a ", what,
                            " quantization for training is fp32, bf16, fp16, fp8_e4m3, fp8_e5m2, int8 or nf4; ",
                            to_string(*level), " is an inference format"));
  return {};
}

}  // namespace hwaccel
