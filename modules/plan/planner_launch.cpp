// Launch hints for a plan: environment and command lines for the runtimes.
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

namespace hwaccel::planner_detail {

// The variable a launch sets to the devices it uses (BackendFacts::launch_variable).
std::string visible_devices_variable(Backend b) { return std::string(facts_of(b).launch_variable()); }

// Flags pinned to the releases docs/planning.md names: vLLM 0.10, SGLang
// 0.5, TensorRT-LLM 1.0, PyTorch 2 torchrun, LeaderWorkerSet v1 API.
constexpr std::string_view vllm_image = "vllm/vllm-openai:v0.10.2";
constexpr int ray_port = 6379;
constexpr int sglang_init_port = 20000;
constexpr int rendezvous_port = 29400;

std::string model_argument(const ModelDescription& m) {
  if (m.source == ModelSource::catalogue)
    if (const auto* e = find_catalogue_model(m.origin)) return std::string(e->hf_repo);
  if (!m.origin.empty()) return m.origin;
  return "<model>";
}

// The quantization flags of vLLM and SGLang (they spell them alike).
std::string serving_quantization_flags(QuantizationLevel q, QuantizationLevel kv) {
  std::string out;
  switch (q) {
    case QuantizationLevel::bf16: out += " --dtype bfloat16"; break;
    case QuantizationLevel::fp16: out += " --dtype float16"; break;
    case QuantizationLevel::fp32: out += " --dtype float32"; break;
    case QuantizationLevel::fp8_e4m3:
    case QuantizationLevel::fp8_e5m2: out += " --quantization fp8"; break;
    case QuantizationLevel::nf4: out += " --quantization bitsandbytes"; break;
    default: break;
  }
  if (kv == QuantizationLevel::fp8_e4m3) out += " --kv-cache-dtype fp8_e4m3";
  if (kv == QuantizationLevel::fp8_e5m2) out += " --kv-cache-dtype fp8_e5m2";
  return out;
}

// What a level needs beyond flags: a checkpoint already quantized.
std::string_view checkpoint_note(QuantizationLevel q) {
  switch (q) {
    case QuantizationLevel::int4: return "  # an AWQ or GPTQ checkpoint";
    case QuantizationLevel::int8: return "  # a W8A8 (compressed-tensors) checkpoint";
    default: return {};
  }
}

// A DNS-1123 name for Kubernetes objects and Slurm jobs: "llama-3-1-405b".
std::string object_name(std::string_view model) {
  std::string out;
  for (char ch : model) {
    const char lower = ch >= 'A' && ch <= 'Z' ? static_cast<char>(ch - 'A' + 'a') : ch;
    const bool keep = (lower >= 'a' && lower <= 'z') || (lower >= '0' && lower <= '9');
    if (keep) out += lower;
    else if (!out.empty() && out.back() != '-') out += '-';
    if (out.size() >= 50) break;
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? std::string("model") : out;
}

// A YAML double-quoted scalar.
std::string yaml_quoted(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (ch == '\n') {
      out += "\\n";
      continue;
    }
    out += ch;
  }
  return out + "\"";
}

// A word for a shell: quoted unless it is made of safe characters.
std::string shell_word(std::string_view s) {
  const bool safe = !s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                                      "_-./:=@,+%") == std::string_view::npos;
  if (safe) return std::string(s);
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'') out += "'\\''";
    else out += ch;
  }
  return out + "'";
}

struct ReplicaShape {
  std::uint32_t nodes = 1;
  std::uint32_t per_node = 0;  // devices of the replica on its busiest node
  std::vector<std::string_view> node_names;  // the replica's nodes, in order
  std::vector<std::uint32_t> counts;         // the replica's devices on each of them
  std::vector<std::vector<const Device*>> devices;  // and which
  bool whole_nodes = true;                   // it uses every accelerator of its nodes
};

