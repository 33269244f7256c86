#!/bin/bash
# The vitest suite's cuda half on the GPU machine (it has no npm): the test files with cuda
# describe blocks (test/hil/kernels, tiers, executor, every-policy, rotation, issue-bench, plan-issue-bench, queue-depth; the rest of the suite is host-only), the
# same files CI runs with their cuda half skipped.
#   here:  bash perf/device/vitest.sh pack   -> .device/vtmin.tar.xz (vitest and what these tests
#          import, ~9 MB) and .device/node-inc (Node's N-API headers)
#   there: bash perf/device/vitest.sh run    (carry: .device/node.xz .device/vtmin.tar.xz .device/node-inc)
# The files run one at a time: the timing tests (launch queue depth, issue benches) need the GPU to
# themselves, not shared with another file's kernels.
# There the addon is built from the tree by perf/device/build-addon.sh (nvcc and g++; the carried tree
# has no room for a prebuilt one); the report goes to $OUT/vitest-cuda.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."
FILES="test/hil/kernels.test.ts test/hil/tiers.test.ts test/hil/executor.test.ts test/hil/every-policy.test.ts test/hil/rotation.test.ts test/hil/issue-bench.test.ts test/hil/plan-issue-bench.test.ts test/hil/queue-depth.test.ts"
case "${1:-}" in
  pack)
    git check-ignore -q .device || { echo "vitest.sh: .device/ is not ignored by git" >&2; exit 2; }
    mkdir -p .device/node-inc
    NODE_BIN=$(node -p process.execPath)
    # this node's binary (without its debug symbols) and headers, whatever .device/node.xz held before
    cp -L "$NODE_BIN" .device/node.bin && strip .device/node.bin
    xz -T2 -6 -c .device/node.bin > .device/node.xz.tmp && mv .device/node.xz.tmp .device/node.xz && rm .device/node.bin
    inc="$(dirname "$NODE_BIN")/../include/node"
    cp "$inc"/{js_native_api.h,js_native_api_types.h,node_api.h,node_api_types.h} .device/node-inc/
    # vitest and the packages these tests load, with their dependencies (no compilers, types or CSS)
    node -e '
      const fs = require("fs"), path = require("path");
      const seen = new Set();
      const add = (n) => {
        const p = path.join("node_modules", n, "package.json");
        if (seen.has(n) || !fs.existsSync(p)) return;
        seen.add(n);
        const j = JSON.parse(fs.readFileSync(p));
        for (const d of Object.keys({ ...(j.dependencies || {}), ...(j.optionalDependencies || {}) })) add(d);
      };
      for (const r of ["vitest", "mathjs", "seedrandom", "arquero", "commander", "node-addon-api", "piscina"]) add(r);
      const keep = [...seen].filter((n) => !/^@types\/|^undici-types$|^tsx$|esbuild|lightningcss/.test(n));
      fs.writeFileSync(".device/vtmin.list", keep.map((n) => "node_modules/" + n).join("\n") + "\n");'
    # mathjs's browser and CommonJS builds and type declarations are not loaded by the tests (ESM imports)
    tar -cf - --exclude=node_modules/mathjs/lib/browser --exclude=node_modules/mathjs/lib/cjs --exclude=node_modules/mathjs/types -T .device/vtmin.list | xz -T2 -6 > .device/vtmin.tar.xz
    du -ch .device/node.xz .device/vtmin.tar.xz .device/node-inc | tail -1
    echo 'carry: [".device/node.xz", ".device/vtmin.tar.xz", ".device/node-inc"]   command: bash perf/device/vitest.sh run'
    ;;
  run)
    # there only: it unpacks node_modules/ and builds the addon into the tree
    if [ -e node_modules/.package-lock.json ] || [ -e hil/build/Release/kvtier_hil.node ]; then
      echo "vitest.sh run: this tree has npm's node_modules or a built addon; run it on the GPU machine (npm test runs these tests where npm is)" >&2
      exit 2
    fi
    OUT=${OUT:-/tmp/kvtier-device-out}
    mkdir -p "$OUT" /tmp/kvd-vt
    xz -dc .device/node.xz > /tmp/kvd-vt/node && chmod +x /tmp/kvd-vt/node
    tar -xJf .device/vtmin.tar.xz
    { date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/vitest-when.txt"
    T0=$(date +%s)
    bash perf/device/build-addon.sh .device/node-inc > "$OUT/vitest-build.txt" 2>&1 || { tail -20 "$OUT/vitest-build.txt"; exit 1; }
    echo "addon built in $(( $(date +%s) - T0 )) s"
    rc=0
    /tmp/kvd-vt/node node_modules/vitest/vitest.mjs run $FILES --no-file-parallelism --reporter=verbose > "$OUT/vitest-cuda.txt" 2>&1 || rc=$?
    grep -E "Test Files|Tests |skipped|✗|×|FAIL" "$OUT/vitest-cuda.txt" | head -30 || true
    echo "vitest rc $rc, total $(( $(date +%s) - T0 )) s"
    exit $rc
    ;;
  *)
    echo "usage: bash perf/device/vitest.sh pack|run" >&2
    exit 2
    ;;
esac
