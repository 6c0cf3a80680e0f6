// The npm package's speed beside the native CLI's, for the same plans
// (docs/web.md, docs/benchmarks.md "WebAssembly"):
//   node benchmarks/wasm_benchmark.mjs build-wasm/js/package build/tools/hwaccel [RUNS [LIBHWACCEL_SO]]
// Prints, per case, the median of RUNS warm calls of the package's plan() in
// this process, the median wall time of RUNS `hwaccel plan --json` processes,
// and the median of a process that does nothing (/bin/true), whose start-up
// the CLI's time includes; with LIBHWACCEL_SO also the native library's warm
// plan through the same C API call, in-process (capi_plan_timing.py), and
// the ratio of the two; then the package's first plan after its module
// starts loading (a cold instance), and the sizes of hwaccel.wasm.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [packageDir, cliPath, runsText, libPath] = process.argv.slice(2);
if (!packageDir || !cliPath) {
  console.error('usage: wasm_benchmark.mjs PACKAGE_DIR HWACCEL_CLI [RUNS]');
  process.exit(2);
}
const runs = Number(runsText ?? 31);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const coldStart = performance.now();
const hwaccel = await import(pathToFileURL(join(resolve(packageDir), 'hwaccel.js')).href);
await hwaccel.plan({ model: 'llama-3.1-8b', devices: '1xRTX-4090' });
const cold = performance.now() - coldStart;

const cases = [
  { model: 'llama-3.1-8b', devices: '1xRTX-4090' },
  { model: 'llama-3.1-70b', devices: '8xH100-SXM-80GB' },
  { model: 'deepseek-v3', devices: '8xH100-SXM-80GB', nodes: 4 },
];

function processMs(file, args) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    try { execFileSync(file, args, { stdio: 'ignore' }); } catch (e) { if (e.status !== 1) throw e; }
    times.push(performance.now() - t);
  }
  return median(times);
}

const nothing = processMs('/bin/true', []);
const here = new URL('.', import.meta.url).pathname;
const native = libPath
  ? execFileSync('/usr/bin/python3', [join(here, 'capi_plan_timing.py'), libPath, JSON.stringify(cases), String(runs)],
    { encoding: 'utf8' }).trim().split('\n').map(Number)
  : [];
console.log(`case | package plan() ms | hwaccel plan process ms | /bin/true process ms${libPath ? ' | native C API plan ms | wasm / native' : ''}`);
for (const [i, c] of cases.entries()) {
  // Warm: V8 compiles the module with its baseline compiler first and tiers
  // hot functions up while they run.
  for (let w = 0; w < 200; w++) await hwaccel.plan(c);
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await hwaccel.plan(c);
    times.push(performance.now() - t);
  }
  const args = ['plan', ...Object.entries(c).flatMap(([k, v]) => [`--${k}`, String(v)]), '--json'];
  const warm = median(times);
  const pair = libPath ? ` | ${native[i].toFixed(3)} | ${(warm / native[i]).toFixed(2)}` : '';
  console.log(`${JSON.stringify(c)} | ${warm.toFixed(3)} | ${processMs(cliPath, args).toFixed(2)} | ${nothing.toFixed(2)}${pair}`);
}
const wasm = readFileSync(join(packageDir, 'hwaccel.wasm'));
console.log(`first plan after import (cold instance): ${cold.toFixed(1)} ms`);
console.log(`hwaccel.wasm: ${wasm.length} bytes, ${gzipSync(wasm, { level: 9 }).length} gzip -9`);
