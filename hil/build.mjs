#!/usr/bin/env node
// Builds the HIL addon (hil/build/Release/kvtier_hil.node) with CMake, passing the same
// variables cmake-js passes (CMAKE_JS_INC: node-api-headers + node-addon-api), so it works
// offline and on machines without npm.
//   node hil/build.mjs [--optional] [--cuda | --no-cuda] [--jobs N] [--verbose]
//
// The host backend is always built; a failure to build it exits 1 with the compiler's errors.
// --optional (npm's `prepare`): when the toolchain is missing (cmake, or a C++ compiler: $CXX,
//   c++, g++ or clang++ on PATH), print so and exit 0 without an addon. A toolchain that is there
//   and fails still exits 1.
// The CUDA backend (minutes of nvcc) is built when
//   --cuda (or KVTIER_HIL_CUDA=1): requested; a failed CUDA build exits 1;
//   neither flag: only when an NVIDIA driver is loaded here (/proc/driver/nvidia/version exists,
//     or `nvidia-smi -L` exits 0); a failed CUDA build then falls back to the host-only addon;
//   --no-cuda (or KVTIER_HIL_NO_CUDA=1): never.
// hil/build/Release/build-info.json records the choice (cudaMode), why (note) and the result (cuda).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const hilDir = dirname(fileURLToPath(import.meta.url));
const root = resolve(hilDir, '..');
const outDir = join(hilDir, 'build', 'Release');
const say = (line) => console.log(`kvtier hil build: ${line}`);

const USAGE = 'usage: node hil/build.mjs [--optional] [--cuda | --no-cuda] [--jobs N] [--verbose]';
const args = process.argv.slice(2);
const flags = new Set(['--optional', '--cuda', '--no-cuda', '--verbose']);
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--jobs') i++;
  else if (!flags.has(args[i])) bad(`unknown argument "${args[i]}"; valid: --optional, --cuda, --no-cuda, --jobs N, --verbose`);
}
const optional = args.includes('--optional');
const verbose = args.includes('--verbose');
const jobsAt = args.indexOf('--jobs');
const jobs = jobsAt >= 0 ? Number(args[jobsAt + 1]) : Math.max(1, cpus().length);
if (!Number.isInteger(jobs) || jobs < 1) bad(`--jobs: expected a positive integer, got ${args[jobsAt + 1]}`);
for (const v of ['KVTIER_HIL_CUDA', 'KVTIER_HIL_NO_CUDA']) {
  const x = process.env[v];
  if (x !== undefined && x !== '' && x !== '0' && x !== '1') bad(`${v}: expected 0 or 1, got "${x}"`);
}
const wantCuda = args.includes('--cuda') || process.env.KVTIER_HIL_CUDA === '1';
const noCuda = args.includes('--no-cuda') || process.env.KVTIER_HIL_NO_CUDA === '1';
if (wantCuda && noCuda) bad('--cuda (KVTIER_HIL_CUDA=1) and --no-cuda (KVTIER_HIL_NO_CUDA=1) contradict each other');

function bad(message) {
  console.error(`kvtier hil build: ${message}\n${USAGE}`);
  process.exit(2);
}

function fail(message) {
  console.error(`kvtier hil build: FAILED: ${message}`);
  process.exit(1);
}

function onPath(cmd) {
  if (cmd.includes('/')) return existsSync(cmd) ? cmd : undefined;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, cmd))) return join(dir, cmd);
  }
  return undefined;
}

/** cmake and a C++ compiler, or what is missing */
function toolchain() {
  const missing = [];
  const cmake = spawnSync('cmake', ['--version'], { encoding: 'utf8' });
  if (cmake.error || cmake.status !== 0) missing.push('cmake (CMake >= 3.18) on PATH');
  const cxxEnv = process.env.CXX?.trim().split(/\s+/)[0];
  const cxx = cxxEnv ? onPath(cxxEnv) : ['c++', 'g++', 'clang++'].map(onPath).find(Boolean);
  if (!cxx) missing.push(cxxEnv ? `the C++ compiler $CXX=${process.env.CXX}` : 'a C++ compiler (c++, g++ or clang++ on PATH, or $CXX)');
  return { missing, cmake: cmake.stdout?.split('\n')[0] ?? '', cxx };
}

