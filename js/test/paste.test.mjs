// Pasted tool output gives the devices the CLI finds in the same output: for
// every real capture of ../shared/fixtures/real that is tool output alone,
// devicesFromText(transcript) equals `hwaccel capture --import TRANSCRIPT`
// replayed by `hwaccel detect --fixture`, and each output pasted alone (no
// "$ command" line) is recognised as the command that printed it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPackage, cli, repoFile } from './support.mjs';

const hwaccel = await loadPackage();
const shared = process.env.HWACCEL_SHARED_FIXTURES ?? repoFile('../shared/fixtures/real');
const captures = JSON.parse(readFileSync(repoFile('tests/conformance/real_captures.json'), 'utf8')).captures
  .filter((c) => c.import.commands.length > 0 && (c.import.files ?? []).length === 0);

function transcriptOf(capture) {
  const dir = join(shared, capture.capture);
  return capture.import.commands
    .map((c) => `$ ${c.argv.join(' ')}\n${readFileSync(join(dir, c.stdout), 'utf8')}`)
    .join('\n');
}

// What the CLI detects in `transcript`, and its plan for `model` there.
function cliDetection(transcript, model) {
  const work = mkdtempSync(join(tmpdir(), 'hwaccel-paste-'));
  try {
    writeFileSync(join(work, 'transcript.txt'), transcript);
    cli(['capture', '--import', join(work, 'transcript.txt'), '--out', join(work, 'fixture')]);
    const fixture = join(work, 'fixture');
    const detected = JSON.parse(cli(['detect', '--fixture', fixture, '--no-timings', '--json']));
    const plan = model ? JSON.parse(cli(['plan', '--fixture', fixture, '--model', model, '--json'])) : undefined;
    return { detected, plan };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const sharedThere = existsSync(shared);

test('the shared real captures are there', { skip: !sharedThere && 'no ../shared/fixtures/real' }, () => {
  assert.ok(captures.length >= 20, `${captures.length} tool-output captures`);
});

for (const capture of sharedThere ? captures : []) {
  test(`paste ${capture.capture}`, async () => {
    const transcript = transcriptOf(capture);
    const { detected } = cliDetection(transcript);
    assert.deepEqual(await hwaccel.devicesFromText(transcript), detected);
    // Each output alone, as a user copies it from the terminal.
    if (capture.import.commands.length === 1) {
      const [only] = capture.import.commands;
      const raw = readFileSync(join(shared, capture.capture, only.stdout), 'utf8');
      let alone;
      try {
        alone = await hwaccel.devicesFromText(raw);
      } catch (e) {
        assert.equal(e.status, 'parse_error', `${only.argv.join(' ')} pasted alone: ${e.message}`);
        return;  // a view whose shape is not recognised must say so, never guess
      }
      assert.deepEqual(alone.devices, detected.devices, `${only.argv.join(' ')} pasted alone`);
    }
  });
}

test('a plan on pasted devices is the CLI plan on the imported capture', { skip: !sharedThere }, async () => {
  const capture = captures.find((c) => c.capture === 'nvidia/gls-8x-h100-sxm-565');
  const transcript = transcriptOf(capture);
  const { plan } = cliDetection(transcript, 'llama-3.1-70b');
  assert.deepEqual(await hwaccel.plan({ model: 'llama-3.1-70b', paste: transcript }), plan);
});

// nvidia-smi's default table pasted alone, checked against the `-q` report
// captured on the same machine: the same GPUs, bus ids, memory and MIG
// devices; a name the table cut short ("...") is the start of the full one.
const tables = [
  ['nvidia/gls-8x-h100-sxm-565', 'nvidia-smi.txt', 'nvidia-smi-a.txt'],
  ['nvidia/gls-2x-h100-nvl-550', 'nvidia-smi.txt', 'nvidia-smi-a.txt'],
  ['nvidia/nge-linux-h100-80gb-hbm3-590.48.01', 'extracted/nvidia-smi.txt', 'extracted/nvidia-smi-q.txt'],
  ['nvidia/nge-linux-h100-mig-590.48.01', 'extracted/nvidia-smi.txt', 'extracted/nvidia-smi-q.txt'],
  ['nvidia/nge-linux-rtx-2080-super-610.57.04', 'extracted/nvidia-smi.txt', 'extracted/nvidia-smi-q.txt'],
  ['nvidia/nge-windows-rtx-2080-super-591.86', 'extracted/nvidia-smi.txt', 'extracted/nvidia-smi-q.txt'],
];
for (const [capture, table, report] of tables) {
  test(`the default table of ${capture} pasted alone`, { skip: !sharedThere }, async () => {
    const gpus = (r) => r.devices.filter((d) => d.backend === 'cuda');
    const fromTable = gpus(await hwaccel.devicesFromText(readFileSync(join(shared, capture, table), 'utf8')));
    const fromReport = gpus(await hwaccel.devicesFromText(readFileSync(join(shared, capture, report), 'utf8')));
    assert.ok(fromTable.length > 0);
    assert.equal(fromTable.length, fromReport.length);
    fromTable.forEach((d, i) => {
      const q = fromReport[i];
      assert.equal(d.pci_bus_id, q.pci_bus_id);
      assert.equal(d.memory_bytes, q.memory_bytes);
      assert.equal(d.driver_version, q.driver_version);
      if (d.name.endsWith('...')) assert.ok(q.name.startsWith(d.name.slice(0, -3).trim()), `${d.name} / ${q.name}`);
      else assert.equal(d.name, q.name);
      assert.equal((d.partitions ?? []).length, (q.partitions ?? []).length);
      (d.partitions ?? []).forEach((p, j) => assert.equal(p.memory_bytes, q.partitions[j].memory_bytes));
      assert.equal(d.properties.source, 'nvidia-smi');
    });
  });
}

test('hwaccel detect JSON pasted is read as it is', async () => {
  const json = cli(['detect', '--fixture', repoFile('fixtures/machines/dgx-h100-8x-nvswitch'), '--no-timings', '--json']);
  assert.deepEqual(await hwaccel.devicesFromText(json), JSON.parse(json));
  // Indented, with its schema version after the devices (members in another order).
  const { schema_version: version, ...rest } = JSON.parse(json);
  const reordered = JSON.stringify({ ...rest, schema_version: version }, null, 2);
  assert.deepEqual(await hwaccel.devicesFromText(reordered), JSON.parse(json));
});

test('garbage is refused with a message naming what is read', async () => {
  await assert.rejects(hwaccel.devicesFromText('hello, this is not nvidia-smi'),
    (e) => e.name === 'HwaccelError' && e.status === 'parse_error' && /nvidia-smi/.test(e.message));
  await assert.rejects(hwaccel.devicesFromText(''), (e) => e.status === 'invalid_argument');
  await assert.rejects(hwaccel.devicesFromText('\u0000\u0001\u00ff'.repeat(1000)), (e) => e.name === 'HwaccelError');
});

test('a 50 MB paste is refused at once, and the module still answers', async () => {
  const huge = 'GPU 0: NVIDIA H100 (UUID: GPU-0)\n'.repeat(50 * 1024 * 1024 / 33);
  const started = Date.now();
  await assert.rejects(hwaccel.devicesFromText(huge), (e) => e.name === 'HwaccelError' && /MiB|bytes/.test(e.message));
  assert.ok(Date.now() - started < 10000);
  const after = await hwaccel.plan({ model: 'llama-3.1-8b', devices: '1xRTX-4090' });
  assert.equal(after.fits, true);
});
