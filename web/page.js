// The planner page: the form's inputs to the npm package's plan(), its JSON
// to a verdict, figures, a memory bar per device and launch commands. The
// state (all but a paste and a file) lives in the URL's hash, so that a plan
// can be shared. Nothing leaves the page.
import { plan, models, specs } from './hwaccel.js';

const $ = (id) => document.getElementById(id);
const form = $('inputs');
const fields = ['devices', 'nodes', 'model', 'quant', 'context', 'batch'];
const MAX_HEADER_BYTES = 64 * 1024 * 1024;  // a gguf/safetensors header is far smaller
let modelFile = null;  // { name, data } read from the file input

function setStatus(text) { $('status').textContent = text; }

function showError(message) {
  const box = $('error');
  box.textContent = message;
  box.hidden = !message;
}

function source() { return form.elements.source.value; }

function showSource() {
  $('specs-input').hidden = source() !== 'specs';
  $('paste-input').hidden = source() !== 'paste';
}

function readHash() {
  const params = new URLSearchParams(location.hash.slice(1));
  for (const name of fields) if (params.has(name)) $(name).value = params.get(name);
  if (params.get('source') === 'paste') form.elements.source.value = 'paste';
  showSource();
}

function writeHash() {
  const params = new URLSearchParams();
  params.set('source', source());
  for (const name of fields) if ($(name).value) params.set(name, $(name).value);
  history.replaceState(null, '', `#${params}`);
}

function options() {
  const o = { model: modelFile ?? $('model').value };
  if (source() === 'paste') o.paste = $('paste').value;
  else o.devices = $('devices').value.trim();
  for (const name of ['nodes', 'quant', 'context', 'batch']) {
    const v = $(name).value.trim();
    if (v && !(name === 'nodes' && v === '1')) o[name] = v;
  }
  return o;
}

const gib = (bytes) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;
const rate = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

function svg(tag, attrs, text) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (text !== undefined) el.textContent = text;
  return el;
}

// A stacked bar per device: weights, KV cache, activations, overhead, free.
function memoryChart(shards) {
  const parts = [['weights_bytes', 'weights', '#3b6fb6'], ['kv_cache_bytes', 'KV cache', '#e08a1e'],
                 ['activation_bytes', 'activations', '#5aa55a'], ['overhead_bytes', 'overhead', '#8f6bb3']];
  const rowHeight = 28, labelWidth = 150, width = 720;
  const chart = svg('svg', { viewBox: `0 0 ${width} ${rowHeight * shards.length + 30}`, role: 'img',
                             'aria-label': 'Memory per device' });
  chart.append(svg('title', {}, 'Memory per device: weights, KV cache, activations, overhead and free memory'));
  shards.forEach((s, row) => {
    const y = row * rowHeight;
    const capacity = Math.max(s.capacity_bytes ?? s.total_bytes, s.total_bytes, 1);
    const scale = (width - labelWidth - 10) / capacity;
    chart.append(svg('text', { x: 0, y: y + 18, 'font-size': 13 }, `${s.device} ${gib(s.total_bytes)}`));
    let x = labelWidth;
    for (const [key, label, colour] of parts) {
      const w = (s[key] ?? 0) * scale;
      if (w <= 0) continue;
      const bar = svg('rect', { x, y: y + 4, width: w, height: rowHeight - 8, fill: colour });
      bar.append(svg('title', {}, `${s.device} ${label}: ${gib(s[key])}`));
      chart.append(bar);
      x += w;
    }
    chart.append(svg('rect', { x: labelWidth, y: y + 4, width: capacity * scale, height: rowHeight - 8, fill: 'none',
                               stroke: '#555' }));
  });
  let x = labelWidth;
  for (const [, label, colour] of parts) {
    chart.append(svg('rect', { x, y: rowHeight * shards.length + 10, width: 12, height: 12, fill: colour }));
    chart.append(svg('text', { x: x + 16, y: rowHeight * shards.length + 21, 'font-size': 12 }, label));
    x += 120;
  }
  return chart;
}

function figure(list, term, value) {
  const dt = document.createElement('dt');
  dt.textContent = term;
  const dd = document.createElement('dd');
  dd.textContent = value;
  list.append(dt, dd);
}

function launchLines(launch) {
  const box = $('launch');
  box.replaceChildren();
  for (const [name, command] of Object.entries(launch ?? {})) {
    if (typeof command !== 'string') continue;
    const line = document.createElement('div');
    line.className = 'launch-line';
    const pre = document.createElement('pre');
    pre.textContent = command;
    const copy = document.createElement('button');
    copy.type = 'button';
    copy.textContent = `Copy ${name}`;
    copy.addEventListener('click', () => navigator.clipboard?.writeText(command));
    line.append(copy, pre);
    box.append(line);
  }
}

