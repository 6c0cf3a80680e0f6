// The model catalogue: published config.json values of widely used open models.
module;
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
module hwaccel.plan;

namespace hwaccel {
namespace {

constexpr LatentAttention deepseek_mla{.q_lora_rank = 1536, .kv_lora_rank = 512, .qk_nope_head_dim = 128,
                                       .qk_rope_head_dim = 64, .v_head_dim = 128};

// Entries name only the fields their config sets; the others keep the
// defaults of CatalogueEntry (no experts, no MLA, RMSNorm, untied).
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wmissing-designated-field-initializers"
constexpr std::array<CatalogueEntry, 68> catalogue = {{
    {.id = "llama-2-7b", .display_name = "Llama 2 7B", .hf_repo = "meta-llama/Llama-2-7b-hf", .family = "llama",
     .layers = 32, .hidden_size = 4096, .attention_heads = 32, .kv_heads = 32, .head_dim = 128,
     .intermediate_size = 11008, .vocab_size = 32000, .max_context = 4096, .aliases = "llama2-7b",
     .source = "https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json"},
    {.id = "llama-2-13b", .display_name = "Llama 2 13B", .hf_repo = "meta-llama/Llama-2-13b-hf", .family = "llama",
     .layers = 40, .hidden_size = 5120, .attention_heads = 40, .kv_heads = 40, .head_dim = 128,
     .intermediate_size = 13824, .vocab_size = 32000, .max_context = 4096, .aliases = "llama2-13b",
     .source = "https://huggingface.co/meta-llama/Llama-2-13b-hf/blob/main/config.json"},
    {.id = "llama-2-70b", .display_name = "Llama 2 70B", .hf_repo = "meta-llama/Llama-2-70b-hf", .family = "llama",
     .layers = 80, .hidden_size = 8192, .attention_heads = 64, .kv_heads = 8, .head_dim = 128,
     .intermediate_size = 28672, .vocab_size = 32000, .max_context = 4096, .aliases = "llama2-70b",
     .source = "https://huggingface.co/meta-llama/Llama-2-70b-hf/blob/main/config.json"},
    {.id = "llama-3-8b", .display_name = "Llama 3 8B", .hf_repo = "meta-llama/Meta-Llama-3-8B", .family = "llama",
     .layers = 32, .hidden_size = 4096, .attention_heads = 32, .kv_heads = 8, .head_dim = 128,
     .intermediate_size = 14336, .vocab_size = 128256, .max_context = 8192, .aliases = "llama3-8b",
     .source = "https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json"},
    {.id = "llama-3-70b", .display_name = "Llama 3 70B", .hf_repo = "meta-llama/Meta-Llama-3-70B", .family = "llama",
     .layers = 80, .hidden_size = 8192, .attention_heads = 64, .kv_heads = 8, .head_dim = 128,
     .intermediate_size = 28672, .vocab_size = 128256, .max_context = 8192, .aliases = "llama3-70b",
     .source = "https://huggingface.co/meta-llama/Meta-Llama-3-70B/blob/main/config.json"},
    {.id = "llama-3.1-8b", .display_name = "Llama 3.1 8B", .hf_repo = "meta-llama/Llama-3.1-8B", .family = "llama",
     .layers = 32, .hidden_size = 4096, .attention_heads = 32, .kv_heads = 8, .head_dim = 128,
     .intermediate_size = 14336, .vocab_size = 128256, .max_context = 131072,
     .aliases = "llama3.1-8b|meta-llama-3.1-8b",
     .source = "https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json"},
    {.id = "llama-3.1-70b", .display_name = "Llama 3.1 70B", .hf_repo = "meta-llama/Llama-3.1-70B",
     .family = "llama", .layers = 80, .hidden_size = 8192, .attention_heads = 64, .kv_heads = 8, .head_dim = 128,
     .intermediate_size = 28672, .vocab_size = 128256, .max_context = 131072,
     .aliases = "llama3.1-70b|meta-llama-3.1-70b",
     .source = "https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json"},
    {.id = "llama-3.1-405b", .display_name = "Llama 3.1 405B", .hf_repo = "meta-llama/Llama-3.1-405B",
     .family = "llama", .layers = 126, .hidden_size = 16384, .attention_heads = 128, .kv_heads = 8,
     .head_dim = 128, .intermediate_size = 53248, .vocab_size = 128256, .max_context = 131072,
     .aliases = "llama3.1-405b|meta-llama-3.1-405b",
     .source = "https://huggingface.co/meta-llama/Llama-3.1-405B/blob/main/config.json"},
    {.id = "llama-3.2-1b", .display_name = "Llama 3.2 1B", .hf_repo = "meta-llama/Llama-3.2-1B", .family = "llama",
     .layers = 16, .hidden_size = 2048, .attention_heads = 32, .kv_heads = 8, .head_dim = 64,
     .intermediate_size = 8192, .vocab_size = 128256, .tied_embeddings = true, .max_context = 131072,
     .aliases = "llama3.2-1b", .source = "https://huggingface.co/meta-llama/Llama-3.2-1B/blob/main/config.json"},
    {.id = "llama-3.2-3b", .display_name = "Llama 3.2 3B", .hf_repo = "meta-llama/Llama-3.2-3B", .family = "llama",
     .layers = 28, .hidden_size = 3072, .attention_heads = 24, .kv_heads = 8, .head_dim = 128,
     .intermediate_size = 8192, .vocab_size = 128256, .tied_embeddings = true, .max_context = 131072,
     .aliases = "llama3.2-3b", .source = "https://huggingface.co/meta-llama/Llama-3.2-3B/blob/main/config.json"},
    {.id = "mistral-7b", .display_name = "Mistral 7B v0.1", .hf_repo = "mistralai/Mistral-7B-v0.1",
     .family = "mistral", .layers = 32, .hidden_size = 4096, .attention_heads = 32, .kv_heads = 8, .head_dim = 128,
     .intermediate_size = 14336, .vocab_size = 32000, .max_context = 32768, .sliding_window = 4096,
     .aliases = "mistral-7b-v0.1", .source = "https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json"},
    {.id = "mistral-7b-v0.3", .display_name = "Mistral 7B v0.3", .hf_repo = "mistralai/Mistral-7B-v0.3",
     .family = "mistral", .layers = 32, .hidden_size = 4096, .attention_heads = 32, .kv_heads = 8, .head_dim = 128,
     .intermediate_size = 14336, .vocab_size = 32768, .max_context = 32768,
     .source = "https://huggingface.co/mistralai/Mistral-7B-v0.3/blob/main/config.json"},
    {.id = "mixtral-8x7b", .display_name = "Mixtral 8x7B", .hf_repo = "mistralai/Mixtral-8x7B-v0.1",
     .family = "mixtral", .layers = 32, .hidden_size = 4096, .attention_heads = 32, .kv_heads = 8, .head_dim = 128,
     .intermediate_size = 14336, .vocab_size = 32000, .max_context = 32768,
     .moe = {.experts = 8, .experts_per_token = 2, .expert_intermediate_size = 14336},
     .aliases = "mixtral-8x7b-v0.1",
     .source = "https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json"},
    {.id = "mixtral-8x22b", .display_name = "Mixtral 8x22B", .hf_repo = "mistralai/Mixtral-8x22B-v0.1",
     .family = "mixtral", .layers = 56, .hidden_size = 6144, .attention_heads = 48, .kv_heads = 8, .head_dim = 128,
     .intermediate_size = 16384, .vocab_size = 32000, .max_context = 65536,
     .moe = {.experts = 8, .experts_per_token = 2, .expert_intermediate_size = 16384},
     .aliases = "mixtral-8x22b-v0.1",
     .source = "https://huggingface.co/mistralai/Mixtral-8x22B-v0.1/blob/main/config.json"},
    {.id = "qwen2-7b", .display_name = "Qwen2 7B Instruct", .hf_repo = "Qwen/Qwen2-7B-Instruct", .family = "qwen2",
     .layers = 28, .hidden_size = 3584, .attention_heads = 28, .kv_heads = 4, .head_dim = 128,
     .intermediate_size = 18944, .vocab_size = 152064, .qkv_bias = true, .max_context = 32768,
     .aliases = "qwen2-7b-instruct", .source = "https://huggingface.co/Qwen/Qwen2-7B-Instruct/blob/main/config.json"},
    {.id = "qwen2-72b", .display_name = "Qwen2 72B Instruct", .hf_repo = "Qwen/Qwen2-72B-Instruct",
     .family = "qwen2", .layers = 80, .hidden_size = 8192, .attention_heads = 64, .kv_heads = 8, .head_dim = 128,
     .intermediate_size = 29568, .vocab_size = 152064, .qkv_bias = true, .max_context = 32768,
     .aliases = "qwen2-72b-instruct",
     .source = "https://huggingface.co/Qwen/Qwen2-72B-Instruct/blob/main/config.json"},
    {.id = "qwen2.5-7b", .display_name = "Qwen2.5 7B", .hf_repo = "Qwen/Qwen2.5-7B", .family = "qwen2",
     .layers = 28, .hidden_size = 3584, .attention_heads = 28, .kv_heads = 4, .head_dim = 128,
     .intermediate_size = 18944, .vocab_size = 152064, .qkv_bias = true, .max_context = 131072,
     .source = "https://huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json"},
    {.id = "qwen2.5-14b", .display_name = "Qwen2.5 14B", .hf_repo = "Qwen/Qwen2.5-14B", .family = "qwen2",
     .layers = 48, .hidden_size = 5120, .attention_heads = 40, .kv_heads = 8, .head_dim = 128,
     .intermediate_size = 13824, .vocab_size = 152064, .qkv_bias = true, .max_context = 131072,
     .source = "https://huggingface.co/Qwen/Qwen2.5-14B/blob/main/config.json"},
    {.id = "qwen2.5-32b", .display_name = "Qwen2.5 32B", .hf_repo = "Qwen/Qwen2.5-32B", .family = "qwen2",
     .layers = 64, .hidden_size = 5120, .attention_heads = 40, .kv_heads = 8, .head_dim = 128,
     .intermediate_size = 27648, .vocab_size = 152064, .qkv_bias = true, .max_context = 131072,
     .source = "https://huggingface.co/Qwen/Qwen2.5-32B/blob/main/config.json"},
    {.id = "qwen2.5-72b", .display_name = "Qwen2.5 72B", .hf_repo = "Qwen/Qwen2.5-72B", .family = "qwen2",
     .layers = 80, .hidden_size = 8192, .attention_heads = 64, .kv_heads = 8, .head_dim = 128,
     .intermediate_size = 29568, .vocab_size = 152064, .qkv_bias = true, .max_context = 131072,
     .source = "https://huggingface.co/Qwen/Qwen2.5-72B/blob/main/config.json"},
    {.id = "gemma-2-2b", .display_name = "Gemma 2 2B", .hf_repo = "google/gemma-2-2b", .family = "gemma2",
     .layers = 26, .hidden_size = 2304, .attention_heads = 8, .kv_heads = 4, .head_dim = 256,
     .intermediate_size = 9216, .vocab_size = 256000, .tied_embeddings = true, .norms_per_layer = 4,
     .max_context = 8192, .sliding_window = 4096, .sliding_window_pattern = 2, .aliases = "gemma2-2b",
     .source = "https://huggingface.co/google/gemma-2-2b/blob/main/config.json"},
    {.id = "gemma-2-9b", .display_name = "Gemma 2 9B", .hf_repo = "google/gemma-2-9b", .family = "gemma2",
     .layers = 42, .hidden_size = 3584, .attention_heads = 16, .kv_heads = 8, .head_dim = 256,
     .intermediate_size = 14336, .vocab_size = 256000, .tied_embeddings = true, .norms_per_layer = 4,
     .max_context = 8192, .sliding_window = 4096, .sliding_window_pattern = 2, .aliases = "gemma2-9b",
     .source = "https://huggingface.co/google/gemma-2-9b/blob/main/config.json"},
    {.id = "gemma-2-27b", .display_name = "Gemma 2 27B", .hf_repo = "google/gemma-2-27b", .family = "gemma2",
     .layers = 46, .hidden_size = 4608, .attention_heads = 32, .kv_heads = 16, .head_dim = 128,
     .intermediate_size = 36864, .vocab_size = 256000, .tied_embeddings = true, .norms_per_layer = 4,
     .max_context = 8192, .sliding_window = 4096, .sliding_window_pattern = 2, .aliases = "gemma2-27b",
     .source = "https://huggingface.co/google/gemma-2-27b/blob/main/config.json"},
    {.id = "phi-3-mini", .display_name = "Phi-3 mini 4k", .hf_repo = "microsoft/Phi-3-mini-4k-instruct",
     .family = "phi3", .layers = 32, .hidden_size = 3072, .attention_heads = 32, .kv_heads = 32, .head_dim = 96,
     .intermediate_size = 8192, .vocab_size = 32064, .max_context = 4096, .sliding_window = 2047,
     .aliases = "phi-3-mini-4k|phi3-mini",
     .source = "https://huggingface.co/microsoft/Phi-3-mini-4k-instruct/blob/main/config.json"},
    {.id = "phi-3-medium", .display_name = "Phi-3 medium 4k", .hf_repo = "microsoft/Phi-3-medium-4k-instruct",
     .family = "phi3", .layers = 40, .hidden_size = 5120, .attention_heads = 40, .kv_heads = 10, .head_dim = 128,
     .intermediate_size = 17920, .vocab_size = 32064, .max_context = 4096, .sliding_window = 2047,
     .aliases = "phi-3-medium-4k|phi3-medium",
     .source = "https://huggingface.co/microsoft/Phi-3-medium-4k-instruct/blob/main/config.json"},
    {.id = "deepseek-v2", .display_name = "DeepSeek-V2", .hf_repo = "deepseek-ai/DeepSeek-V2",
     .family = "deepseek_v2", .layers = 60, .hidden_size = 5120, .attention_heads = 128, .kv_heads = 128,
     .head_dim = 192, .intermediate_size = 12288, .vocab_size = 102400, .max_context = 163840,
     .moe = {.experts = 160, .experts_per_token = 6, .shared_experts = 2, .expert_intermediate_size = 1536,
             .first_dense_layers = 1},
     .mla = deepseek_mla, .source = "https://huggingface.co/deepseek-ai/DeepSeek-V2/blob/main/config.json"},
    {.id = "deepseek-v3", .display_name = "DeepSeek-V3", .hf_repo = "deepseek-ai/DeepSeek-V3",
     .family = "deepseek_v3", .layers = 61, .hidden_size = 7168, .attention_heads = 128, .kv_heads = 128,
     .head_dim = 192, .intermediate_size = 18432, .vocab_size = 129280, .max_context = 163840,
     .moe = {.experts = 256, .experts_per_token = 8, .shared_experts = 1, .expert_intermediate_size = 2048,
             .first_dense_layers = 3, .router_bias = true},
     .mla = deepseek_mla, .aliases = "deepseek-r1",
     .source = "https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json (the main model; the "
               "checkpoint's extra multi-token-prediction layer is not counted)"},
    {.id = "qwen3-8b", .display_name = "Qwen3 8B", .hf_repo = "Qwen/Qwen3-8B", .family = "qwen3", .layers = 36,
     .hidden_size = 4096, .attention_heads = 32, .kv_heads = 8, .head_dim = 128, .intermediate_size = 12288,
     .vocab_size = 151936, .max_context = 40960, .aliases = "qwen3-8b-instruct",
     .source = "https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json (the per-head q/k norms, 256 weights a "
               "layer, are not counted)"},
    {.id = "qwen3-32b", .display_name = "Qwen3 32B", .hf_repo = "Qwen/Qwen3-32B", .family = "qwen3", .layers = 64,
     .hidden_size = 5120, .attention_heads = 64, .kv_heads = 8, .head_dim = 128, .intermediate_size = 25600,
     .vocab_size = 151936, .max_context = 40960,
     .source = "https://huggingface.co/Qwen/Qwen3-32B/blob/main/config.json"},
    {.id = "qwen3-30b-a3b", .display_name = "Qwen3 30B-A3B", .hf_repo = "Qwen/Qwen3-30B-A3B", .family = "qwen3_moe",
     .layers = 48, .hidden_size = 2048, .attention_heads = 32, .kv_heads = 4, .head_dim = 128,
     .intermediate_size = 6144, .vocab_size = 151936, .max_context = 40960,
     .moe = {.experts = 128, .experts_per_token = 8, .expert_intermediate_size = 768},
     .source = "https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json (every layer is MoE: "
               "decoder_sparse_step 1, no mlp_only_layers)"},
    {.id = "qwen3-235b-a22b", .display_name = "Qwen3 235B-A22B", .hf_repo = "Qwen/Qwen3-235B-A22B",
     .family = "qwen3_moe", .layers = 94, .hidden_size = 4096, .attention_heads = 64, .kv_heads = 4, .head_dim = 128,
     .intermediate_size = 12288, .vocab_size = 151936, .max_context = 40960,
     .moe = {.experts = 128, .experts_per_token = 8, .expert_intermediate_size = 1536},
     .source = "https://huggingface.co/Qwen/Qwen3-235B-A22B/blob/main/config.json"},
    {.id = "gemma-3-12b", .display_name = "Gemma 3 12B", .hf_repo = "google/gemma-3-12b-it", .family = "gemma3",
     .layers = 48, .hidden_size = 3840, .attention_heads = 16, .kv_heads = 8, .head_dim = 256,
     .intermediate_size = 15360, .vocab_size = 262208, .tied_embeddings = true, .norms_per_layer = 4,
     .max_context = 131072, .sliding_window = 1024, .sliding_window_pattern = 6, .aliases = "gemma3-12b|gemma-3-12b-it",
     .source = "https://huggingface.co/google/gemma-3-12b-it/blob/main/config.json (text_config; the language model "
               "only, without the 0.4B vision encoder; sliding_window_pattern 6: five of every six layers attend within "
               "the 1024-token window)"},
    {.id = "gemma-3-27b", .display_name = "Gemma 3 27B", .hf_repo = "google/gemma-3-27b-it", .family = "gemma3",
     .layers = 62, .hidden_size = 5376, .attention_heads = 32, .kv_heads = 16, .head_dim = 128,
     .intermediate_size = 21504, .vocab_size = 262208, .tied_embeddings = true, .norms_per_layer = 4,
     .max_context = 131072, .sliding_window = 1024, .sliding_window_pattern = 6, .aliases = "gemma3-27b|gemma-3-27b-it",
     .source = "https://huggingface.co/google/gemma-3-27b-it/blob/main/config.json (text_config; the language model "
               "only, as for Gemma 3 12B)"},
    {.id = "gpt-oss-20b", .display_name = "gpt-oss-20b", .hf_repo = "openai/gpt-oss-20b", .family = "gpt_oss",
     .layers = 24, .hidden_size = 2880, .attention_heads = 64, .kv_heads = 8, .head_dim = 64,
     .intermediate_size = 2880, .vocab_size = 201088, .qkv_bias = true, .max_context = 131072,
     .sliding_window = 128, .sliding_window_pattern = 2,
     .moe = {.experts = 32, .experts_per_token = 4, .expert_intermediate_size = 2880, .router_bias = true},
     .native_quantization = QuantizationLevel::mxfp4,
     .source = "https://huggingface.co/openai/gpt-oss-20b/blob/main/config.json (attention sinks, the output "
               "projection's and the experts' biases, a few million weights, are not counted; layer_types alternates "
               "sliding_attention (128-token window) and full_attention; quantization_config mxfp4 with "
               "self_attn, router, embed_tokens and lm_head in modules_to_not_convert: the experts ship in MXFP4)"},
    {.id = "gpt-oss-120b", .display_name = "gpt-oss-120b", .hf_repo = "openai/gpt-oss-120b", .family = "gpt_oss",
     .layers = 36, .hidden_size = 2880, .attention_heads = 64, .kv_heads = 8, .head_dim = 64,
     .intermediate_size = 2880, .vocab_size = 201088, .qkv_bias = true, .max_context = 131072,
     .sliding_window = 128, .sliding_window_pattern = 2,
     .moe = {.experts = 128, .experts_per_token = 4, .expert_intermediate_size = 2880, .router_bias = true},
     .native_quantization = QuantizationLevel::mxfp4,
     .source = "https://huggingface.co/openai/gpt-oss-120b/blob/main/config.json (as for gpt-oss-20b)"},
    {.id = "llama-4-scout", .display_name = "Llama 4 Scout 17B-16E", .hf_repo = "meta-llama/Llama-4-Scout-17B-16E",
     .family = "llama4", .layers = 48, .hidden_size = 5120, .attention_heads = 40, .kv_heads = 8, .head_dim = 128,
     .intermediate_size = 16384, .vocab_size = 202048, .max_context = 10485760, .attention_chunk = 8192,
     .attention_chunk_pattern = 4,
     .moe = {.experts = 16, .experts_per_token = 1, .shared_experts = 1, .expert_intermediate_size = 8192},
     .aliases = "llama4-scout|llama-4-scout-17b-16e",
     .source = "https://huggingface.co/meta-llama/Llama-4-Scout-17B-16E/blob/main/config.json (text_config; every "
               "layer is MoE with one shared expert; attention_chunk_size 8192 and no_rope_layers with an interval of "
               "4: three of four layers attend within 8192-token chunks, every fourth (NoPE) globally; the vision "
               "encoder is not counted)"},
    {.id = "llama-3.3-70b", .display_name = "Llama 3.3 70B Instruct", .hf_repo = "meta-llama/Llama-3.3-70B-Instruct",
     .family = "llama", .layers = 80, .hidden_size = 8192, .attention_heads = 64, .kv_heads = 8, .head_dim = 128,
     .intermediate_size = 28672, .vocab_size = 128256, .max_context = 131072,
     .aliases = "llama3.3-70b|llama-3.3-70b-instruct",
     .source = "https://huggingface.co/meta-llama/Llama-3.3-70B-Instruct/blob/main/config.json"},
    {.id = "llama-4-maverick", .display_name = "Llama 4 Maverick 17B-128E",
     .hf_repo = "meta-llama/Llama-4-Maverick-17B-128E", .family = "llama4", .layers = 48, .hidden_size = 5120,
     .attention_heads = 40, .kv_heads = 8, .head_dim = 128, .intermediate_size = 16384, .vocab_size = 202048,
     .max_context = 1048576, .attention_chunk = 8192, .attention_chunk_pattern = 4,
     .moe = {.experts = 128, .experts_per_token = 1, .shared_experts = 1, .expert_intermediate_size = 8192,
             .layer_step = 2},
     .aliases = "llama4-maverick|llama-4-maverick-17b-128e",
     .source = "https://huggingface.co/meta-llama/Llama-4-Maverick-17B-128E/blob/main/config.json (text_config; "
               "interleave_moe_layer_step 2: odd layers are MoE with one shared expert, even layers dense with "
               "intermediate_size_mlp 16384; chunked attention and the vision encoder as for Llama 4 Scout)"},
    {.id = "qwen2.5-0.5b", .display_name = "Qwen2.5 0.5B", .hf_repo = "Qwen/Qwen2.5-0.5B", .family = "qwen2",
     .layers = 24, .hidden_size = 896, .attention_heads = 14, .kv_heads = 2, .head_dim = 64,
     .intermediate_size = 4864, .vocab_size = 151936, .tied_embeddings = true, .qkv_bias = true,
     .max_context = 32768, .aliases = "qwen2.5-0.5b-instruct",
     .source = "https://huggingface.co/Qwen/Qwen2.5-0.5B/blob/main/config.json"},
    {.id = "qwen2.5-1.5b", .display_name = "Qwen2.5 1.5B", .hf_repo = "Qwen/Qwen2.5-1.5B", .family = "qwen2",
     .layers = 28, .hidden_size = 1536, .attention_heads = 12, .kv_heads = 2, .head_dim = 128,
     .intermediate_size = 8960, .vocab_size = 151936, .tied_embeddings = true, .qkv_bias = true,
     .max_context = 131072, .aliases = "qwen2.5-1.5b-instruct",
     .source = "https://huggingface.co/Qwen/Qwen2.5-1.5B/blob/main/config.json"},
    {.id = "qwen2.5-3b", .display_name = "Qwen2.5 3B", .hf_repo = "Qwen/Qwen2.5-3B", .family = "qwen2", .layers = 36,
     .hidden_size = 2048, .attention_heads = 16, .kv_heads = 2, .head_dim = 128, .intermediate_size = 11008,
     .vocab_size = 151936, .tied_embeddings = true, .qkv_bias = true, .max_context = 32768,
     .aliases = "qwen2.5-3b-instruct", .source = "https://huggingface.co/Qwen/Qwen2.5-3B/blob/main/config.json"},
    {.id = "qwen3-0.6b", .display_name = "Qwen3 0.6B", .hf_repo = "Qwen/Qwen3-0.6B", .family = "qwen3", .layers = 28,
     .hidden_size = 1024, .attention_heads = 16, .kv_heads = 8, .head_dim = 128, .intermediate_size = 3072,
     .vocab_size = 151936, .tied_embeddings = true, .max_context = 40960,
     .source = "https://huggingface.co/Qwen/Qwen3-0.6B/blob/main/config.json (q/k norms not counted, as for Qwen3 "
               "8B)"},
    {.id = "qwen3-1.7b", .display_name = "Qwen3 1.7B", .hf_repo = "Qwen/Qwen3-1.7B", .family = "qwen3", .layers = 28,
     .hidden_size = 2048, .attention_heads = 16, .kv_heads = 8, .head_dim = 128, .intermediate_size = 6144,
     .vocab_size = 151936, .tied_embeddings = true, .max_context = 40960,
     .source = "https://huggingface.co/Qwen/Qwen3-1.7B/blob/main/config.json (q/k norms not counted)"},
    {.id = "qwen3-4b", .display_name = "Qwen3 4B", .hf_repo = "Qwen/Qwen3-4B", .family = "qwen3", .layers = 36,
     .hidden_size = 2560, .attention_heads = 32, .kv_heads = 8, .head_dim = 128, .intermediate_size = 9728,
     .vocab_size = 151936, .tied_embeddings = true, .max_context = 40960,
     .source = "https://huggingface.co/Qwen/Qwen3-4B/blob/main/config.json (q/k norms not counted)"},
    {.id = "qwen3-14b", .display_name = "Qwen3 14B", .hf_repo = "Qwen/Qwen3-14B", .family = "qwen3", .layers = 40,
     .hidden_size = 5120, .attention_heads = 40, .kv_heads = 8, .head_dim = 128, .intermediate_size = 17408,
     .vocab_size = 151936, .max_context = 40960,
     .source = "https://huggingface.co/Qwen/Qwen3-14B/blob/main/config.json (q/k norms not counted)"},
    {.id = "deepseek-r1-distill-qwen-7b", .display_name = "DeepSeek-R1-Distill-Qwen-7B",
     .hf_repo = "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", .family = "qwen2", .layers = 28, .hidden_size = 3584,
     .attention_heads = 28, .kv_heads = 4, .head_dim = 128, .intermediate_size = 18944, .vocab_size = 152064,
     .qkv_bias = true, .max_context = 131072, .aliases = "r1-distill-qwen-7b|deepseek-r1-qwen-7b",
     .source = "https://huggingface.co/deepseek-ai/DeepSeek-R1-Distill-Qwen-7B/blob/main/config.json (Qwen2.5-Math-7B "
               "architecture)"},
    {.id = "deepseek-r1-distill-qwen-14b", .display_name = "DeepSeek-R1-Distill-Qwen-14B",
     .hf_repo = "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", .family = "qwen2", .layers = 48, .hidden_size = 5120,
     .attention_heads = 40, .kv_heads = 8, .head_dim = 128, .intermediate_size = 13824, .vocab_size = 152064,
     .qkv_bias = true, .max_context = 131072, .aliases = "r1-distill-qwen-14b|deepseek-r1-qwen-14b",
     .source = "https://huggingface.co/deepseek-ai/DeepSeek-R1-Distill-Qwen-14B/blob/main/config.json (Qwen2.5-14B "
               "architecture)"},
    {.id = "deepseek-r1-distill-qwen-32b", .display_name = "DeepSeek-R1-Distill-Qwen-32B",
     .hf_repo = "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", .family = "qwen2", .layers = 64, .hidden_size = 5120,
     .attention_heads = 40, .kv_heads = 8, .head_dim = 128, .intermediate_size = 27648, .vocab_size = 152064,
     .qkv_bias = true, .max_context = 131072, .aliases = "r1-distill-qwen-32b|deepseek-r1-qwen-32b",
     .source = "https://huggingface.co/deepseek-ai/DeepSeek-R1-Distill-Qwen-32B/blob/main/config.json (Qwen2.5-32B "
               "architecture)"},
    {.id = "deepseek-r1-distill-llama-8b", .display_name = "DeepSeek-R1-Distill-Llama-8B",
     .hf_repo = "deepseek-ai/DeepSeek-R1-Distill-Llama-8B", .family = "llama", .layers = 32, .hidden_size = 4096,
     .attention_heads = 32, .kv_heads = 8, .head_dim = 128, .intermediate_size = 14336, .vocab_size = 128256,
     .max_context = 131072, .aliases = "r1-distill-llama-8b|deepseek-r1-llama-8b",
     .source = "https://huggingface.co/deepseek-ai/DeepSeek-R1-Distill-Llama-8B/blob/main/config.json (Llama 3.1 8B "
               "architecture)"},
    {.id = "deepseek-r1-distill-llama-70b", .display_name = "DeepSeek-R1-Distill-Llama-70B",
     .hf_repo = "deepseek-ai/DeepSeek-R1-Distill-Llama-70B", .family = "llama", .layers = 80, .hidden_size = 8192,
     .attention_heads = 64, .kv_heads = 8, .head_dim = 128, .intermediate_size = 28672, .vocab_size = 128256,
     .max_context = 131072, .aliases = "r1-distill-llama-70b|deepseek-r1-llama-70b",
     .source = "https://huggingface.co/deepseek-ai/DeepSeek-R1-Distill-Llama-70B/blob/main/config.json (Llama 3.3 "
               "70B Instruct architecture)"},
    {.id = "gemma-3-270m", .display_name = "Gemma 3 270M", .hf_repo = "google/gemma-3-270m", .family = "gemma3_text",
     .layers = 18, .hidden_size = 640, .attention_heads = 4, .kv_heads = 1, .head_dim = 256,
     .intermediate_size = 2048, .vocab_size = 262144, .tied_embeddings = true, .norms_per_layer = 4,
     .max_context = 32768, .sliding_window = 512, .sliding_window_pattern = 6, .aliases = "gemma3-270m|gemma-3-270m-it",
     .source = "https://huggingface.co/google/gemma-3-270m/blob/main/config.json (text-only; q/k norms not counted; "
               "most layers attend within the 512-token window)"},
    {.id = "gemma-3-1b", .display_name = "Gemma 3 1B", .hf_repo = "google/gemma-3-1b-it", .family = "gemma3_text",
     .layers = 26, .hidden_size = 1152, .attention_heads = 4, .kv_heads = 1, .head_dim = 256,
     .intermediate_size = 6912, .vocab_size = 262144, .tied_embeddings = true, .norms_per_layer = 4,
     .max_context = 32768, .sliding_window = 512, .sliding_window_pattern = 6, .aliases = "gemma3-1b|gemma-3-1b-it",
     .source = "https://huggingface.co/google/gemma-3-1b-it/blob/main/config.json (text-only; q/k norms, 512 "
               "weights a layer, not counted; five of every six layers attend within the 512-token window)"},
    {.id = "gemma-3-4b", .display_name = "Gemma 3 4B", .hf_repo = "google/gemma-3-4b-it", .family = "gemma3",
     .layers = 34, .hidden_size = 2560, .attention_heads = 8, .kv_heads = 4, .head_dim = 256,
     .intermediate_size = 10240, .vocab_size = 262208, .tied_embeddings = true, .norms_per_layer = 4,
     .max_context = 131072, .sliding_window = 1024, .sliding_window_pattern = 6, .aliases = "gemma3-4b|gemma-3-4b-it",
     .source = "https://huggingface.co/google/gemma-3-4b-it/blob/main/config.json (text_config; the language model "
               "only, as for Gemma 3 12B)"},
    {.id = "mistral-nemo-12b", .display_name = "Mistral Nemo 12B", .hf_repo = "mistralai/Mistral-Nemo-Base-2407",
     .family = "mistral", .layers = 40, .hidden_size = 5120, .attention_heads = 32, .kv_heads = 8, .head_dim = 128,
     .intermediate_size = 14336, .vocab_size = 131072, .max_context = 128000,
     .aliases = "mistral-nemo|mistral-nemo-instruct-2407",
     .source = "https://huggingface.co/mistralai/Mistral-Nemo-Base-2407/blob/main/config.json"},
    {.id = "phi-3.5-mini", .display_name = "Phi-3.5 mini", .hf_repo = "microsoft/Phi-3.5-mini-instruct",
     .family = "phi3", .layers = 32, .hidden_size = 3072, .attention_heads = 32, .kv_heads = 32, .head_dim = 96,
     .intermediate_size = 8192, .vocab_size = 32064, .max_context = 131072, .aliases = "phi3.5-mini",
     .source = "https://huggingface.co/microsoft/Phi-3.5-mini-instruct/blob/main/config.json (sliding_window 262144 "
               "exceeds the context, so none is set)"},
    {.id = "phi-3.5-moe", .display_name = "Phi-3.5 MoE", .hf_repo = "microsoft/Phi-3.5-MoE-instruct",
     .family = "phimoe", .layers = 32, .hidden_size = 4096, .attention_heads = 32, .kv_heads = 8, .head_dim = 128,
     .intermediate_size = 6400, .vocab_size = 32064, .qkv_bias = true, .norm_bias = true, .max_context = 131072,
     .moe = {.experts = 16, .experts_per_token = 2, .expert_intermediate_size = 6400}, .aliases = "phi3.5-moe",
     .source = "https://huggingface.co/microsoft/Phi-3.5-MoE-instruct/blob/main/config.json (LayerNorm with biases; "
               "the output projection's and the LM head's biases, 4096 + 32064 weights, are not counted)"},
    {.id = "falcon-40b", .display_name = "Falcon 40B", .hf_repo = "tiiuae/falcon-40b", .family = "falcon",
     .layers = 60, .hidden_size = 8192, .attention_heads = 128, .kv_heads = 8, .head_dim = 64,
     .intermediate_size = 32768, .vocab_size = 65024, .tied_embeddings = true, .gated_ffn = false,
     .norm_bias = true, .max_context = 2048,
     .source = "https://huggingface.co/tiiuae/falcon-40b/blob/main/config.json (new_decoder_architecture: attention "
               "and the 4 x hidden GELU MLP run in parallel from two LayerNorms, counted exactly as two norms with "
               "biases per layer; the parallel data flow itself is approximated as sequential for activations; "
               "num_kv_heads 8; the LM head shares the embedding)"},
    {.id = "kimi-k2", .display_name = "Kimi K2", .hf_repo = "moonshotai/Kimi-K2-Instruct", .family = "kimi_k2",
     .layers = 61, .hidden_size = 7168, .attention_heads = 64, .kv_heads = 64, .head_dim = 192,
     .intermediate_size = 18432, .vocab_size = 163840, .max_context = 131072,
     .moe = {.experts = 384, .experts_per_token = 8, .shared_experts = 1, .expert_intermediate_size = 2048,
             .first_dense_layers = 1, .router_bias = true},
     .mla = deepseek_mla, .aliases = "kimi-k2-instruct|kimi-k2-base",
     .source = "https://huggingface.co/moonshotai/Kimi-K2-Instruct/blob/main/config.json (DeepSeek-V3 architecture: "
               "64 MLA heads, 384 routed experts and one shared, first_k_dense_replace 1)"},
    {.id = "glm-4.5", .display_name = "GLM-4.5", .hf_repo = "zai-org/GLM-4.5", .family = "glm4_moe", .layers = 92,
     .hidden_size = 5120, .attention_heads = 96, .kv_heads = 8, .head_dim = 128, .intermediate_size = 12288,
     .vocab_size = 151552, .qkv_bias = true, .max_context = 131072,
     .moe = {.experts = 160, .experts_per_token = 8, .shared_experts = 1, .expert_intermediate_size = 1536,
             .first_dense_layers = 3, .router_bias = true},
     .aliases = "glm4.5",
     .source = "https://huggingface.co/zai-org/GLM-4.5/blob/main/config.json (q/k norms and the multi-token-"
               "prediction layer are not counted)"},
    {.id = "glm-4.5-air", .display_name = "GLM-4.5-Air", .hf_repo = "zai-org/GLM-4.5-Air", .family = "glm4_moe",
     .layers = 46, .hidden_size = 4096, .attention_heads = 96, .kv_heads = 8, .head_dim = 128,
     .intermediate_size = 10944, .vocab_size = 151552, .qkv_bias = true, .max_context = 131072,
     .moe = {.experts = 128, .experts_per_token = 8, .shared_experts = 1, .expert_intermediate_size = 1408,
             .first_dense_layers = 1, .router_bias = true},
     .aliases = "glm4.5-air",
     .source = "https://huggingface.co/zai-org/GLM-4.5-Air/blob/main/config.json (the multi-token-prediction layer "
               "is not counted)"},
    {.id = "olmo-2-7b", .display_name = "OLMo 2 7B", .hf_repo = "allenai/OLMo-2-1124-7B", .family = "olmo2",
     .layers = 32, .hidden_size = 4096, .attention_heads = 32, .kv_heads = 32, .head_dim = 128,
     .intermediate_size = 11008, .vocab_size = 100352, .norms_per_layer = 4, .max_context = 4096,
     .aliases = "olmo2-7b|olmo-2-1124-7b",
     .source = "https://huggingface.co/allenai/OLMo-2-1124-7B/blob/main/config.json (post-norms after attention and "
               "MLP plus q/k norms over the full 4096 width: four hidden-size norms a layer)"},
    {.id = "olmo-2-13b", .display_name = "OLMo 2 13B", .hf_repo = "allenai/OLMo-2-1124-13B", .family = "olmo2",
     .layers = 40, .hidden_size = 5120, .attention_heads = 40, .kv_heads = 40, .head_dim = 128,
     .intermediate_size = 13824, .vocab_size = 100352, .norms_per_layer = 4, .max_context = 4096,
     .aliases = "olmo2-13b|olmo-2-1124-13b",
     .source = "https://huggingface.co/allenai/OLMo-2-1124-13B/blob/main/config.json (norms as for OLMo 2 7B)"},
    {.id = "smollm3-3b", .display_name = "SmolLM3 3B", .hf_repo = "HuggingFaceTB/SmolLM3-3B", .family = "smollm3",
     .layers = 36, .hidden_size = 2048, .attention_heads = 16, .kv_heads = 4, .head_dim = 128,
     .intermediate_size = 11008, .vocab_size = 128256, .tied_embeddings = true, .max_context = 65536,
     .aliases = "smollm3",
     .source = "https://huggingface.co/HuggingFaceTB/SmolLM3-3B/blob/main/config.json (every fourth layer skips "
               "RoPE, which changes no weight)"},
    {.id = "mistral-small-3.1-24b", .display_name = "Mistral Small 3.1 24B",
     .hf_repo = "mistralai/Mistral-Small-3.1-24B-Base-2503", .family = "mistral3", .layers = 40,
     .hidden_size = 5120, .attention_heads = 32, .kv_heads = 8, .head_dim = 128, .intermediate_size = 32768,
     .vocab_size = 131072, .max_context = 131072, .aliases = "mistral-small-24b|mistral-small-3.1",
     .source = "https://huggingface.co/mistralai/Mistral-Small-3.1-24B-Base-2503/blob/main/config.json (text_config; "
               "the language model only, the Pixtral vision encoder and projector aside; head_dim 128 with 32 heads "
               "is narrower than the 5120 width; values as TensorRT-LLM's Mistral Small 3.1 test fixture copies them)"},
    {.id = "mistral-large-2", .display_name = "Mistral Large 2 (2407)",
     .hf_repo = "mistralai/Mistral-Large-Instruct-2407", .family = "mistral", .layers = 88, .hidden_size = 12288,
     .attention_heads = 96, .kv_heads = 8, .head_dim = 128, .intermediate_size = 28672, .vocab_size = 32768,
     .max_context = 131072,
     .aliases = "mistral-large-2407|mistral-large-123b",
     .source = "https://huggingface.co/mistralai/Mistral-Large-Instruct-2407/blob/main/config.json (a gated "
               "repository: values as litgpt's model table copies this file)"},
    {.id = "phi-4", .display_name = "Phi-4", .hf_repo = "microsoft/phi-4", .family = "phi3", .layers = 40,
     .hidden_size = 5120, .attention_heads = 40, .kv_heads = 10, .head_dim = 128, .intermediate_size = 17920,
     .vocab_size = 100352, .max_context = 16384, .aliases = "phi4|phi-4-14b",
     .source = "https://huggingface.co/microsoft/phi-4/blob/main/config.json (sliding_window null)"},
    {.id = "phi-4-mini", .display_name = "Phi-4-mini", .hf_repo = "microsoft/Phi-4-mini-instruct", .family = "phi3",
     .layers = 32, .hidden_size = 3072, .attention_heads = 24, .kv_heads = 8, .head_dim = 128,
     .intermediate_size = 8192, .vocab_size = 200064, .tied_embeddings = true, .max_context = 131072,
     .aliases = "phi4-mini",
     .source = "https://huggingface.co/microsoft/Phi-4-mini-instruct/blob/main/config.json (the LM head shares the "
               "embedding; partial RoPE, which changes no weight)"},
    {.id = "falcon-180b", .display_name = "Falcon 180B", .hf_repo = "tiiuae/falcon-180B", .family = "falcon",
     .layers = 80, .hidden_size = 14848, .attention_heads = 232, .kv_heads = 8, .head_dim = 64,
     .intermediate_size = 59392, .vocab_size = 65024, .tied_embeddings = true, .gated_ffn = false,
     .norm_bias = true, .max_context = 2048,
     .source = "https://huggingface.co/tiiuae/falcon-180B/blob/main/config.json (a gated repository: values as "
               "TensorRT-LLM's performance guide copies them; the architecture of Falcon 40B: "
               "new_decoder_architecture, parallel attention and a 4 x hidden GELU MLP from two LayerNorms with "
               "biases, num_kv_heads 8, the LM head sharing the embedding)"},
}};
#pragma clang diagnostic pop

bool matches(const CatalogueEntry& e, std::string_view key) {
  if (text::same_identifier(e.id, key) || text::same_identifier(e.hf_repo, key)) return true;
  const auto slash = e.hf_repo.find('/');
  if (slash != std::string_view::npos && text::same_identifier(e.hf_repo.substr(slash + 1), key)) return true;
  std::string_view aliases = e.aliases;
  while (!aliases.empty())
    if (text::same_identifier(text::next_token(aliases, '|'), key)) return true;
  return false;
}

}  // namespace

ModelArchitecture CatalogueEntry::architecture() const {
  ModelArchitecture a;
  a.family = std::string(family);
  a.layers = layers;
  a.hidden_size = hidden_size;
  a.attention_heads = attention_heads;
  a.kv_heads = kv_heads;
  a.head_dim = head_dim;
  a.intermediate_size = intermediate_size;
  a.vocab_size = vocab_size;
  a.tied_embeddings = tied_embeddings;
  a.qkv_bias = qkv_bias;
  a.gated_ffn = gated_ffn;
  a.norm_bias = norm_bias;
  a.norms_per_layer = norms_per_layer;
  a.max_context = max_context;
  if (sliding_window != 0) a.sliding_window = sliding_window;
  a.sliding_window_pattern = sliding_window_pattern;
  if (attention_chunk != 0) a.attention_chunk = attention_chunk;
  a.attention_chunk_pattern = attention_chunk_pattern;
  a.moe = moe;
  a.mla = mla;
  return a;
}

std::span<const CatalogueEntry> model_catalogue() noexcept { return catalogue; }

const CatalogueEntry* find_catalogue_model(std::string_view name) noexcept {
  const std::string_view key = text::trim(name);
  if (key.empty()) return nullptr;
  for (const auto& e : catalogue)
    if (e.id == key) return &e;
  for (const auto& e : catalogue)
    if (matches(e, key)) return &e;
  return nullptr;
}

Result<ModelDescription> catalogue_model(std::string_view name) {
  const CatalogueEntry* e = find_catalogue_model(name);
  if (!e) {
    std::string ids;
    for (const auto& c : catalogue) {
      if (!ids.empty()) ids += ", ";
      ids += c.id;
    }
    return fail(ErrorKind::invalid_input,
                text::cat("no catalogue model named '", text::excerpt(name), "' (see `hwaccel models`): ", ids));
  }
  auto d = ModelDescription::from_architecture(std::string(e->id), e->architecture());
  if (!d) return d;
  d->source = ModelSource::catalogue;
  d->origin = std::string(e->id);
  d->native_level = e->native_quantization;
  return d;
}

const CatalogueEntry& nearest_dense_model(std::uint64_t parameters) noexcept {
  const CatalogueEntry* best = &catalogue.front();
  double best_distance = INFINITY;
  const double target = std::log(static_cast<double>(parameters == 0 ? 1 : parameters));
  for (const auto& e : catalogue) {
    if (e.moe.is_moe()) continue;
    const auto count = count_parameters(e.architecture());
    if (!count) continue;
    const double distance = std::abs(std::log(static_cast<double>(count->total)) - target);
    if (distance < best_distance) {
      best_distance = distance;
      best = &e;
    }
  }
  return *best;
}

std::string model_catalogue_json() {
  json::Writer w(false);
  w.begin_array();
  for (const auto& e : model_catalogue()) {
    const auto d = catalogue_model(e.id);
    if (!d) continue;
    const auto& a = d->architecture;
    w.begin_object();
    w.field("id", e.id).field("name", e.display_name).field("hf_repo", e.hf_repo).field("family", e.family);
    w.field("params", d->parameters).field("active_params", d->active_parameters);
    w.field("layers", a.layers).field("hidden_size", a.hidden_size).field("attention_heads", a.attention_heads);
    w.field("kv_heads", a.kv_heads).field("head_dim", a.head_dim).field("intermediate_size", a.intermediate_size);
    w.field("vocab_size", a.vocab_size).field("tied_embeddings", a.tied_embeddings);
    w.field("max_context", a.max_context);
    if (a.moe.is_moe()) w.field("experts", a.moe.experts).field("experts_per_token", a.moe.experts_per_token);
    w.field("attention", to_string(a.attention_kind()));
    if (a.sliding_window)
      w.field("sliding_window", *a.sliding_window).field("sliding_window_pattern", a.sliding_window_pattern);
    if (a.attention_chunk)
      w.field("attention_chunk_size", *a.attention_chunk).field("attention_chunk_pattern", a.attention_chunk_pattern);
    if (d->native_level) w.field("native_quantization", to_string(*d->native_level));
    w.field("source", e.source);
    w.end_object();
  }
  w.end_array();
  return std::string(w.str());
}

}  // namespace hwaccel
