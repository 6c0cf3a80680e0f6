// What a training run is: method, precision, optimizer, sharding, workload,
// adapters, and the parsers the command line uses for each of them.
module;
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
export module hwaccel.training:settings;
import hwaccel.hardware;
import hwaccel.plan;

export namespace hwaccel {

/// How the weights of the trained model change, and which other models the
/// run holds in memory.
enum class TrainingMethod : std::uint8_t {
  full,          ///< full fine-tuning or pre-training: every parameter trains
  lora,          ///< frozen base, trainable low-rank adapters (Hu et al. 2021)
  qlora,         ///< frozen 4-bit NF4 base, 16-bit adapters (Dettmers et al. 2023)
  prefix,        ///< frozen model, trainable key/value prefixes per layer (Li & Liang 2021)
  dpo,           ///< trainable policy and a frozen reference model (Rafailov et al. 2023)
  rlhf,          ///< PPO: trainable policy and value models, frozen reference and reward models
  distillation,  ///< frozen teacher, trainable student
};

/// "full", "lora", "qlora", "prefix", "dpo", "rlhf", "distillation".
std::string_view to_string(TrainingMethod method) noexcept;
/// Accepts the names above and "pretrain", "finetune", "ppo", "distill";
/// anything else is an invalid_input error listing the names.
[[nodiscard]] Result<TrainingMethod> parse_training_method(std::string_view name);

/// Number formats of weights, gradients and optimizer states.
enum class TrainingPrecision : std::uint8_t {
  fp32,        ///< weights, gradients and states in fp32
  bf16_mixed,  ///< bf16 weights and gradients, fp32 master weights and states
  fp16_mixed,  ///< fp16 weights and gradients (loss scaling), fp32 master weights and states
  bf16_pure,   ///< bf16 everywhere, no master copy (needs stochastic rounding or Kahan summation)
};

/// "fp32", "bf16", "fp16", "bf16-pure".
std::string_view to_string(TrainingPrecision precision) noexcept;
/// Accepts the names above and "bf16-mixed", "fp16-mixed", "mixed", "amp",
/// "pure-bf16", "float32"; an invalid_input error otherwise.
[[nodiscard]] Result<TrainingPrecision> parse_training_precision(std::string_view name);

enum class OptimizerKind : std::uint8_t {
  adamw,         ///< first and second moment per parameter, in the type of the weights it updates
  adamw_32bit,   ///< bitsandbytes (paged) 32-bit AdamW: fp32 moments whatever the weights' type (QLoRA's paged_adamw_32bit)
  adamw_8bit,    ///< bitsandbytes block-wise 8-bit moments
  adafactor,     ///< factored second moment, no first moment (Shazeer & Stern 2018; transformers' default beta1=None)
  sgd,           ///< no state
  sgd_momentum,  ///< one momentum buffer per parameter
};

/// "adamw", "adamw-32bit", "adamw-8bit", "adafactor", "sgd", "sgd-momentum".
std::string_view to_string(OptimizerKind optimizer) noexcept;
/// Accepts the names above and "adam", "paged-adamw-32bit", "adamw8bit",
/// "adamw_8bit", "adam-8bit", "paged-adamw-8bit", "bnb-adamw-8bit",
/// "momentum"; an invalid_input error listing the names otherwise.
[[nodiscard]] Result<OptimizerKind> parse_optimizer(std::string_view name);

/// What leaves the accelerator for host memory (DeepSpeed offload).
enum class OffloadMode : std::uint8_t {
  none,
  optimizer,   ///< ZeRO-Offload: fp32 master weights and optimizer states (and, from stage 2, gradients) on the host
  parameters,  ///< ZeRO-Infinity style: parameters as well (stage 3 only)
};

/// "none", "optimizer", "params".
std::string_view to_string(OffloadMode mode) noexcept;
[[nodiscard]] Result<OffloadMode> parse_offload(std::string_view name);

/// Activation recomputation (gradient checkpointing).
enum class Recompute : std::uint8_t {
  none,       ///< every activation the backward pass needs is kept
  selective,  ///< attention scores are recomputed (Korthikanti et al. 2022)
  full,       ///< only each layer's input is kept; the layer is recomputed in the backward pass
};

std::string_view to_string(Recompute recompute) noexcept;
[[nodiscard]] Result<Recompute> parse_recompute(std::string_view name);

/// How attention is computed, which decides whether the s x s scores are stored.
enum class AttentionKernel : std::uint8_t {
  flash,     ///< FlashAttention / fused SDPA: scores are recomputed in the backward pass
  standard,  ///< scores materialised (Megatron's fused softmax, the paper's accounting)
};

std::string_view to_string(AttentionKernel kernel) noexcept;
[[nodiscard]] Result<AttentionKernel> parse_attention_kernel(std::string_view name);

/// The linear layers LoRA can adapt, named as PEFT's target_modules are
/// without the "_proj" suffix.
enum class LoraTarget : std::uint8_t { q, k, v, o, gate, up, down };

inline constexpr std::uint32_t lora_target_count = 7;

/// A set of LoRA targets.
struct LoraTargets {
  std::uint8_t mask = 0;