function show(p) {
  $('result').hidden = false;
  const verdict = $('verdict');
  verdict.className = p.fits ? 'fits' : 'no-fit';
  verdict.textContent = p.fits
    ? `Fits: ${p.model.name} at ${p.quantization.name}, ${p.strategy.name}.`
    : `Does not fit: ${p.model.name} needs ${gib(p.memory.total_bytes)} at ${p.quantization.name}.`;
  const list = $('figures');
  list.replaceChildren();
  const t = p.throughput ?? {};
  figure(list, 'Memory', `${gib(p.memory.total_bytes)} (weights ${gib(p.memory.weights_bytes)}, KV cache ${gib(p.memory.kv_cache_bytes)})`);
  if (t.decode_tokens_per_s)
    figure(list, 'Decode', `${rate(t.decode_tokens_per_s)} tok/s per sequence (${rate(t.decode_tokens_per_s_low)}–${rate(t.decode_tokens_per_s_high)})`);
  if (t.prefill_tokens_per_s) figure(list, 'Prefill', `${rate(t.prefill_tokens_per_s)} tok/s`);
  if (t.serving?.ttft_s !== undefined) figure(list, 'TTFT / TPOT', `${(t.serving.ttft_s * 1000).toFixed(0)} ms / ${(t.serving.tpot_s * 1000).toFixed(1)} ms`);
  figure(list, 'Bottleneck', `${t.bottleneck ?? '-'} (${t.runtime ?? ''})`);
  $('memory-chart').replaceChildren(memoryChart(p.shards ?? []));
  launchLines(p.launch);
  $('plan-json').textContent = JSON.stringify(p, null, 2);
}

async function run(event) {
  event?.preventDefault();
  showError('');
  writeHash();
  const button = $('plan-button');
  button.disabled = true;
  setStatus('Planning…');
  try {
    const p = await plan(options());
    show(p);
    setStatus(p.fits ? 'Planned: it fits.' : 'Planned: it does not fit.');
  } catch (e) {
    $('result').hidden = true;
    showError(e.message);
    setStatus('No plan: see the message.');
  } finally {
    button.disabled = false;
  }
}

async function readModelFile() {
  const file = $('model-file').files[0];
  if (!file) { modelFile = null; return; }
  if (file.name.endsWith('.json')) {
    modelFile = { name: file.name, data: await file.text() };
    return;
  }
  // A .gguf or .safetensors is planned from its header: its first bytes say how long it is.
  const head = new DataView(await file.slice(0, 8).arrayBuffer());
  let size = MAX_HEADER_BYTES;
  if (file.name.endsWith('.safetensors') && head.byteLength === 8) size = Number(head.getBigUint64(0, true)) + 8;
  if (size > MAX_HEADER_BYTES) {
    showError(`${file.name}: its header says ${size} bytes; at most ${MAX_HEADER_BYTES} are read`);
    modelFile = null;
    return;
  }
  modelFile = { name: file.name, data: new Uint8Array(await file.slice(0, size).arrayBuffer()), size: file.size };
}

// Served by `hwaccel serve --web`, the page starts from that node's devices:
// its /registry, beside the page. Elsewhere (a static host, a file) there is
// none, and the page starts from the published specs.
async function nodeRegistry() {
  if (!location.protocol.startsWith('http')) return null;
  try {
    const response = await fetch('registry', { headers: { accept: 'application/json' } });
    if (!response.ok || !(response.headers.get('content-type') ?? '').startsWith('application/json')) return null;
    const text = await response.text();
    return Array.isArray(JSON.parse(text).devices) ? text : null;
  } catch {
    return null;
  }
}

async function start() {
  const [catalogue, table] = await Promise.all([models(), specs()]);
  const select = $('model');
  for (const m of catalogue) select.append(new Option(`${m.id} (${m.name})`, m.id));
  const names = $('device-names');
  for (const s of table) names.append(new Option(`1x${s.name}`));
  select.value = 'llama-3.1-8b';
  const served = new URLSearchParams(location.hash.slice(1)).get('source') === 'specs' ? null : await nodeRegistry();
  if (served) {
    form.elements.source.value = 'paste';
    $('paste').value = served;
    document.body.dataset.node = 'true';
  }
  readHash();
  // A shared link of a paste opens without the paste (it never enters the
  // URL): the published specs, rather than an empty box.
  if (source() === 'paste' && !$('paste').value) {
    form.elements.source.value = 'specs';
    showSource();
  }
  form.addEventListener('submit', run);
  for (const radio of form.elements.source) radio.addEventListener('change', showSource);
  $('model-file').addEventListener('change', () => readModelFile().catch((e) => showError(e.message)));
  setStatus(served ? 'Ready: the devices are this node\'s (from /registry).' : 'Ready.');
  document.body.dataset.ready = 'true';
  await run();
  // From the start of navigation to the first plan shown: what the page's
  // speed target is about (docs/web.md).
  document.body.dataset.firstPlanMs = String(Math.round(performance.now()));
}

start().catch((e) => {
  showError(`The planner did not load: ${e.message}`);
  setStatus('Not loaded.');
});