ReplicaShape shape_of(const Fleet& f, const Replica& r) {
  ReplicaShape out;
  std::vector<std::uint32_t> count_by_node;
  std::vector<std::uint32_t> order;
  for (const auto& st : r.stages) {
    if (!st.group) continue;
    for (auto m : st.group->members) {
      const std::uint32_t n = f.accelerators[m].node;
      if (count_by_node.size() <= n) count_by_node.resize(n + 1, 0);
      if (count_by_node[n]++ == 0) order.push_back(n);
    }
  }
  out.nodes = std::max<std::uint32_t>(static_cast<std::uint32_t>(order.size()), 1);
  std::vector<std::uint32_t> accelerators_of_node;
  for (const auto& d : f.accelerators) {
    if (accelerators_of_node.size() <= d.node) accelerators_of_node.resize(d.node + 1, 0);
    ++accelerators_of_node[d.node];
  }
  out.devices.resize(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::uint32_t n = order[k];
    out.per_node = std::max(out.per_node, count_by_node[n]);
    out.counts.push_back(count_by_node[n]);
    out.whole_nodes &= count_by_node[n] == accelerators_of_node[n];
    if (n < f.node_names.size()) out.node_names.push_back(f.node_names[n]);
  }
  for (const auto& st : r.stages)
    if (st.group)
      for (auto m : st.group->members) {
        const auto k = static_cast<std::size_t>(
            std::find(order.begin(), order.end(), f.accelerators[m].node) - order.begin());
        out.devices[k].push_back(&f.accelerators[m]);
      }
  return out;
}

