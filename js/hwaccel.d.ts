// Declarations of the hwaccel npm package (hwaccel.js). Results are the
// JSON the CLI prints with --json (docs/planning.md, docs/training.md); they
// are typed as records here and documented there.

/** A model's file handed over instead of a catalogue id: its bytes are read
 *  in memory, nothing is uploaded. `name` tells the format: "config.json",
 *  "*.gguf", "*.safetensors" (the header is enough: the first 8 bytes and the
 *  JSON they announce) or "model.safetensors.index.json". */
export interface ModelFile {
  name: string;
  data: string | ArrayBuffer | Uint8Array;
  /** The whole file's size in bytes when `data` is its beginning only (a
   *  .gguf or .safetensors header: `file.slice(0, n)` of a local file); the
   *  readers check the tensors' extents against it. Default: data's length. */
  size?: number;
  /** Files beside it (a config.json beside safetensors weights), by name. */
  files?: Record<string, string | ArrayBuffer | Uint8Array>;
}

/** Options of both `plan` and `train`: the CLI's option names without the
 *  dashes. Numbers and booleans may be given as such. */
export interface PlanningInputs {
  /** Catalogue id ("llama-3.1-70b"; `models` lists them) or a file. */
  model?: string | ModelFile;
  /** Parameter count instead of a model ("7e9", "70B"). */
  params?: string | number;
  /** Hypothetical devices from the published specs ("8xH100-SXM-80GB",
   *  "2xRTX-4090+1xRTX-3090"); used when `registry` is not given. */
  devices?: string;
  /** A machine's devices: `hwaccel detect` JSON, as an object or its text. */
  registry?: object | string;
  /** A machine's devices as a tool printed them (see devicesFromText). */
  paste?: string;
  /** Copies of the node planned on (1 to 100000). */
  nodes?: number | string;
  /** The fabric between nodes ("ib-8x400g"). */
  fabric?: string;
  /** Share of each device's memory kept free (0 to 0.95). */
  reserve?: number | string;
  /** Indented JSON inside the module; the result is parsed either way. */
  pretty?: boolean;
  [option: string]: unknown;
}

/** `hwaccel plan` options: quant, "kv-dtype", context, batch, objective
 *  ("throughput" | "latency" | "energy"), formats ("hf" | "gguf"), offload,
 *  "flash-attention", runtime, "input-len", "output-len", "expert-parallel",
 *  "power-cap" (watts per device), "min-tokens-per-s" (the energy
 *  objective's floor). The plan's `power` gives watts, joules per output
 *  token and per request, and tokens per joule (docs/planning.md, "Power and
 *  energy"). */
export interface PlanOptions extends PlanningInputs {
  quant?: string;
  context?: number | string;
  batch?: number | string;
  objective?: 'throughput' | 'latency' | 'energy';
  offload?: boolean;
  'power-cap'?: number | string;
  'min-tokens-per-s'?: number | string;
}

/** `hwaccel train` options: method, optimizer, precision, zero, offload
 *  ("none" | "optimizer" | "params"), dp, tp, pp, "micro-batch", seq,
 *  recompute, "lora-rank", "qlora-bits", and the others of `hwaccel train`. */
export interface TrainOptions extends PlanningInputs {
  method?: string;
  optimizer?: string;
  zero?: number | string;
}

/** A failed call. `status` is the C API's status name: "invalid_argument",
 *  "not_found", "parse", "unsupported", "out_of_memory", "internal", ... */
export class HwaccelError extends Error {
  readonly status: string;
}

/** How a model runs on the devices: `hwaccel plan --json`. A plan that does
 *  not fit is a result with `fits: false`; bad input rejects with HwaccelError. */
export function plan(options: PlanOptions): Promise<Record<string, unknown>>;

/** Training memory and fit: `hwaccel train --json`. */
export function train(options: TrainOptions): Promise<Record<string, unknown>>;

/** `hwaccel recommend` options: the plan options, and provider ("aws",
 *  "gcp", "azure" or a comma list), "max-instances", "power-budget" (kW the
 *  accelerators of one recommendation may draw). */
export interface RecommendOptions extends PlanOptions {
  provider?: string;
  'max-instances'?: number | string;
  'power-budget'?: number | string;
}

/** The cheapest cloud instances that run the model: `hwaccel recommend --json`. */
export function recommend(options: RecommendOptions): Promise<Record<string, unknown>>;

/** The published device specs `devices` accepts: `hwaccel specs --json`. */
export function specs(): Promise<Array<Record<string, unknown>>>;

/** The model catalogue (each entry's config.json): `hwaccel models --json`. */
export function models(): Promise<Array<Record<string, unknown>>>;

/** The devices pasted text describes: nvidia-smi (its table, -L,
 *  --query-gpu CSV, -q, -q -x), rocm-smi, rocminfo, system_profiler
 *  SPDisplaysDataType -json, xpu-smi, hl-smi, neuron-ls or vulkaninfo output,
 *  a terminal transcript of "$ command" lines, or `hwaccel detect` JSON; as
 *  `hwaccel detect --json` prints them (without timings unless asked). */
export function devicesFromText(text: string, options?: { timings?: boolean; pretty?: boolean }): Promise<Record<string, unknown>>;

/** The library's version. */
export function version(): Promise<string>;
