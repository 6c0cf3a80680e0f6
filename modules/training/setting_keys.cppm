// The training module's settings by name: the tables the CLI (train), the
// C API (hwaccel_train_json) and the Python package (train) read
// TrainingSettings and the auxiliary models through (read_settings,
// hwaccel.base).
module;
#include <span>
#include <string>
export module hwaccel.training:setting_keys;
import hwaccel.hardware;
import hwaccel.plan;
import :settings;
import :estimate;

export namespace hwaccel {

/// The keys of TrainingSettings (defaults and bounds as the struct's and
/// validate()'s):
///   method, adapter, optimizer, precision, zero, offload, recompute,
///   attention, base-quant, frozen-quant   choices (the parse_ functions' names)
///   lora-targets                          text: q,k,v,o,gate,up,down or all
///   dp, tp, pp                            whole numbers 1..max_parallel_degree, default 1
///   micro-batch                           whole number 1..max_micro_batch, default 1
///   seq                                   whole number 1..max_training_sequence, default 2048
///   micro-batches                         whole number 1..max_micro_batches; default pp
///   lora-rank                             whole number 1..max_lora_rank; default 8 (QLoRA 64)
///   qlora-bits                            whole number 1..32 (only 4 is QLoRA)
///   prefix-length                         whole number 1..max_prefix_length; default 20
///   prefix-projection                     whole number 0..max_prefix_projection, default 0
///   sequence-parallel, dropout            booleans, default false
///   double-quant                          boolean, default true
///   reserve                               number 0..0.95, default 0.1
std::span<const SettingKey<TrainingSettings>> training_setting_keys() noexcept;

/// Reads training settings (read_settings over training_setting_keys()),
/// then checks them together (TrainingSettings::validate).
[[nodiscard]] Result<TrainingSettings> read_training_settings(std::span<const Setting> values);

/// The other models a training request names (training_model_keys()).
struct TrainingModels {
  std::string teacher;       ///< "teacher": distillation's teacher, a catalogue id or model file
  std::string reward_model;  ///< "reward-model": RLHF's reward model

  /// The models loaded; a load error keeps its kind, its message prefixed
  /// with the key ("teacher: ...").
  [[nodiscard]] Result<AuxiliaryModels> load() const;
};

/// The keys of TrainingModels: teacher and reward-model, both text.
std::span<const SettingKey<TrainingModels>> training_model_keys() noexcept;

/// Reads the auxiliary model names (read_settings over training_model_keys()).
[[nodiscard]] Result<TrainingModels> read_training_models(std::span<const Setting> values);

}  // namespace hwaccel
