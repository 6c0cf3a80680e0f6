// What the training estimate's units share (module-internal, not
// exported): byte arithmetic that saturates, the roles a method trains, the
// builder of one pipeline stage's memory, and the stage's shape.
module;
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
module hwaccel.training:stage_memory;
import hwaccel.hardware;
import hwaccel.plan;
import hwaccel.training;

namespace hwaccel::training_detail {

using u64 = std::uint64_t;
using u128 = unsigned __int128;

inline constexpr u64 u64_max = std::numeric_limits<u64>::max();

inline u64 sat(u128 v) { return v > u64_max ? u64_max : static_cast<u64>(v); }
inline u64 sat_add(u64 a, u64 b) { return b > u64_max - a ? u64_max : a + b; }
inline u64 sat_mul(u64 a, u64 b) { return sat(static_cast<u128>(a) * b); }
inline u64 ceil_div_or_self(u64 a, u64 b) { return b == 0 ? a : a / b + (a % b != 0 ? 1 : 0); }

inline std::string_view dtype_name(TrainingPrecision p) {
  switch (p) {
    case TrainingPrecision::fp32: return "fp32";
    case TrainingPrecision::fp16_mixed: return "fp16";
    default: return "bf16";
  }
}

inline QuantizationLevel compute_level(TrainingPrecision p) {
  switch (p) {
    case TrainingPrecision::fp32: return QuantizationLevel::fp32;
    case TrainingPrecision::fp16_mixed: return QuantizationLevel::fp16;
    default: return QuantizationLevel::bf16;
  }
}

inline bool mixed(TrainingPrecision p) { return p == TrainingPrecision::bf16_mixed || p == TrainingPrecision::fp16_mixed; }

// What one rank of a pipeline stage holds of a model, in the architecture's
// own (unscaled) shapes.
struct StageShape {
  std::uint32_t first_layer = 0;
  std::uint32_t layer_count = 0;
  bool embedding = false;
  bool head = false;
  // Layer groups (counts multiplied by the layers of that shape) and the global tensors.
  std::vector<TensorGroup> layer_groups;
  std::vector<TensorGroup> global_groups;
  // Layers of each shape on the stage, with a representative index.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> layer_kinds;  // (representative layer, count)
  u64 raw_params = 0;
  u64 largest_layer_raw = 0;    // parameters of the largest layer on this rank
  u64 largest_global_raw = 0;   // embedding or head on this rank
  u64 largest_matrix_raw = 0;   // largest single block matrix on this rank
};

// The scale from an architecture's shapes to the model's stated parameter
// count (1 unless the architecture is borrowed for a bare count).
struct Scale {
  u64 num = 1;
  u64 den = 1;
  u64 operator()(u64 raw) const { return sat((static_cast<u128>(raw) * num + den / 2) / den); }
  bool identity() const { return num == den; }
};

// How a role trains.
enum class Weights : std::uint8_t { full, lora, prefix, frozen, shared };

struct Role {
  std::string name;  // "model", "policy", ...
  const ModelDescription* model = nullptr;
  Weights weights = Weights::frozen;
  QuantizationLevel storage = QuantizationLevel::bf16;  // frozen weights (base of LoRA, frozen models)
  u64 batch_factor = 1;       // sequences per micro-batch sequence (DPO: chosen + rejected)
  bool language_head = true;  // produces vocabulary logits the step keeps
  Scale scale;
};

struct Builder {
  const TrainingSettings& s;
  Backend backend;

  std::uint32_t dp() const { return s.data_parallel; }
  u64 shard(u64 x, std::uint32_t min_stage) const { return s.zero_stage >= min_stage ? ceil_div_or_self(x, dp()) : x; }
  std::string shard_rule(std::uint32_t min_stage) const {
    if (s.zero_stage < min_stage) return {};
    return text::cat(" / dp ", dp(), " (ZeRO-", s.zero_stage, ")");
  }
  MemoryLocation where(bool offloaded) const { return offloaded ? MemoryLocation::host : MemoryLocation::device; }

  ActivationSettings activation_settings(const Role& r, bool for_training) const {
    ActivationSettings a;
    a.micro_batch = s.micro_batch * r.batch_factor;
    a.sequence = s.sequence;
    a.tensor_parallel = s.tensor_parallel;
    a.sequence_parallel = s.sequence_parallel;
    a.recompute = for_training ? s.recompute : Recompute::none;
    a.attention = s.attention;
    a.dropout = for_training && s.dropout;
    a.element_bytes = s.precision == TrainingPrecision::fp32 ? 4 : 2;
    if (!for_training || r.weights == Weights::prefix) {
      a.trained_linears = LoraTargets{};
      a.trained_router = false;
    } else if (r.weights == Weights::lora) {
      a.trained_linears = *s.lora_targets;
      a.trained_router = false;
      a.lora_rank = *s.lora_rank;
      a.lora_targets = *s.lora_targets;
    }
    return a;
  }

  // Model states of trainable tensors: weights, gradients, master weights, optimizer states.
  void trainable_states(DeviceMemory& d, const Role& r, std::string_view weights_name, u64 params,
                        u64 optimizer_state_bytes, std::string_view what) const;
  // Frozen weights (a LoRA base, a reference/reward/teacher model, prefix tuning's model).
  Result<u64> frozen_weights(DeviceMemory& d, const Role& r, const StageShape& shape, std::string_view name) const;
};

/// The stage's shape: its layers and tensors (stage_memory.cpp).
StageShape stage_shape(const ModelArchitecture& a, std::uint32_t stage, std::uint32_t stages, std::uint32_t tp);
/// "AdamW: fp32 momentum and variance, ..."
std::string optimizer_rule(OptimizerKind o, TrainingPrecision p);
/// One pipeline stage of the run (stage_memory.cpp).
Result<DeviceMemory> build_stage(const Builder& b, const std::vector<Role>& roles, std::uint32_t stage);

/// The scale from a model's architecture to its stated parameter count (roles.cpp).
Scale scale_of(const ModelDescription& m);
/// Roles of the method, in output order (roles.cpp).
std::vector<Role> roles_of(const TrainingSettings& s, const ModelDescription& model, const AuxiliaryModels& aux);
/// How a role's weights are stored and trained, for people (roles.cpp).
std::string storage_phrase(const Role& r, const TrainingSettings& s);

}  // namespace hwaccel::training_detail
