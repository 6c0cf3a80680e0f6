// The npm package answers as the CLI does: for each case, the package's JSON
// equals `hwaccel COMMAND --json` with the same options.
//   HWACCEL_CLI=build/tools/hwaccel HWACCEL_JS=build-wasm/js/package node --test js/test/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPackage, cli, repoFile } from './support.mjs';

const hwaccel = await loadPackage();

// Options as the CLI spells them; booleans are flags, `model` may be a file.
const cases = [
  // single devices
  ['plan', { model: 'llama-3.1-8b', devices: '1xRTX-4090' }],
  ['plan', { model: 'qwen2.5-7b', devices: '1xRTX-3090', quant: 'q4_k_m' }],
  ['plan', { model: 'mistral-7b', devices: '1xL4-24GB', context: 32768 }],
  ['plan', { model: 'phi-3-mini', devices: '1xRTX-4090', 'kv-dtype': 'q8_0' }],
  ['plan', { model: 'gemma-2-9b', devices: '1xA100-SXM-80GB', objective: 'latency' }],
  ['plan', { model: 'llama-3.1-70b', devices: '1xRTX-4090' }],  // does not fit
  ['plan', { params: '13B', devices: '1xA10G-24GB' }],
  ['plan', { model: 'gpt-oss-20b', devices: '1xRTX-4090', formats: 'gguf' }],
  // several devices
  ['plan', { model: 'llama-3.1-70b', devices: '8xH100-SXM-80GB' }],
  ['plan', { model: 'llama-3.1-70b', devices: '2xRTX-4090+1xRTX-3090', quant: 'q4_k_m' }],
  ['plan', { model: 'mixtral-8x22b', devices: '8xA100-SXM-80GB', 'expert-parallel': true }],
  ['plan', { model: 'deepseek-v3', devices: '8xH200-SXM-141GB', quant: 'fp8' }],
  ['plan', { model: 'qwen3-235b-a22b', devices: '4xH100-SXM-80GB', reserve: 0.2 }],
  ['plan', { model: 'llama-3.3-70b', devices: '4xL40S-48GB', runtime: 'vllm' }],
  ['plan', { model: 'gemma-3-27b', devices: '2xRTX-4090', 'no-offload': true }],
  // several nodes
  ['plan', { model: 'llama-3.1-405b', devices: '8xH100-SXM-80GB', nodes: 2, fabric: 'ib-8x400g' }],
  ['plan', { model: 'deepseek-v3', devices: '8xH100-SXM-80GB', nodes: 4 }],
  ['plan', { model: 'kimi-k2', devices: '8xH200-SXM-141GB', nodes: 2, quant: 'fp8' }],
  // serving loads
  ['plan', { model: 'llama-3.1-8b', devices: '1xH100-SXM-80GB', batch: 32, 'input-len': 2048, 'output-len': 256 }],
  ['plan', { model: 'qwen2.5-72b', devices: '4xH100-SXM-80GB', batch: 64, 'input-len': 1024, 'output-len': 512 }],
  ['plan', { model: 'llama-3.1-70b', devices: '8xMI300X-192GB', batch: 128, objective: 'throughput' }],
  // power: a cap, the energy objective with its floor
  ['plan', { model: 'llama-3.1-8b', devices: '1xH100-SXM-80GB', batch: 32, 'input-len': 2048, 'output-len': 256, 'power-cap': 400 }],
  ['plan', { model: 'llama-3.1-70b', devices: '8xH100-SXM-80GB', batch: 16, objective: 'energy', 'min-tokens-per-s': 500 }],
  // training
  ['train', { model: 'llama-3.1-8b', devices: '8xH100-SXM-80GB', method: 'full' }],
  ['train', { model: 'llama-3.1-8b', devices: '1xRTX-4090', method: 'qlora' }],
  ['train', { model: 'llama-3.1-8b', devices: '1xA100-SXM-80GB', method: 'lora', 'lora-rank': 64 }],
  ['train', { model: 'llama-3.1-70b', devices: '8xH100-SXM-80GB', method: 'full', zero: 3, 'micro-batch': 2, seq: 4096 }],
  ['train', { model: 'qwen2.5-7b', devices: '4xA100-SXM-80GB', method: 'full', optimizer: 'adamw-8bit', recompute: 'full' }],
  ['train', { model: 'mistral-7b', devices: '8xH100-SXM-80GB', method: 'full', tp: 2, pp: 2, dp: 2 }],
  ['train', { model: 'llama-3.1-70b', devices: '8xH100-SXM-80GB', method: 'full', nodes: 4, zero: 3 }],
  // cloud instances, and the built-in lists
  ['recommend', { model: 'llama-3.1-70b', quant: 'bf16' }],
  ['recommend', { model: 'llama-3.1-8b', provider: 'aws', quant: 'q4_k_m' }],
  ['recommend', { model: 'llama-3.1-405b', quant: 'fp8', 'max-instances': 2 }],
  ['recommend', { model: 'llama-3.1-70b', quant: 'bf16', 'power-budget': 3 }],
  ['specs', {}],
  ['models', {}],
  // models from files: a config.json as a user has it
  ['plan', { model: { config: 'qwen3-30b-a3b' }, devices: '2xRTX-4090' }],
  ['plan', { model: { config: 'gemma-3-12b' }, devices: '1xRTX-4090', context: 131072 }],
  ['plan', { model: { config: 'deepseek-v2' }, devices: '8xA100-SXM-80GB' }],
  ['train', { model: { config: 'llama-3.2-3b' }, devices: '1xRTX-4090', method: 'lora' }],
];

const catalogue = JSON.parse(readFileSync(repoFile('data/models.json'), 'utf8')).models;

function configOf(id) {
  const entry = catalogue.find((m) => m.id === id);
  assert.ok(entry, `data/models.json has no ${id}`);
  return JSON.stringify(entry.config, null, 2);
}

function cliArgs(command, options, modelPath) {
  const args = [command];
  for (const [key, value] of Object.entries(options)) {
    if (key === 'model' && typeof value === 'object') args.push('--model', modelPath);
    else if (value === true) args.push(`--${key}`);
    else args.push(`--${key}`, String(value));
  }
  return [...args, '--json'];
}

function packageOptions(options, file) {
  const out = {};
  for (const [key, value] of Object.entries(options)) {
    if (key === 'model' && typeof value === 'object') out.model = file;
    else if (key === 'no-offload') out.offload = false;
    else out[key] = value;
  }
  return out;
}

for (const [command, options] of cases) {
  const label = `${command} ${JSON.stringify(options)}`;
  test(label, async () => {
    // A file model is config.json in a folder named "input" for both: the
    // package's files are /input/NAME, so the two differ in the folder's path only.
    const work = mkdtempSync(join(tmpdir(), 'hwaccel-js-'));
    try {
      let file;
      let modelPath;
      if (typeof options.model === 'object') {
        const text = configOf(options.model.config);
        mkdirSync(join(work, 'input'));
        modelPath = join(work, 'input', 'config.json');
        writeFileSync(modelPath, text);
        file = { name: 'config.json', data: text };
      }
      const expected = JSON.parse(cli(cliArgs(command, options, modelPath)).split(work).join(''));
      const got = await hwaccel[command](packageOptions(options, file));
      assert.deepEqual(got, expected);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
}

test('there are at least 30 cases', () => assert.ok(cases.length >= 30));
