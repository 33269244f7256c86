#!/usr/bin/env node
// Builds the HIL addon (hil/build/Release/kvtier_hil.node) with CMake, passing the same
// variables cmake-js passes (CMAKE_JS_INC: node-api-headers + node-addon-api), so it works
// offline and on machines without npm. CUDA is optional: when the CUDA build fails the
// host-only addon is built instead.
//   node hil/build.mjs [--optional] [--no-cuda] [--jobs N] [--verbose]
// --optional: never fail the caller (exit 0, printing why nothing was built).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const hilDir = dirname(fileURLToPath(import.meta.url));
const root = resolve(hilDir, '..');
const args = process.argv.slice(2);
const optional = args.includes('--optional');
const noCuda = args.includes('--no-cuda') || process.env.KVTIER_HIL_NO_CUDA === '1';
const verbose = args.includes('--verbose');
const jobsAt = args.indexOf('--jobs');
const jobs = jobsAt >= 0 ? Number(args[jobsAt + 1]) : Math.max(1, cpus().length);
const outDir = join(hilDir, 'build', 'Release');

function fail(message) {
  console.error(`kvtier hil build: ${message}`);
  if (optional) {
    console.error('kvtier hil build: continuing without the native addon (--optional); HIL features will report it missing.');
    process.exit(0);
  }
  process.exit(1);
}

function run(cmd, cmdArgs) {
  if (verbose) console.log(`$ ${cmd} ${cmdArgs.join(' ')}`);
  const r = spawnSync(cmd, cmdArgs, { cwd: root, encoding: 'utf8', stdio: verbose ? 'inherit' : 'pipe' });
  if (r.error) return { ok: false, log: String(r.error.message) };
  return { ok: r.status === 0, log: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

function includeDirs() {
  if (process.env.KVTIER_HIL_NAPI_INCLUDE) return process.env.KVTIER_HIL_NAPI_INCLUDE.split(':');
  const require = createRequire(join(root, 'package.json'));
  const dirs = [];
  for (const pkg of ['node-api-headers', 'node-addon-api']) {
    try {
      const mod = require(pkg);
      dirs.push(resolve(process.cwd(), String(mod.include_dir ?? mod.include).replace(/"/g, '')));
    } catch (e) {
      fail(`cannot find the npm package ${pkg} (${e.message}); run npm install first`);
    }
  }
  return dirs;
}

function build(withCuda) {
  const buildDir = join(hilDir, 'build', withCuda ? 'cmake-cuda' : 'cmake-host');
  mkdirSync(buildDir, { recursive: true });
  const configure = run('cmake', [
    '-S', hilDir, '-B', buildDir,
    '-DCMAKE_BUILD_TYPE=Release',
    `-DCMAKE_JS_INC=${includeDirs().join(';')}`,
    `-DCMAKE_LIBRARY_OUTPUT_DIRECTORY=${outDir}`,
    `-DHIL_WITH_CUDA=${withCuda ? 'ON' : 'OFF'}`,
  ]);
  if (!configure.ok) return { ok: false, stage: 'configure', log: configure.log };
  const cuda = /kvtier_hil: cuda backend \S*nvcc/.test(configure.log);
  const compile = run('cmake', ['--build', buildDir, '--parallel', String(jobs)]);
  if (!compile.ok) return { ok: false, stage: 'compile', log: compile.log, cuda };
  return { ok: true, cuda, log: configure.log };
}

if (run('cmake', ['--version']).ok === false) fail('cmake was not found on PATH (CMake ≥ 3.18 is needed)');

let result = build(!noCuda);
let cudaNote = noCuda ? 'cuda disabled by --no-cuda' : '';
if (!result.ok && !noCuda) {
  console.error(`kvtier hil build: the CUDA build failed at ${result.stage}; building the host-only addon instead.`);
  console.error(result.log.split('\n').filter((l) => /error/i.test(l)).slice(0, 10).join('\n'));
  cudaNote = `CUDA build failed at ${result.stage}`;
  result = build(false);
}
if (!result.ok) fail(`the ${result.stage} step failed:\n${result.log.slice(-4000)}`);
if (!result.cuda && !cudaNote) cudaNote = 'no CUDA compiler found';
const info = { builtAt: new Date().toISOString(), cuda: result.cuda, note: cudaNote, node: process.version };
writeFileSync(join(outDir, 'build-info.json'), JSON.stringify(info, null, 2));
if (existsSync(join(outDir, 'kvtier_hil.node'))) {
  console.log(`kvtier hil build: built ${join(outDir, 'kvtier_hil.node')} (${result.cuda ? 'cuda + host backends' : `host backend only: ${cudaNote}`})`);
} else {
  fail('the build finished but kvtier_hil.node is missing');
}
void rmSync;
