// Hostile input for the WebAssembly readers: every saved fuzz input of the
// parsers the module contains (the seeds `fuzz-seeds` extracts from the
// fixture tree, tests/fuzz/corpus/ and tests/fuzz/regressions/), as it is and
// cut short or with bytes flipped, goes through the package's entry point
// that reads that kind of input. Each call answers or rejects with a
// HwaccelError naming the input; a wasm trap (which the package reports as
// status 'internal'), another exception or a hang fails the test.
//   HWACCEL_FUZZ_SEEDS: the native build's tests/fuzz/fuzz-seeds
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPackage, repoFile } from './support.mjs';

const hwaccel = await loadPackage();
const seeder = process.env.HWACCEL_FUZZ_SEEDS ?? repoFile('build/tests/fuzz/fuzz-seeds');

const asPaste = (bytes) => hwaccel.devicesFromText(new TextDecoder().decode(bytes));
const asModelFile = (name) => (bytes) => hwaccel.plan({ model: { name, data: bytes }, devices: '1xRTX-4090' });
const asDevices = (bytes) => hwaccel.plan({ model: 'llama-3.1-8b', devices: new TextDecoder().decode(bytes) });

// Fuzz targets (tests/fuzz/meson.build) whose parser the module holds, and
// the call that reaches it.
const targets = {
  nvidia_query_csv: asPaste, nvidia_query_text: asPaste, nvidia_query_xml: asPaste, nvidia_gpu_list: asPaste,
  nvidia_default_table: asPaste, nvidia_nvlink: asPaste, vulkaninfo_summary: asPaste, vulkaninfo_full: asPaste,
  system_profiler: asPaste, hl_smi_csv: asPaste, hl_smi_table: asPaste, neuron_ls_json: asPaste,
  neuron_ls_table: asPaste, xpu_smi: asPaste, rocm_smi_json: asPaste, rocm_smi_text: asPaste, rocminfo: asPaste,
  capture_transcript: asPaste, pasted_devices: asPaste, registry_json: asPaste,
  config_json: asModelFile('config.json'), gguf: asModelFile('model.gguf'),
  safetensors: asModelFile('model.safetensors'), cluster_spec: asDevices,
};

// Bounded work per target: the seeds and saved inputs themselves, and for
// the first few each a cut at a third and two thirds and a copy with every
// 97th byte flipped.
const mutatedPerTarget = 12;

function mutations(bytes, index) {
  const out = [bytes];
  if (index >= mutatedPerTarget || bytes.length < 3) return out;
  out.push(bytes.subarray(0, Math.floor(bytes.length / 3)), bytes.subarray(0, Math.floor((2 * bytes.length) / 3)));
  const flipped = Uint8Array.from(bytes);
  for (let i = 7; i < flipped.length; i += 97) flipped[i] ^= 0xa5;
  out.push(flipped);
  return out;
}

function filesOf(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).map((f) => join(dir, f)).filter((f) => statSync(f).isFile());
}

// The seeds of one target, in a scratch folder removed afterwards.
function inputsOf(target) {
  const scratch = mkdtempSync(join(tmpdir(), 'hwaccel-seeds-'));
  try {
    execFileSync(seeder, [repoFile('.'), target, scratch], { stdio: ['ignore', 'ignore', 'pipe'] });
    return [...filesOf(scratch), ...filesOf(repoFile(`tests/fuzz/regressions/${target}`))]
      .map((f) => new Uint8Array(readFileSync(f)));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

test('the seeder is there', { skip: !existsSync(seeder) && `no ${seeder} (HWACCEL_FUZZ_SEEDS; a native build with tests)` },
  () => assert.ok(existsSync(seeder)));

test('every target named here is a fuzz target', { skip: !existsSync(seeder) }, () => {
  const known = execFileSync(seeder, ['--list'], { encoding: 'utf8' }).split('\n');
  for (const target of Object.keys(targets)) assert.ok(known.includes(target), target);
});

for (const [target, read] of Object.entries(targets)) {
  test(`fuzz inputs of ${target}`, { skip: !existsSync(seeder) }, async () => {
    const inputs = inputsOf(target);
    assert.ok(inputs.length > 0, `${target} has no seeds`);
    let answered = 0;
    let refused = 0;
    for (const [index, input] of inputs.entries()) {
      for (const bytes of mutations(input, index)) {
        try {
          await read(bytes);
          ++answered;
        } catch (e) {
          // A trap comes back as a HwaccelError of status 'internal': a failure here.
          assert.equal(e.name, 'HwaccelError', `${target}: ${e.name}: ${e.message}`);
          assert.notEqual(e.status, 'internal', `${target}: ${e.message}`);
          assert.ok(e.message.length > 0);
          ++refused;
        }
      }
    }
    assert.ok(answered + refused > 0);
    // The module still plans after all of it.
    assert.equal((await hwaccel.plan({ model: 'llama-3.1-8b', devices: '1xRTX-4090' })).fits, true);
  });
}
