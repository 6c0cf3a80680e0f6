// Local weight files, as the page hands them over: the header alone (a
// `file.slice` of a .gguf or .safetensors) with the whole file's size. The
// package's plan equals the CLI's on the whole file (written sparse: the
// tensors' extents are there, their bytes are zeros the readers never read).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, ftruncateSync, mkdtempSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPackage, cli, repoFile } from './support.mjs';

const hwaccel = await loadPackage();

// Llama 3.1 8B's shapes (its config.json in data/models.json).
const llama = JSON.parse(readFileSync(repoFile('data/models.json'), 'utf8')).models.find((m) => m.id === 'llama-3.1-8b').config;
const hidden = llama.hidden_size;
const kvWidth = llama.num_key_value_heads * llama.head_dim;

// (name, shape as [columns, rows], is a matrix) of each tensor, in GGUF's names.
function ggufTensors() {
  const t = [['token_embd.weight', [hidden, llama.vocab_size], true], ['output_norm.weight', [hidden], false],
    ['output.weight', [hidden, llama.vocab_size], true]];
  for (let l = 0; l < llama.num_hidden_layers; l++) {
    const p = `blk.${l}.`;
    t.push([`${p}attn_norm.weight`, [hidden], false], [`${p}attn_q.weight`, [hidden, hidden], true],
      [`${p}attn_k.weight`, [hidden, kvWidth], true], [`${p}attn_v.weight`, [hidden, kvWidth], true],
      [`${p}attn_output.weight`, [hidden, hidden], true], [`${p}ffn_norm.weight`, [hidden], false],
      [`${p}ffn_gate.weight`, [hidden, llama.intermediate_size], true],
      [`${p}ffn_up.weight`, [hidden, llama.intermediate_size], true],
      [`${p}ffn_down.weight`, [llama.intermediate_size, hidden], true]);
  }
  return t;
}

class Bytes {
  constructor() { this.parts = []; this.length = 0; }
  push(buffer) { this.parts.push(buffer); this.length += buffer.length; return this; }
  u32(v) { const b = Buffer.alloc(4); b.writeUInt32LE(v); return this.push(b); }
  u64(v) { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(v)); return this.push(b); }
  f32(v) { const b = Buffer.alloc(4); b.writeFloatLE(v); return this.push(b); }
  str(s) { const b = Buffer.from(s, 'utf8'); return this.u64(b.length).push(b); }
  bytes() { return Buffer.concat(this.parts); }
}

// A GGUF v3 header of Q8_0 matrices and F32 norms (ggml's type ids 8 and 0;
// Q8_0 stores 32 weights in 34 bytes); returns the header and the file's size.
function gguf() {
  const tensors = ggufTensors();
  const kv = [['general.architecture', 8, 'llama'], ['general.name', 8, 'Llama 3.1 8B shaped'],
    ['general.file_type', 4, 7], ['llama.block_count', 4, llama.num_hidden_layers],
    ['llama.embedding_length', 4, hidden], ['llama.feed_forward_length', 4, llama.intermediate_size],
    ['llama.attention.head_count', 4, llama.num_attention_heads],
    ['llama.attention.head_count_kv', 4, llama.num_key_value_heads],
    ['llama.context_length', 4, llama.max_position_embeddings], ['llama.rope.freq_base', 6, 500000],
    ['llama.vocab_size', 4, llama.vocab_size]];
  const h = new Bytes().push(Buffer.from('GGUF')).u32(3).u64(tensors.length).u64(kv.length);
  for (const [key, type, value] of kv) {
    h.str(key).u32(type);
    if (type === 8) h.str(value);
    else if (type === 6) h.f32(value);
    else h.u32(value);
  }
  let offset = 0;
  for (const [name, shape, matrix] of tensors) {
    h.str(name).u32(shape.length);
    for (const d of shape) h.u64(d);
    h.u32(matrix ? 8 : 0).u64(offset);
    const count = shape.reduce((a, b) => a * b, 1);
    offset += matrix ? (count / 32) * 34 : count * 4;
    offset = Math.ceil(offset / 32) * 32;
  }
  const header = h.bytes();
  return { header, size: Math.ceil(header.length / 32) * 32 + offset };
}

