#!/bin/bash
# Here (the dev machine): build what the GPU machine needs into .device/NAME.tar.xz (git-ignored) and
# print the `carry` list for the device tool's `run`. The GPU machine has no npm and no node:
# .device/node.xz is this machine's node binary without its debug symbols (stripped: 99 -> 86 MB, 22 MB as xz).
#   bash perf/device/bundle.sh NAME
# Then on the device: bash perf/device/run.sh NAME   (see there), carry: .device/node.xz .device/NAME.tar.xz
set -euo pipefail
cd "$(dirname "$0")/../.."
NAME=${1:?usage: bash perf/device/bundle.sh NAME}
EXCLUDE=$(git rev-parse --git-path info/exclude)
mkdir -p .device "$(dirname "$EXCLUDE")"
grep -qx '/.device/' "$EXCLUDE" 2>/dev/null || echo '/.device/' >> "$EXCLUDE"
if [ ! -f .device/node.xz ]; then
  cp -L "$(command -v node)" .device/node.bin && strip .device/node.bin && xz -T2 -6 -c .device/node.bin > .device/node.xz && rm .device/node.bin
fi
npx tsc -p tsconfig.json
flock /tmp/kvtier-build.lock node hil/build.mjs --cuda
B=.device/$NAME
rm -rf "$B" && mkdir -p "$B/node_modules"
cp -r dist "$B/dist"
# which build this is (the GPU machine has no git): read by common/build-identity.ts into what a run writes
COMMIT=$(git rev-parse --short=7 HEAD)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then COMMIT="$COMMIT+dirty"; fi
echo "{\"version\": \"$(node -p 'require("./package.json").version')\", \"commit\": \"$COMMIT\"}" > "$B/dist/build.json"
cp hil/build/Release/kvtier_hil.node "$B/"
echo '{"type":"module"}' > "$B/package.json"
# the packages the HIL path imports at run time (fits, seeds, Arrow tables), with their own dependencies
for p in mathjs seedrandom arquero piscina @uwdata acorn complex.js decimal.js escape-latex fraction.js javascript-natural-sort tiny-emitter typed-function @babel/runtime; do
  [ -e "node_modules/$p" ] && mkdir -p "$B/node_modules/$(dirname "$p")" && cp -rL "node_modules/$p" "$B/node_modules/$p"
done
# ESM only: the run imports mathjs's lib/esm (the device tool's carry limit counts every megabyte)
rm -rf "$B/node_modules/mathjs/lib/cjs" "$B/node_modules/mathjs/lib/browser" "$B/node_modules/mathjs/types"
tar -C .device -cJf "$B.tar.xz" "$NAME"
du -ch .device/node.xz "$B.tar.xz" | tail -1
echo "carry: [\".device/node.xz\", \".device/$NAME.tar.xz\"]   command: bash perf/device/run.sh $NAME"
