// hwaccel's planner as an ES module: the library's C API compiled to
// WebAssembly (hwaccel.wasm), called with the CLI's option names, returning
// the CLI's JSON (docs/web.md). No dependency; Node >= 18 and browsers.
import { MemoryWasi, WasiExit } from './wasi.js';

const HWACCEL_OK = 0;
const HWACCEL_JSON_PRETTY = 1;
const HWACCEL_JSON_NO_TIMINGS = 2;
// What the package copies into the module's memory at most, for any input:
// a bound on memory, not a format's limit (a paste's own limit, 16 MiB, is
// the library's, registry_from_paste, and comes back as its error).
const MAX_TRANSFER_BYTES = 64 * 1024 * 1024;

let instancePromise = null;

async function wasmBytes() {
  const url = new URL('./hwaccel.wasm', import.meta.url);
  if (url.protocol === 'file:') {
    const { readFile } = await import('node:fs/promises');
    return readFile(url);
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`hwaccel: cannot load ${url}: HTTP ${response.status}`);
  return response.arrayBuffer();
}

async function instantiate() {
  const wasi = new MemoryWasi();
  const { instance } = await WebAssembly.instantiate(await wasmBytes(), { wasi_snapshot_preview1: wasi.imports() });
  wasi.memory = instance.exports.memory;
  instance.exports._initialize();
  return { exports: instance.exports, wasi };
}

function module() {
  instancePromise ??= instantiate();
  return instancePromise;
}

// A call into the module. A trap (abort, out of memory) leaves the instance
// unusable: the next call starts a fresh one, and this one reports it.
async function call(what, body) {
  const m = await module();
  try {
    return body(m);
  } catch (e) {
    if (e instanceof HwaccelError) throw e;
    instancePromise = null;
    const said = m.wasi.takeStderr().trim();
    const why = e instanceof WasiExit ? e.message : `the WebAssembly module stopped (${e.message})`;
    throw new HwaccelError(`${what}: ${why}${said ? `: ${said}` : ''}`, 'internal');
  }
}

/** An error of a hwaccel call: `status` is the C API's status name ("parse", "invalid_argument", ...). */
export class HwaccelError extends Error {
  constructor(message, status) {
    super(message);
    this.name = 'HwaccelError';
    this.status = status;
  }
}

// ---- memory helpers --------------------------------------------------------

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function withString({ exports }, text, use) {
  const bytes = typeof text === 'string' ? encoder.encode(text) : text;
  const ptr = exports.malloc(bytes.length + 1);
  if (!ptr) throw new HwaccelError('hwaccel: out of memory', 'out_of_memory');
  try {
    const heap = new Uint8Array(exports.memory.buffer);
    heap.set(bytes, ptr);
    heap[ptr + bytes.length] = 0;
    return use(ptr, bytes.length);
  } finally {
    exports.free(ptr);
  }
}

function readCString(exports, ptr) {
  const heap = new Uint8Array(exports.memory.buffer);
  let end = ptr;
  while (heap[end] !== 0) end++;
  return decoder.decode(heap.subarray(ptr, end));
}

// Runs a C API call whose last parameter is hwaccel_error** and whose result
// is a status; `slots` out-pointers (4 bytes each) are handed to `body`.
function checked(m, what, slots, body) {
  const { exports } = m;
  const area = exports.malloc(4 * (slots + 1));
  if (!area) throw new HwaccelError('hwaccel: out of memory', 'out_of_memory');
  new Uint32Array(exports.memory.buffer, area, slots + 1).fill(0);
  try {
    const outs = Array.from({ length: slots }, (_, i) => area + 4 + 4 * i);
    const status = body(area, ...outs);
    const values = outs.map((p) => new Uint32Array(exports.memory.buffer, p, 1)[0]);
    if (status !== HWACCEL_OK) {
      const error = new Uint32Array(exports.memory.buffer, area, 1)[0];
      const message = error ? readCString(exports, exports.hwaccel_error_message(error)) : `${what} failed`;
      const name = readCString(exports, exports.hwaccel_status_name(status));
      if (error) exports.hwaccel_error_free(error);
      throw new HwaccelError(message, name);
    }
    return values;
  } finally {
    exports.free(area);
  }
}

function takeJson(m, ptr) {
  const text = readCString(m.exports, ptr);
  m.exports.hwaccel_string_free(ptr);
  return JSON.parse(text);
}

// ---- inputs ----------------------------------------------------------------

function checkedSize(what, data) {
  const size = typeof data === 'string' ? data.length : data.byteLength;
  if (size > MAX_TRANSFER_BYTES)
    throw new HwaccelError(`${what} is ${size} bytes; at most ${MAX_TRANSFER_BYTES} are read`, 'invalid_argument');
}

function asBytes(data) {
  if (typeof data === 'string') return encoder.encode(data);
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  throw new HwaccelError('a file must be a string, an ArrayBuffer or a Uint8Array', 'invalid_argument');
}

// A model given as a file ({ name: "model.gguf", data }): it becomes
// /input/<name> in the module's in-memory files, and the `model` key its path.
function modelFiles(options) {
  const files = new Map();
  const values = { ...options };
  const model = options.model;
  if (model && typeof model === 'object') {
    const name = String(model.name ?? '').split('/').pop();
    if (!name || name === '.' || name === '..')
      throw new HwaccelError('model: a file needs a name ("config.json", "model.gguf", "model.safetensors")', 'invalid_argument');
    if (model.data === undefined) throw new HwaccelError(`model: ${name} has no data`, 'invalid_argument');
    checkedSize(`model ${name}`, model.data);
    const data = asBytes(model.data);
    // A weights file may come as its header alone, with the whole file's size.
    const size = model.size ?? data.length;
    if (!Number.isSafeInteger(size) || size < data.length)
      throw new HwaccelError(`model: ${name}: size must be a whole number of bytes, at least the ${data.length} handed over`, 'invalid_argument');
    files.set(`/input/${name}`, { data, size });
    for (const [extra, bytes] of Object.entries(model.files ?? {})) {
      checkedSize(`model ${extra}`, bytes);
      const beside = asBytes(bytes);
      files.set(`/input/${extra.split('/').pop()}`, { data: beside, size: beside.length });
    }
    values.model = `/input/${name}`;
  }
  return { files, values };
}