// Commands for the serving engines that run on datacenter GPUs: SGLang,
// TensorRT-LLM and torchrun on one node or several; on several nodes also
// vLLM over a Ray cluster, a Slurm batch script and a LeaderWorkerSet.
void engine_hints(const Fleet& f, const Layout& l, const InferenceSettings& s, const ModelDescription& m,
                  const Plan& plan, Backend backend, LaunchHints& h) {
  const ReplicaShape shape = shape_of(f, l.replicas.front());
  const auto& st = plan.strategy;
  const std::string model = model_argument(m);
  const bool several = shape.nodes > 1;
  const std::string head = several && f.named_hosts ? std::string(shape.node_names.front()) : std::string("$HEAD_ADDR");
  const std::string quant = serving_quantization_flags(plan.quantization, plan.kv_cache_type);
  const std::string_view note = checkpoint_note(plan.quantization);
  const std::uint32_t devices = st.tensor_parallel * st.pipeline_parallel;

  // SGLang: --tp and --pp-size are the replica's degrees; --nnodes and
  // --node-rank place each node's processes.
  {
    std::string cmd = text::cat("python3 -m sglang.launch_server --model-path ", model, " --tp ", st.tensor_parallel);
    if (st.pipeline_parallel > 1) cmd += text::cat(" --pp-size ", st.pipeline_parallel);
    if (st.expert_parallel > 1) cmd += text::cat(" --ep-size ", st.expert_parallel);
    if (!several && st.data_parallel > 1) cmd += text::cat(" --dp ", st.data_parallel);
    if (several)
      cmd += text::cat(" --nnodes ", shape.nodes, " --node-rank $NODE_RANK --dist-init-addr ", head, ":", sglang_init_port);
    cmd += text::cat(" --context-length ", s.context, " --max-running-requests ", s.batch, " --mem-fraction-static ",
                     std::round((1.0 - s.reserve_fraction) * 100) / 100, quant, note);
    h.sglang = std::move(cmd);
  }
  // TensorRT-LLM's PyTorch backend: one MPI rank per GPU; several nodes join
  // one MPI world through trtllm-llmapi-launch.
  if (backend == Backend::cuda) {
    std::string serve = text::cat("trtllm-serve ", model, " --tp_size ", st.tensor_parallel, " --pp_size ",
                                  st.pipeline_parallel);
    if (st.expert_parallel > 1) serve += text::cat(" --ep_size ", st.expert_parallel);
    serve += text::cat(" --max_batch_size ", s.batch, " --max_seq_len ", s.context);
    if (plan.quantization == QuantizationLevel::fp8_e4m3 || plan.quantization == QuantizationLevel::fp8_e5m2)
      serve += "  # an FP8 checkpoint (e.g. nvidia/*-FP8)";
    else serve += note;
    if (several) {
      std::string hosts;
      if (f.named_hosts) {
        for (std::size_t k = 0; k < shape.node_names.size(); ++k)
          hosts += text::cat(hosts.empty() ? "" : ",", shape.node_names[k], ":", shape.counts[k]);
        hosts = " -H " + hosts;
      } else {
        hosts = " --hostfile hostfile";
      }
      serve = text::cat("mpirun -np ", devices, hosts, " trtllm-llmapi-launch ", serve);
    }
    h.trtllm = std::move(serve);
  }
  if (devices > 1) {
    h.torchrun = several ? text::cat("torchrun --nnodes ", shape.nodes, " --nproc-per-node ", shape.per_node,
                                     " --rdzv-backend c10d --rdzv-endpoint ", head, ":", rendezvous_port,
                                     " --rdzv-id ", object_name(m.name), " YOUR_SCRIPT.py")
                         : text::cat("torchrun --standalone --nproc-per-node ", devices, " YOUR_SCRIPT.py");
  }
  if (!several) return;
  // A replica on part of a node must be told its devices there.
  if (!shape.whole_nodes) {
    const std::string var = visible_devices_variable(backend);
    for (std::size_t k = 0; k < shape.devices.size(); ++k) {
      std::string list;
      for (const Device* d : shape.devices[k]) {
        if (!list.empty()) list += ',';
        text::append_uint(list, d->profile->runtime_index.value_or(d->profile->index));
      }
      h.node_devices.push_back(text::cat(k < shape.node_names.size() ? shape.node_names[k] : std::string_view("?"), ": ",
                                         var, "=", list));
    }
  }

  // vLLM over Ray: the cluster first, then one `vllm serve` on the head.
  std::string vllm = text::cat("vllm serve ", model, " --tensor-parallel-size ", st.tensor_parallel,
                               " --pipeline-parallel-size ", st.pipeline_parallel,
                               " --distributed-executor-backend ray");
  if (st.expert_parallel > 1) vllm += " --enable-expert-parallel";
  vllm += text::cat(" --max-model-len ", s.context, " --max-num-seqs ", s.batch, " --gpu-memory-utilization ",
                    std::round((1.0 - s.reserve_fraction) * 100) / 100, quant);
  h.ray = {text::cat("ray start --head --port=", ray_port),
           text::cat("ray start --address=", head, ":", ray_port)};
  h.vllm = vllm + std::string(note);

  // Slurm: one task per node holds the Ray processes; vLLM shares the head's.
  const std::string_view gpu_resource = backend == Backend::rocm ? "amd.com/gpu" : "nvidia.com/gpu";
  {
    std::string script = "#!/bin/bash\n";
    script += text::cat("#SBATCH --job-name=", object_name(m.name), "\n");
    script += text::cat("#SBATCH --nodes=", shape.nodes, "\n");
    script += "#SBATCH --ntasks-per-node=1\n";
    script += text::cat("#SBATCH --gpus-per-node=", shape.per_node, "\n");
    if (shape.whole_nodes) script += "#SBATCH --exclusive\n";
    if (f.named_hosts) {
      std::string list;
      for (auto n : shape.node_names) list += text::cat(list.empty() ? "" : ",", n);
      script += text::cat("#SBATCH --nodelist=", list, "\n");
    }
    script += text::cat("# ", plan.model_name, ": ", st.name(), ", vLLM over a Ray cluster of the job's nodes\n");
    script += "set -euo pipefail\n";
    script += "mapfile -t nodes < <(scontrol show hostnames \"$SLURM_JOB_NODELIST\")\n";
    script += "head_node=${nodes[0]}\n";
    script += "head_ip=$(srun --nodes=1 --ntasks=1 -w \"$head_node\" hostname --ip-address | awk '{print $1}')\n";
    script += text::cat("srun --nodes=1 --ntasks=1 -w \"$head_node\" ray start --head --node-ip-address=\"$head_ip\" --port=",
                        ray_port, " --block &\n");
    script += "sleep 10\n";
    script += "for node in \"${nodes[@]:1}\"; do\n";
    script += text::cat("  srun --nodes=1 --ntasks=1 -w \"$node\" ray start --address=\"$head_ip:", ray_port,
                        "\" --block &\n");
    script += "done\n";
    script += "sleep 30  # the workers join the Ray cluster\n";
    script += text::cat("srun --overlap --nodes=1 --ntasks=1 -w \"$head_node\" ", vllm, "\n");
    h.slurm = std::move(script);
  }
  // Kubernetes: a LeaderWorkerSet whose group is one replica's nodes; its
  // replicas are the plan's data-parallel replicas.
  if (backend == Backend::cuda) {
    const std::string name = object_name(m.name);
    const std::string helper = "bash /vllm-workspace/examples/online_serving/multi-node-serving.sh";
    const std::string leader =
        text::cat(helper, " leader --ray_cluster_size=$(LWS_GROUP_SIZE); ", vllm, " --port 8080");
    const std::string worker = text::cat(helper, " worker --ray_address=$(LWS_LEADER_ADDRESS)");
    const auto container = [&](std::string_view role, const std::string& command, bool port) {
      std::string c;
      c += text::cat("          - name: vllm-", role, "\n");
      c += text::cat("            image: ", vllm_image, "\n");
      c += "            command:\n              - sh\n              - -c\n";
      c += text::cat("              - ", yaml_quoted(command), "\n");
      c += text::cat("            resources:\n              limits:\n                ", gpu_resource, ": \"",
                     shape.per_node, "\"\n");
      if (port) c += "            ports:\n              - containerPort: 8080\n";
      c += "            volumeMounts:\n              - mountPath: /dev/shm\n                name: dshm\n";
      c += "        volumes:\n          - name: dshm\n            emptyDir:\n              medium: Memory\n"
           "              sizeLimit: 15Gi\n";
      return c;
    };
    std::string y;
    y += "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata:\n";
    y += text::cat("  name: ", name, "\n");
    y += text::cat("spec:\n  replicas: ", std::max<std::uint32_t>(st.data_parallel, 1), "\n");
    y += text::cat("  leaderWorkerTemplate:\n    size: ", shape.nodes, "\n");
    y += "    restartPolicy: RecreateGroupOnPodRestart\n";
    y += "    leaderTemplate:\n      metadata:\n        labels:\n          role: leader\n      spec:\n        containers:\n";
    y += container("leader", leader, true);
    y += "    workerTemplate:\n      spec:\n        containers:\n";
    y += container("worker", worker, false);
    h.kubernetes = std::move(y);
  }
}