/** whether an NVIDIA driver is loaded here, and how that was found */
function gpuDriver() {
  if (existsSync('/proc/driver/nvidia/version')) return { present: true, how: '/proc/driver/nvidia/version exists' };
  const smi = spawnSync('nvidia-smi', ['-L'], { encoding: 'utf8', timeout: 20_000 });
  if (!smi.error && smi.status === 0) return { present: true, how: '`nvidia-smi -L` exits 0' };
  const why = smi.error ? 'nvidia-smi not found' : `nvidia-smi -L exits ${smi.status ?? smi.signal}`;
  return { present: false, how: `no /proc/driver/nvidia/version, ${why}` };
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

const progressLine = /^\[\s*\d+%\]/;

/** runs a command; progress lines ("[ 40%] Building CXX object ...") are printed as they come */
function run(cmd, cmdArgs) {
  if (verbose) console.log(`$ ${cmd} ${cmdArgs.join(' ')}`);
  return new Promise((done) => {
    const child = spawn(cmd, cmdArgs, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const t0 = Date.now();
    let log = '';
    let pending = '';
    let quietSince = t0;
    // a line a minute while a long compile (nvcc) says nothing
    const heartbeat = setInterval(() => {
      if (Date.now() - quietSince < 55_000) return;
      console.log(`  ... still working (${Math.round((Date.now() - t0) / 60_000)} min so far)`);
      quietSince = Date.now();
    }, 60_000);
    const take = (chunk) => {
      const text = chunk.toString();
      quietSince = Date.now();
      log += text;
      if (verbose) {
        process.stdout.write(text);
        return;
      }
      pending += text;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const l of lines) if (progressLine.test(l)) console.log(`  ${l}`);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', (e) => {
      clearInterval(heartbeat);
      done({ ok: false, log: `${log}${e.message}\n` });
    });
    child.on('close', (code, signal) => {
      clearInterval(heartbeat);
      done({ ok: code === 0, log: signal ? `${log}killed by ${signal}\n` : log });
    });
  });
}

/** the build log without its progress lines: what the compiler and the linker said */
function compilerOutput(log, maxLines = 200) {
  const lines = log.split('\n').filter((l) => l.trim() && !progressLine.test(l));
  return (lines.length > maxLines ? [`... (${lines.length - maxLines} lines before)`, ...lines.slice(-maxLines)] : lines).join('\n');
}

