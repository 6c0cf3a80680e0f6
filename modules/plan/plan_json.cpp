// A plan as canonical JSON (fixed field order, no locale).
module;
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
module hwaccel.plan;

namespace hwaccel {
namespace {

void write_optional(json::Writer& w, std::string_view key, const std::optional<double>& v) {
  w.key(key);
  if (v) w.value(*v);
  else w.null();
}

}  // namespace

std::string to_json(const Plan& p, bool pretty) {
  json::Writer w(pretty, 1024 + p.shards.size() * 400);
  write_json(w, p);
  return std::move(w).take();
}

void write_json(json::Writer& w, const Plan& p) {
  w.begin_object();
  w.key("model").begin_object();
  w.field("name", p.model_name);
  w.field("source", to_string(p.model_source));
  w.field("params", p.parameters);
  w.field("active_params", p.active_parameters);
  w.field("layers", p.layers);
  w.field("architecture_assumed", p.architecture_assumed);
  w.end_object();
  w.key("quantization").begin_object();
  w.field("level", to_string(p.quantization));
  w.field("name", info(p.quantization).display_name);
  w.field("bits_per_weight", info(p.quantization).bits_per_weight());
  w.field("bits_per_parameter", p.weight_bits_per_parameter);
  w.field("suggested", p.quantization_suggested);
  w.end_object();
  w.key("kv_cache").begin_object();
  w.field("type", to_string(p.kv_cache_type));
  w.field("bytes_per_token", p.memory.kv_cache_bytes_per_token);
  w.end_object();
  w.field("context", p.context);
  w.field("batch", p.batch);
  w.field("reserve_fraction", p.reserve_fraction);
  w.key("memory").begin_object();
  w.field("weights_bytes", p.memory.weights_bytes);
  w.field("kv_cache_bytes", p.memory.kv_cache_bytes);
  w.field("activation_bytes", p.memory.activation_bytes);
  w.field("overhead_bytes", p.memory.overhead_bytes);
  w.field("total_bytes", p.memory.total_bytes);
  w.end_object();
  w.key("strategy").begin_object();
  w.field("name", p.strategy.name());
  w.field("tp", p.strategy.tensor_parallel);
  w.field("pp", p.strategy.pipeline_parallel);
  w.field("dp", p.strategy.data_parallel);
  w.field("cpu_offload_layers", p.strategy.cpu_offload_layers);
  w.field("ep", p.strategy.expert_parallel);
  w.field("nodes", p.strategy.nodes);
  w.end_object();
  if (!p.nodes.empty()) {
    w.field("nodes", p.nodes);
    w.key("fabric");
    if (p.fabric) {
      w.begin_object();
      w.field("kind", p.fabric->kind);
      w.field("port_gbps", p.fabric->port_gbps);
      w.field("ports_per_node", p.fabric->ports_per_node);
      w.field("latency_us", p.fabric->latency_us);
      w.field("source", p.fabric->source);
      w.end_object();
    } else {
      w.null();
    }
  }
  w.key("shards").begin_array();
  for (const auto& s : p.shards) {
    w.begin_object();
    if (!s.node.empty()) w.field("node", s.node);
    w.field("device", s.device);
    w.field("name", s.device_name);
    w.field("spec_id", s.spec_id);
    w.field("replica", s.replica);
    w.field("stage", s.stage);
    w.field("tp_rank", s.tp_rank);
    w.key("layers");
    if (s.layer_count > 0) {
      w.begin_array();
      w.value(s.first_layer);
      w.value(s.first_layer + s.layer_count - 1);
      w.end_array();
    } else {
      w.null();
    }
    w.field("embedding", s.embedding);
    w.field("head", s.head);
    w.field("cpu_offload", s.cpu_offload);
    w.field("weights_bytes", s.weights_bytes);
    w.field("kv_cache_bytes", s.kv_cache_bytes);
    w.field("activation_bytes", s.activation_bytes);
    w.field("overhead_bytes", s.overhead_bytes);
    w.field("total_bytes", s.total_bytes);
    w.field("capacity_bytes", s.capacity_bytes);
    w.end_object();
  }
  w.end_array();
  w.key("throughput").begin_object();
  write_optional(w, "decode_tokens_per_s", p.throughput.decode_tokens_per_s);
  write_optional(w, "decode_tokens_per_s_total", p.throughput.decode_tokens_per_s_total);
  write_optional(w, "decode_ceiling_tokens_per_s", p.throughput.decode_ceiling_tokens_per_s);
  write_optional(w, "prefill_tokens_per_s", p.throughput.prefill_tokens_per_s);
  w.field("bottleneck", p.throughput.decode_bottleneck);
  w.field("prefill_bottleneck", p.throughput.prefill_bottleneck);
  w.field("bandwidth_source", p.throughput.bandwidth_source);
  w.field("runtime", p.throughput.runtime);
  w.field("runtime_calibrated", p.throughput.runtime_calibrated);
  write_optional(w, "decode_tokens_per_s_low", p.throughput.decode_tokens_per_s_low);
  write_optional(w, "decode_tokens_per_s_high", p.throughput.decode_tokens_per_s_high);
  if (const auto& rs = p.throughput.llama_row_split) {
    w.key("llama_row_split").begin_object();
    w.field("devices", rs->devices);
    w.field("fits", rs->fits);
    w.field("main_device_bytes", rs->main_device_bytes);
    write_optional(w, "decode_tokens_per_s", rs->decode_tokens_per_s);
    write_optional(w, "decode_tokens_per_s_low", rs->decode_tokens_per_s_low);
    write_optional(w, "decode_tokens_per_s_high", rs->decode_tokens_per_s_high);
    write_optional(w, "decode_ceiling_tokens_per_s", rs->decode_ceiling_tokens_per_s);
    w.field("sync_s_per_token", rs->sync_s_per_token);
    w.end_object();
  }
  w.key("serving");
  if (const auto& sv = p.throughput.serving) {
    w.begin_object();
    w.field("requested_batch", sv->requested_batch);
    w.field("batch", sv->batch);
    w.field("kv_capacity_sequences", sv->kv_capacity_sequences);
    w.field("input_tokens", sv->input_tokens);
    w.field("output_tokens", sv->output_tokens);
    w.field("replicas", sv->replicas);
    w.field("output_tokens_per_s", sv->output_tokens_per_s);
    w.field("output_tokens_per_s_low", sv->output_tokens_per_s_low);
    w.field("output_tokens_per_s_high", sv->output_tokens_per_s_high);
    w.field("time_to_first_token_s", sv->time_to_first_token_s);
    w.field("time_per_output_token_s", sv->time_per_output_token_s);
    w.field("bottleneck", sv->decode_bottleneck);
    w.end_object();
  } else {
    w.null();
  }
  w.end_object();
  w.key("power");
  if (const auto& pw = p.power) {
    w.begin_object();
    w.field("basis", pw->basis);
    w.field("watts", pw->watts);
    w.field("watts_low", pw->watts_low);
    w.field("watts_high", pw->watts_high);
    w.field("energy_per_output_token_j", pw->energy_per_output_token_j);
    w.field("energy_per_output_token_j_low", pw->energy_per_output_token_j_low);
    w.field("energy_per_output_token_j_high", pw->energy_per_output_token_j_high);
    w.field("tokens_per_joule", pw->tokens_per_joule);
    write_optional(w, "energy_per_request_j", pw->energy_per_request_j);
    write_optional(w, "energy_per_request_j_low", pw->energy_per_request_j_low);
    write_optional(w, "energy_per_request_j_high", pw->energy_per_request_j_high);
    w.field("power_capped", pw->power_capped);
    w.key("devices").begin_array();
    for (const auto& d : pw->devices) {
      w.begin_object();
      if (!d.node.empty()) w.field("node", d.node);
      w.field("device", d.device);
      w.field("idle_watts", d.idle_watts);
      w.field("limit_watts", d.limit_watts);
      w.field("limit_source", d.limit_source);
      w.field("decode_watts", d.decode_watts);
      write_optional(w, "prefill_watts", d.prefill_watts);
      w.field("decode_clock_ratio", d.decode_clock_ratio);
      w.field("prefill_clock_ratio", d.prefill_clock_ratio);
      w.end_object();
    }
    w.end_array();
    w.end_object();
  } else {
    w.null();
  }
  w.field("fits", p.fits);
  w.key("launch").begin_object();
  if (!p.launch.visible_devices.empty()) w.field("visible_devices", p.launch.visible_devices);
  if (!p.launch.vllm.empty()) w.field("vllm", p.launch.vllm);
  if (!p.launch.llama_cpp.empty()) w.field("llama_cpp", p.launch.llama_cpp);
  if (!p.launch.sglang.empty()) w.field("sglang", p.launch.sglang);
  if (!p.launch.trtllm.empty()) w.field("trtllm", p.launch.trtllm);
  if (!p.launch.torchrun.empty()) w.field("torchrun", p.launch.torchrun);
  if (!p.launch.ray.empty()) {
    w.field("ray", p.launch.ray);
  }
  if (!p.launch.node_devices.empty()) {
    w.field("node_devices", p.launch.node_devices);
  }
  if (!p.launch.slurm.empty()) w.field("slurm", p.launch.slurm);
  if (!p.launch.kubernetes.empty()) w.field("kubernetes", p.launch.kubernetes);
  w.end_object();
  w.key("load_time");
  if (p.load_time) {
    w.begin_object();
    w.field("seconds", p.load_time->seconds);
    w.field("bytes", p.load_bytes);
    w.field("storage", p.load_time->storage);
    w.field("read_bandwidth_gbps", p.load_time->read_bandwidth_gbps);
    w.field("bandwidth_source", p.load_time->bandwidth_source);
    w.field("assumption", p.load_time->assumption);
    w.end_object();
  } else {
    w.null();
  }
  w.field("assumptions", p.assumptions);
  w.end_object();
}

}  // namespace hwaccel