  constexpr bool has(LoraTarget t) const noexcept { return (mask >> static_cast<unsigned>(t)) & 1u; }
  constexpr LoraTargets& add(LoraTarget t) noexcept {
    mask = static_cast<std::uint8_t>(mask | (1u << static_cast<unsigned>(t)));
    return *this;
  }
  constexpr bool empty() const noexcept { return mask == 0; }
  /// Query and value projections: PEFT's default for Llama-style models and
  /// the LoRA paper's choice for GPT-3.
  static constexpr LoraTargets query_value() noexcept { return LoraTargets{}.add(LoraTarget::q).add(LoraTarget::v); }
  /// Every linear layer of a block: the QLoRA paper's choice.
  static constexpr LoraTargets all_linear() noexcept { return LoraTargets{0x7f}; }

  friend constexpr bool operator==(const LoraTargets&, const LoraTargets&) = default;
};

/// "q,v", "q,k,v,o,gate,up,down".
std::string to_string(LoraTargets targets);
/// A comma list of q, k, v, o, gate, up, down (a "_proj" suffix is
/// accepted: "q_proj,v_proj"), or "all" / "all-linear"; an invalid_input
/// error names the unknown entry.
[[nodiscard]] Result<LoraTargets> parse_lora_targets(std::string_view list);

/// Sharding of model states over the data-parallel group (Rajbhandari et
/// al. 2019; PyTorch FSDP's NO_SHARD, SHARD_GRAD_OP and FULL_SHARD are
/// stages 0, 2 and 3).
[[nodiscard]] Result<std::uint32_t> parse_zero_stage(std::string_view name);

/// Largest data-, tensor- or pipeline-parallel degree, and the most devices
/// dp x tp x pp may take.
inline constexpr std::uint32_t max_parallel_degree = 1u << 20;
/// Most sequences in a micro-batch: what the planner runs at once per replica.
inline constexpr std::uint64_t max_micro_batch = max_plan_batch;
/// Longest training sequence, in tokens: the planner's longest context.
inline constexpr std::uint64_t max_training_sequence = max_plan_context;
/// Most micro-batches per optimizer step.
inline constexpr std::uint32_t max_micro_batches = 1'000'000;
/// Largest LoRA rank.
inline constexpr std::uint32_t max_lora_rank = 65536;
/// Most prefix-tuning virtual tokens per layer.
inline constexpr std::uint32_t max_prefix_length = 65536;
/// Widest prefix-tuning reparameterization MLP.
inline constexpr std::uint32_t max_prefix_projection = 1u << 20;

/// A training run. Defaults: full fine-tuning in bf16 mixed precision with
/// AdamW on one device, micro-batch 1, 2048 tokens, FlashAttention, no
/// dropout, no recomputation.
struct TrainingSettings {
  TrainingMethod method = TrainingMethod::full;
  TrainingPrecision precision = TrainingPrecision::bf16_mixed;
  OptimizerKind optimizer = OptimizerKind::adamw;
  std::uint32_t zero_stage = 0;  ///< 0..3
  OffloadMode offload = OffloadMode::none;
  std::uint32_t data_parallel = 1;
  std::uint32_t tensor_parallel = 1;
  std::uint32_t pipeline_parallel = 1;
  /// Megatron sequence parallelism: the activations outside the
  /// tensor-parallel regions are split along the sequence too.
  bool sequence_parallel = false;
  /// Micro-batches per optimizer step (gradient accumulation); a pipeline's
  /// first stage holds min(pipeline_parallel, this) of them under 1F1B.
  /// Empty: as many as pipeline stages.
  std::optional<std::uint32_t> micro_batches;
  std::uint64_t micro_batch = 1;  ///< sequences per micro-batch per data-parallel rank
  std::uint64_t sequence = 2048;  ///< tokens per sequence
  Recompute recompute = Recompute::none;
  AttentionKernel attention = AttentionKernel::flash;
  /// Dropout layers (attention and hidden): GPT-2/3 style pre-training
  /// keeps their masks; Llama-style models have none.
  bool dropout = false;