function settingText(key, value) {
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'string') return value;
  throw new HwaccelError(`${key}: expected a string, number or boolean`, 'invalid_argument');
}

// A registry from `registry` (hwaccel detect JSON, an object or its text) or
// from `paste` (what a tool printed: hwaccel_registry_from_text).
function withRegistry(m, what, registry, paste, use) {
  if (registry !== undefined && paste !== undefined)
    throw new HwaccelError(`${what}: give registry or paste, not both`, 'invalid_argument');
  if (registry === undefined && paste === undefined) return use(0);
  const fromText = paste !== undefined;
  const text = fromText ? paste : typeof registry === 'string' ? registry : JSON.stringify(registry);
  if (typeof text !== 'string') throw new HwaccelError(`${what}: paste must be text`, 'invalid_argument');
  checkedSize(fromText ? 'the paste' : 'registry', text);
  const entry = fromText ? 'hwaccel_registry_from_text' : 'hwaccel_registry_from_json';
  const [handle] = withString(m, text, (ptr, len) =>
    checked(m, what, 1, (error, out) => m.exports[entry](ptr, len, out, error)));
  try {
    return use(handle);
  } finally {
    m.exports.hwaccel_registry_free(handle);
  }
}

// A request of `values` (key -> text), freed after `use` returns.
function withRequest(m, what, values, use) {
  const request = m.exports.hwaccel_request_new();
  if (!request) throw new HwaccelError(`${what}: out of memory`, 'out_of_memory');
  try {
    for (const [key, value] of Object.entries(values)) {
      if (value === undefined) continue;
      withString(m, key, (k) =>
        withString(m, settingText(key, value), (v) =>
          checked(m, what, 0, (error) => m.exports.hwaccel_request_set(request, k, v, error))));
    }
    return use(request);
  } finally {
    m.exports.hwaccel_request_free(request);
  }
}

function requestCall(what, entry, options = {}) {
  if (options === null || typeof options !== 'object') throw new HwaccelError(`${what}: options must be an object`, 'invalid_argument');
  const { registry, paste, pretty, ...rest } = options;
  const { files, values } = modelFiles(rest);
  return call(what, (m) => {
    m.wasi.setFiles(files);
    try {
      return withRequest(m, what, values, (request) => {
        const flags = pretty ? HWACCEL_JSON_PRETTY : 0;
        if (entry === 'hwaccel_recommend_json') {
          if (registry !== undefined || paste !== undefined)
            throw new HwaccelError(`${what}: recommend plans for cloud instances, not a machine's devices`, 'invalid_argument');
          const [json] = checked(m, what, 2, (error, out, length) => m.exports[entry](request, flags, out, length, error));
          return takeJson(m, json);
        }
        return withRegistry(m, what, registry, paste, (handle) => {
          const [json] = checked(m, what, 2, (error, out, length) => m.exports[entry](handle, request, flags, out, length, error));
          return takeJson(m, json);
        });
      });
    } finally {
      m.wasi.setFiles(new Map());
    }
  });
}

// ---- the API ---------------------------------------------------------------
// Every call returns a promise; bad options reject it with a HwaccelError
// (never a synchronous throw).

/** Plans inference: `hwaccel plan --json` with the same options. */
export async function plan(options) { return requestCall('plan', 'hwaccel_plan_json', options); }

/** Estimates training memory: `hwaccel train --json` with the same options. */
export async function train(options) { return requestCall('train', 'hwaccel_train_json', options); }

/** The devices pasted text describes (nvidia-smi, rocm-smi, system_profiler,
 *  xpu-smi, ... output, a "$ command" transcript, or hwaccel detect JSON) as
 *  `hwaccel detect --json` prints them; `timings: true` keeps timings_us. */
export function devicesFromText(text, { timings = false, pretty = false } = {}) {
  return call('devicesFromText', (m) => withRegistry(m, 'devicesFromText', undefined, text, (handle) => {
    const flags = (pretty ? HWACCEL_JSON_PRETTY : 0) | (timings ? 0 : HWACCEL_JSON_NO_TIMINGS);
    const [json] = checked(m, 'devicesFromText', 2, (error, out, length) =>
      m.exports.hwaccel_registry_to_json(handle, flags, out, length, error));
    return takeJson(m, json);
  }));
}

/** The cheapest cloud instances that run a model: `hwaccel recommend --json`. */
export async function recommend(options) { return requestCall('recommend', 'hwaccel_recommend_json', options); }

/** The published device specs `devices` accepts: `hwaccel specs --json`. */
export function specs() {
  return call('specs', (m) => withRequest(m, 'specs', {}, (request) => {
    const [json] = checked(m, 'specs', 2, (error, out, length) => m.exports.hwaccel_device_specs_json(request, out, length, error));
    return takeJson(m, json);
  }));
}

/** The model catalogue: `hwaccel models --json`. */
export function models() {
  return call('models', (m) => {
    const [json] = checked(m, 'models', 2, (error, out, length) => m.exports.hwaccel_models_json(out, length, error));
    return takeJson(m, json);
  });
}

/** The library's version ("0.1.0"). */
export async function version() {
  return call('version', (m) => readCString(m.exports, m.exports.hwaccel_version()));
}