// A safetensors header of BF16 tensors in Hugging Face's names.
function safetensors() {
  const shapes = { 'model.embed_tokens.weight': [llama.vocab_size, hidden], 'model.norm.weight': [hidden],
    'lm_head.weight': [llama.vocab_size, hidden] };
  for (let l = 0; l < llama.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`;
    Object.assign(shapes, {
      [`${p}input_layernorm.weight`]: [hidden], [`${p}post_attention_layernorm.weight`]: [hidden],
      [`${p}self_attn.q_proj.weight`]: [hidden, hidden], [`${p}self_attn.k_proj.weight`]: [kvWidth, hidden],
      [`${p}self_attn.v_proj.weight`]: [kvWidth, hidden], [`${p}self_attn.o_proj.weight`]: [hidden, hidden],
      [`${p}mlp.gate_proj.weight`]: [llama.intermediate_size, hidden],
      [`${p}mlp.up_proj.weight`]: [llama.intermediate_size, hidden],
      [`${p}mlp.down_proj.weight`]: [hidden, llama.intermediate_size],
    });
  }
  const index = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const [name, shape] of Object.entries(shapes)) {
    const bytes = shape.reduce((a, b) => a * b, 1) * 2;
    index[name] = { dtype: 'BF16', shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  const json = Buffer.from(JSON.stringify(index), 'utf8');
  const header = new Bytes().u64(json.length).push(json).bytes();
  return { header, size: header.length + offset };
}

// The whole file: the header, then zeros up to `size` (a sparse extent).
function writeSparse(path, { header, size }) {
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, header);
    ftruncateSync(fd, size);
  } finally {
    closeSync(fd);
  }
}

const cases = [
  ['plan', 'model.gguf', gguf, { devices: '1xRTX-4090' }],
  ['plan', 'model.gguf', gguf, { devices: '1xL4-24GB', batch: 8, context: 16384 }],
  ['plan', 'model.safetensors', safetensors, { devices: '1xA100-SXM-80GB' }],
  ['plan', 'model.safetensors', safetensors, { devices: '2xRTX-4090', quant: 'fp8' }],
  ['train', 'model.safetensors', safetensors, { devices: '1xRTX-4090', method: 'qlora' }],
];

for (const [command, name, make, options] of cases) {
  test(`${command} ${name} ${JSON.stringify(options)}`, async () => {
    const file = make();
    const work = mkdtempSync(join(tmpdir(), 'hwaccel-weights-'));
    try {
      mkdirSync(join(work, 'input'));
      const path = join(work, 'input', name);
      writeSparse(path, file);
      const config = JSON.stringify(llama);
      const withConfig = name.endsWith('.safetensors');
      if (withConfig) writeFileSync(join(work, 'input', 'config.json'), config);
      const args = [command, '--model', path];
      for (const [key, value] of Object.entries(options)) args.push(`--${key}`, String(value));
      const expected = JSON.parse(cli([...args, '--json']).split(work).join(''));
      const got = await hwaccel[command]({
        ...options,
        model: { name, data: file.header, size: file.size, ...(withConfig ? { files: { 'config.json': config } } : {}) },
      });
      assert.deepEqual(got, expected);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
}

test('a header handed over without the file\'s size is refused as a truncated file', async () => {
  const { header } = gguf();
  await assert.rejects(hwaccel.plan({ model: { name: 'model.gguf', data: header }, devices: '1xRTX-4090' }),
    (e) => e.name === 'HwaccelError' && /truncated/.test(e.message));
  await assert.rejects(hwaccel.plan({ model: { name: 'model.gguf', data: header, size: 10 }, devices: '1xRTX-4090' }),
    (e) => e.name === 'HwaccelError' && e.status === 'invalid_argument');
});