  /// LoRA rank; empty: 8 for LoRA (PEFT's default), 64 for QLoRA (the QLoRA paper's).
  std::optional<std::uint32_t> lora_rank;
  /// Adapted matrices; empty: q,v for LoRA, all linear layers for QLoRA.
  std::optional<LoraTargets> lora_targets;
  /// Bits of the QLoRA base; only 4 is QLoRA (the seed API's QLoRA{bits}).
  std::optional<std::uint32_t> qlora_bits;
  /// QLoRA's double quantization of the NF4 block scales.
  bool double_quantization = true;
  /// Storage of LoRA's frozen base (fp32, bf16, fp16, int8 for 8-bit LoRA,
  /// fp8_e4m3); empty: the compute type. QLoRA's base is always NF4.
  std::optional<QuantizationLevel> base_quantization;
  /// DPO, RLHF and distillation: train the policy or student with LoRA or
  /// QLoRA instead of fully; DPO's and PPO's reference is then the base
  /// with its adapters disabled, which costs no memory.
  std::optional<TrainingMethod> adapter;
  /// Storage of the frozen reference, reward and teacher models; empty:
  /// the compute type.
  std::optional<QuantizationLevel> frozen_quantization;
  /// Prefix tuning: virtual tokens per layer; empty: 20.
  std::optional<std::uint32_t> prefix_length;
  /// Prefix tuning: width of the reparameterization MLP (PEFT
  /// prefix_projection / encoder_hidden_size); 0: none.
  std::uint32_t prefix_projection = 0;
  /// Share of each device's memory left unused (allocator fragmentation,
  /// memory other processes hold).
  double reserve_fraction = 0.10;

  /// Devices one replica of the run uses: data x tensor x pipeline parallel.
  std::uint64_t devices() const noexcept {
    return static_cast<std::uint64_t>(data_parallel) * tensor_parallel * pipeline_parallel;
  }
  /// The method that trains the main model's weights: `method` for full,
  /// lora, qlora and prefix; `adapter` (or full) for dpo, rlhf and distillation.
  TrainingMethod weight_method() const noexcept;
  /// Range and consistency checks that need no model (sizes at least 1,
  /// ZeRO stage 0..3, offload needing a stage, QLoRA's bits): an
  /// invalid_input error naming the setting.
  [[nodiscard]] Result<void> validate() const;

  friend bool operator==(const TrainingSettings&, const TrainingSettings&) = default;
};

}  // namespace hwaccel
