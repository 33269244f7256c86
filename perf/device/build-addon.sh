#!/bin/bash
# There (the GPU machine has nvcc and g++ but no cmake-js or npm): builds hil/build/Release/kvtier_hil.node
# with the compile and link options of hil/CMakeLists.txt (sm_90, static CUDA runtime), from the
# sources in the working tree, Node's N-API headers in NODE_INC and node-addon-api in node_modules.
# Used to run the vitest suite's cuda half there (perf/device/vitest.sh), where the carried tree
# has no room for a prebuilt addon.
#   bash perf/device/build-addon.sh NODE_INC   (a folder with node_api.h, js_native_api.h, ...)
set -euo pipefail
cd "$(dirname "$0")/../.."
NODE_INC=${1:?usage: bash perf/device/build-addon.sh NODE_INC}
[ -f "$NODE_INC/node_api.h" ] || { echo "build-addon: $NODE_INC/node_api.h not found" >&2; exit 2; }
[ -f node_modules/node-addon-api/napi.h ] || { echo "build-addon: node_modules/node-addon-api/napi.h not found" >&2; exit 2; }
OBJ=$(mktemp -d)
DEFS="-DNAPI_VERSION=8 -DNAPI_CPP_EXCEPTIONS -DNODE_ADDON_API_DISABLE_DEPRECATED -DHIL_WITH_CUDA=1"
INC="-I$NODE_INC -Inode_modules/node-addon-api"
pids=()
for f in hil/native/binding.cc hil/native/binding/backend-wrap.cc hil/native/binding/file-tier-wrap.cc \
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
nvcc -shared -cudart static --generate-code=arch=compute_90,code=[compute_90,sm_90] -o hil/build/Release/kvtier_hil.node "$OBJ"/*.o -lpthread
rm -rf "$OBJ"
echo "built hil/build/Release/kvtier_hil.node"
