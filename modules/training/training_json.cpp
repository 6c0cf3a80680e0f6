// Canonical JSON of a training estimate (fixed key order, docs/training.md).
module;
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
module hwaccel.training;

namespace hwaccel {
namespace {

void write_device(json::Writer& w, const DeviceMemory& d) {
  w.begin_object();
  w.field("stage", d.stage).field("first_layer", d.first_layer).field("layers", d.layer_count);
  w.field("embedding", d.embedding).field("head", d.head);
  w.field("micro_batches_in_flight", d.micro_batches_in_flight);
  w.field("parameters_bytes", d.parameters_bytes).field("gradients_bytes", d.gradients_bytes);
  w.field("optimizer_bytes", d.optimizer_bytes).field("model_states_bytes", d.model_states_bytes());
  w.field("activations_bytes", d.activations_bytes).field("other_bytes", d.other_bytes);
  w.field("total_bytes", d.total_bytes).field("host_bytes", d.host_bytes);
  w.key("breakdown").begin_array();
  for (const auto& c : d.components) {
    w.begin_object();
    w.field("component", c.name).field("model", c.model).field("category", to_string(c.category));
    w.field("location", to_string(c.location)).field("bytes", c.bytes).field("rule", c.rule);
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

}  // namespace

std::string to_json(const TrainingEstimate& e, bool pretty) {
  const TrainingSettings& s = e.settings;
  json::Writer w(pretty, 4096);
  w.begin_object();
  w.key("model").begin_object();
  w.field("name", e.model_name).field("source", to_string(e.model_source)).field("parameters", e.parameters);
  w.field("layers", e.layers).field("architecture_assumed", e.architecture_assumed);
  w.end_object();
  w.field("method", to_string(s.method));
  if (s.adapter) w.field("adapter", to_string(*s.adapter));
  w.field("precision", to_string(s.precision)).field("optimizer", to_string(s.optimizer));
  w.key("parallel").begin_object();
  w.field("data_parallel", s.data_parallel).field("tensor_parallel", s.tensor_parallel);
  w.field("pipeline_parallel", s.pipeline_parallel).field("devices", s.devices());
  w.field("sequence_parallel", s.sequence_parallel).field("zero_stage", s.zero_stage);
  w.field("offload", to_string(s.offload));
  w.end_object();
  w.key("workload").begin_object();
  w.field("micro_batch", s.micro_batch).field("sequence", s.sequence);
  w.field("micro_batches", s.micro_batches.value_or(s.pipeline_parallel));
  w.field("recompute", to_string(s.recompute)).field("attention", to_string(s.attention)).field("dropout", s.dropout);
  w.end_object();
  if (s.lora_rank && s.lora_targets) {
    w.key("lora").begin_object();
    w.field("rank", *s.lora_rank).field("targets", to_string(*s.lora_targets));
    if (s.base_quantization) w.field("base", to_string(*s.base_quantization));
    if (s.base_quantization == QuantizationLevel::nf4) w.field("double_quantization", s.double_quantization);
    w.end_object();
  }
  if (s.prefix_length) {
    w.key("prefix").begin_object();
    w.field("length", *s.prefix_length).field("projection", s.prefix_projection);
    w.end_object();
  }
  if (s.frozen_quantization) w.field("frozen_quantization", to_string(*s.frozen_quantization));
  w.field("backend", to_string(e.backend));
  w.field("reserve_fraction", s.reserve_fraction);
  w.key("models").begin_array();
  for (const auto& m : e.models) {
    w.begin_object();
    w.field("role", m.role).field("name", m.name).field("parameters", m.parameters);
    w.field("trainable_parameters", m.trainable_parameters).field("architecture_assumed", m.architecture_assumed);
    w.field("storage", m.storage);
    w.end_object();
  }
  w.end_array();
  w.field("trainable_parameters", e.trainable_parameters).field("frozen_parameters", e.frozen_parameters);
  w.key("per_device");
  write_device(w, e.per_device);
  if (e.stages.size() > 1) {
    w.key("stages").begin_array();
    for (const auto& d : e.stages) write_device(w, d);
    w.end_array();
  }
  w.key("fits");
  if (e.fit) w.value(e.fit->fits);
  else w.null();
  if (e.fit) {
    const FitCheck& f = *e.fit;
    w.key("fit").begin_object();
    w.field("device", f.device_name).field("spec_id", f.spec_id);
    w.field("devices_needed", f.devices_needed).field("devices_available", f.devices_available);
    w.field("capacity_bytes", f.capacity_bytes).field("fits", f.fits);
    w.field("host_capacity_bytes", f.host_capacity_bytes).field("host_fits", f.host_fits);
    w.field("reason", f.reason);
    if (f.nodes > 1 || !f.torchrun.empty()) {
      w.field("nodes", f.nodes).field("devices_per_node", f.devices_per_node);
      w.field("torchrun", f.torchrun);
    }
    w.end_object();
  }
  if (e.minimum) {
    const MinimumDevices& m = *e.minimum;
    w.key("minimum_devices").begin_object();
    w.field("found", m.found).field("device", m.device_name).field("spec_id", m.spec_id);
    w.field("capacity_bytes", m.capacity_bytes);
    if (m.found) {
      w.field("devices", m.devices).field("data_parallel", m.data_parallel).field("tensor_parallel", m.tensor_parallel);
      w.field("pipeline_parallel", m.pipeline_parallel).field("zero_stage", m.zero_stage);
      w.field("offload", to_string(m.offload)).field("per_device_bytes", m.per_device_bytes);
    }
    w.field("summary", m.summary);
    w.end_object();
  }
  w.field("warnings", e.warnings);
  w.field("assumptions", e.assumptions);
  w.end_object();
  return std::move(w).take();
}

}  // namespace hwaccel
