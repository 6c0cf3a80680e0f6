// What the package's tests share: the package under test, the native CLI.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export function repoFile(path) { return join(repo, path); }

function required(name, fallback) {
  const value = process.env[name] ?? fallback;
  if (!value || !existsSync(value)) throw new Error(`${name}=${value ?? ''}: not found (js/test/README.md)`);
  return value;
}

// The assembled package (HWACCEL_JS, default build-wasm/js/package).
export async function loadPackage() {
  const dir = required('HWACCEL_JS', repoFile('build-wasm/js/package'));
  return import(pathToFileURL(join(dir, 'hwaccel.js')).href);
}

// `hwaccel ARGS...`'s standard output. Exit status 1 is a plan that does not
// fit, which still prints its JSON; anything else fails the test.
export function cli(args) {
  const hwaccel = required('HWACCEL_CLI', repoFile('build/tools/hwaccel'));
  try {
    return execFileSync(hwaccel, args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  } catch (e) {
    if (e.status === 1 && e.stdout) return e.stdout;
    throw new Error(`hwaccel ${args.join(' ')} exited ${e.status}: ${e.stderr}`);
  }
}
