#!/bin/bash
# There (the GPU machine has nvcc and g++ but no cmake-js or npm): builds hil/build/Release/kvtier_hil.node
# with the compile and link options of hil/CMakeLists.txt (sm_90, static CUDA runtime), from the
# sources in the working tree, Node's N-API headers in NODE_INC and node-addon-api in node_modules.
# Used to run the vitest suite's cuda half there (perf/device/vitest.sh), where the carried tree
# has no room for a prebuilt addon.
#   bash perf/device/build-addon.sh NODE_INC   (a folder with node_api.h, js_native_api.h, ...)
# It refuses to replace an addon that is already there (FORCE=1 replaces it): on a dev machine,
# `npm run build:native` builds it.
set -euo pipefail
NODE_INC=${1:?usage: bash perf/device/build-addon.sh NODE_INC}
NODE_INC=$(cd "$NODE_INC" 2>/dev/null && pwd) || { echo "build-addon: no folder $1" >&2; exit 2; }
cd "$(dirname "$0")/../.."
[ -f "$NODE_INC/node_api.h" ] || { echo "build-addon: $NODE_INC/node_api.h not found" >&2; exit 2; }
[ -f node_modules/node-addon-api/napi.h ] || { echo "build-addon: node_modules/node-addon-api/napi.h not found" >&2; exit 2; }
if [ -e hil/build/Release/kvtier_hil.node ] && [ "${FORCE:-0}" != 1 ]; then
  echo "build-addon: hil/build/Release/kvtier_hil.node exists; FORCE=1 replaces it" >&2
  exit 2
fi
OBJ=$(mktemp -d)
pids=()
# a failed compile stops the script (set -e at its wait): stop the others and remove the objects
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$OBJ"' EXIT
DEFS="-DNAPI_VERSION=8 -DNAPI_CPP_EXCEPTIONS -DNODE_ADDON_API_DISABLE_DEPRECATED -DHIL_WITH_CUDA=1"
INC="-I$NODE_INC -Inode_modules/node-addon-api"
for f in hil/native/binding.cc hil/native/binding/backend-wrap.cc hil/native/binding/attention-plan-wrap.cc hil/native/binding/file-tier-wrap.cc \
         hil/native/backend/backend.cc hil/native/backend/host-backend.cc hil/native/backend/file-tier.cc; do
  g++ -std=c++17 -O2 -ffp-contract=off -fPIC $DEFS $INC -c "$f" -o "$OBJ/$(basename "$f").o" & pids+=($!)
done
for f in hil/native/backend/cuda-backend.cu hil/native/launch/launch-quantize.cu hil/native/launch/launch-hadamard.cu \
         hil/native/launch/launch-attention.cu hil/native/launch/launch-gemv.cu; do
  nvcc -std=c++17 -O3 --expt-relaxed-constexpr -lineinfo --generate-code=arch=compute_90,code=[compute_90,sm_90] \
    -Xcompiler -fPIC $DEFS $INC -c "$f" -o "$OBJ/$(basename "$f").o" & pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
mkdir -p hil/build/Release
pids=()
nvcc -shared -cudart static --generate-code=arch=compute_90,code=[compute_90,sm_90] -o hil/build/Release/kvtier_hil.node "$OBJ"/*.o -lpthread
echo "built hil/build/Release/kvtier_hil.node"