LaunchHints launch_hints(const Fleet& f, const CostModel& c, const Layout& l, const InferenceSettings& s,
                         const ModelDescription& m, const Plan& plan) {
  LaunchHints h;
  if (l.replicas.empty()) return h;
  const Replica& r = l.replicas.front();
  std::vector<const Device*> gpus;
  for (const auto& st : r.stages)
    if (st.group)
      for (auto i : st.group->members) gpus.push_back(&f.accelerators[i]);
  const bool several = plan.strategy.nodes > 1;
  // Data-parallel replicas on one machine run in one server (vLLM's
  // --data-parallel-size, SGLang's --dp): it must see every replica's devices.
  std::vector<const Device*> all_replicas = gpus;
  if (!several && l.replica_total() > 1) {
    all_replicas.clear();
    for (std::size_t ri = 0; ri < l.replica_total(); ++ri)
      for (std::size_t si = 0; si < l.shape(ri).stages.size(); ++si)
        if (const Group* g = l.stage(ri, si).group)
          for (auto i : g->members) all_replicas.push_back(&f.accelerators[i]);
  }
  if (!gpus.empty()) {
    const Backend b = gpus.front()->profile->backend;
    const std::string var = visible_devices_variable(b);
    bool same_backend = true;
    for (const auto* d : all_replicas) same_backend &= d->profile->backend == b;
    if (!var.empty() && same_backend && !several) {
      std::string list;
      for (const auto* d : all_replicas) {
        if (!list.empty()) list += ',';
        text::append_uint(list, d->profile->runtime_index.value_or(d->profile->index));
      }
      h.visible_devices = var + "=" + list;
    }
    const QuantizationLevel q = plan.quantization;
    const bool serving_format = info(q).family != QuantizationFamily::gguf && plan.strategy.cpu_offload_layers == 0;
    if (same_backend && facts_of(b).served_by("vllm") && serving_format && !several) {
      std::string cmd = text::cat("vllm serve ", model_argument(m), " --tensor-parallel-size ", plan.strategy.tensor_parallel,
                                  " --pipeline-parallel-size ", plan.strategy.pipeline_parallel);
      if (plan.strategy.data_parallel > 1) cmd += text::cat(" --data-parallel-size ", plan.strategy.data_parallel);
      if (plan.strategy.expert_parallel > 1) cmd += " --enable-expert-parallel";
      cmd += text::cat(" --max-model-len ", s.context, " --max-num-seqs ", s.batch, " --gpu-memory-utilization ",
                       std::round((1.0 - s.reserve_fraction) * 100) / 100);
      cmd += serving_quantization_flags(q, plan.kv_cache_type);
      cmd += checkpoint_note(q);
      h.vllm = std::move(cmd);
    }
    if (same_backend && serving_format && (b == Backend::cuda || b == Backend::rocm))
      engine_hints(f, l, s, m, plan, b, h);
  }
  const QuantizationLevel q = plan.quantization;
  const bool gguf_format = info(q).family == QuantizationFamily::gguf || q == QuantizationLevel::fp16 ||
                           q == QuantizationLevel::bf16 || q == QuantizationLevel::fp32;
  bool llama_cpp_devices = true;
  for (const auto* d : gpus) llama_cpp_devices &= facts_of(d->profile->backend).served_by("llama.cpp");
  if (gguf_format && llama_cpp_devices && plan.strategy.tensor_parallel == 1 && !several) {
    std::uint64_t gpu_layers = 0;
    std::string split;
    for (const auto& st : r.stages) {
      if (!st.group) continue;
      gpu_layers += st.layer_count;
      if (!split.empty()) split += ',';
      text::append_uint(split, st.layer_count);
    }
    // -ngl counts the output layer too: one more than the blocks offloads everything.
    const bool all_on_gpu = !gpus.empty() && gpu_layers == c.layers();
    std::string cmd = text::cat("llama-server -m ", m.source == ModelSource::gguf ? m.origin : std::string("<model>.gguf"),
                                " -c ", s.context * s.batch, " -np ", s.batch, " -ngl ",
                                all_on_gpu ? gpu_layers + 1 : gpu_layers);
    if (r.stages.size() > 1 && gpus.size() > 1) cmd += " --split-mode layer --tensor-split " + split;
    if (plan.kv_cache_type != QuantizationLevel::fp16 && kv_cache_bits(plan.kv_cache_type) &&
        info(plan.kv_cache_type).family == QuantizationFamily::gguf)
      cmd += text::cat(" --cache-type-k ", to_string(plan.kv_cache_type), " --cache-type-v ", to_string(plan.kv_cache_type));
    h.llama_cpp = std::move(cmd);
  }
  return h;
}

}  // namespace hwaccel::planner_detail