async function build(withCuda, offReason) {
  const kind = withCuda ? 'cuda + host' : 'host';
  const buildDir = join(hilDir, 'build', withCuda ? 'cmake-cuda' : 'cmake-host');
  mkdirSync(buildDir, { recursive: true });
  const t0 = Date.now();
  say(`configuring the ${kind} build in ${buildDir}`);
  // CMake caches a CUDA compiler it did not find: look again (nvcc may have been installed since)
  const cache = join(buildDir, 'CMakeCache.txt');
  const retry = withCuda && existsSync(cache) && /^CMAKE_CUDA_COMPILER:\w+=(\S*-)?NOTFOUND$/m.test(readFileSync(cache, 'utf8'));
  const configure = await run('cmake', [
    ...(retry ? ['-U', 'CMAKE_CUDA_COMPILER'] : []),
    '-S', hilDir, '-B', buildDir,
    '-DCMAKE_BUILD_TYPE=Release',
    `-DCMAKE_JS_INC=${includeDirs().join(';')}`,
    `-DCMAKE_LIBRARY_OUTPUT_DIRECTORY=${outDir}`,
    `-DHIL_WITH_CUDA=${withCuda ? 'ON' : 'OFF'}`,
    `-DHIL_CUDA_OFF_REASON=${withCuda ? '' : offReason.replace(/[^\w .,:/=()+-]/g, '')}`,
  ]);
  if (!configure.ok) return { ok: false, stage: 'configure', log: configure.log };
  const cuda = /kvtier_hil: cuda backend \S*nvcc/.test(configure.log);
  if (withCuda && !cuda) {
    const why = configure.log.split('\n').find((l) => l.includes('kvtier_hil: cuda backend'))?.replace(/^-- kvtier_hil: cuda backend\s*(\S*NOTFOUND\s*)?/, '');
    return { ok: false, stage: 'configure', noCompiler: true, log: `CMake found no CUDA compiler: ${why ?? 'see the CMake output'}\n` };
  }
  say(`compiling the ${kind} backend${withCuda ? 's' : ''} with ${jobs} job${jobs > 1 ? 's' : ''}${withCuda ? ' (nvcc for sm_90: this takes minutes)' : ''}`);
  const compile = await run('cmake', ['--build', buildDir, '--parallel', String(jobs)]);
  if (!compile.ok) return { ok: false, stage: 'compile', log: compile.log };
  say(`${kind} build done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return { ok: true, cuda };
}

const tools = toolchain();
if (tools.missing.length > 0) {
  const what = `missing ${tools.missing.join(' and ')}`;
  if (!optional) fail(`${what}; install it, or use the simulator without HIL`);
  say(`skipped: ${what}. The simulator works without the addon; HIL commands will say it is missing.`);
  say('install the toolchain, then run `npm run build:native`.');
  process.exit(0);
}
say(`${tools.cmake}, C++ compiler ${tools.cxx}`);

let cudaMode, note, tryCuda;
if (noCuda) {
  cudaMode = 'disabled';
  tryCuda = false;
  note = args.includes('--no-cuda') ? 'cuda disabled by --no-cuda' : 'cuda disabled by KVTIER_HIL_NO_CUDA=1';
} else if (wantCuda) {
  cudaMode = 'requested';
  tryCuda = true;
  note = args.includes('--cuda') ? 'cuda requested by --cuda' : 'cuda requested by KVTIER_HIL_CUDA=1';
} else {
  const driver = gpuDriver();
  cudaMode = 'auto';
  tryCuda = driver.present;
  note = driver.present
    ? `NVIDIA driver found (${driver.how})`
    : `no NVIDIA driver found at build time (${driver.how}): build it anyway with npm run build:native -- --cuda`;
}
say(tryCuda ? `building the cuda backend: ${note}` : `cuda backend not built: ${note}`);

let result = await build(tryCuda, note);
if (!result.ok && tryCuda) {
  const errors = compilerOutput(result.log, 60);
  if (cudaMode === 'requested') fail(`the cuda build failed at ${result.stage}:\n${errors}`);
  if (result.noCompiler) {
    note = `${note}, but no CUDA compiler: nvcc not found by CMake`;
    say(`cuda backend not built: ${note}; building the host-only addon`);
  } else {
    console.error(`kvtier hil build: the cuda build failed at ${result.stage}; building the host-only addon instead:\n${errors}`);
    note = `cuda build failed at ${result.stage} (${note})`;
  }
  result = await build(false, note);
}
if (!result.ok) fail(`the host backend's ${result.stage} step failed:\n${compilerOutput(result.log)}`);
if (!existsSync(join(outDir, 'kvtier_hil.node'))) fail('the build finished but kvtier_hil.node is missing');
const info = { builtAt: new Date().toISOString(), cuda: result.cuda, cudaMode, note, node: process.version };
writeFileSync(join(outDir, 'build-info.json'), `${JSON.stringify(info, null, 2)}\n`);
say(`built ${join(outDir, 'kvtier_hil.node')} (${result.cuda ? 'cuda + host backends' : 'host backend only'})`);
