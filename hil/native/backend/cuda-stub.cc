// Linked instead of the cuda backend when the addon was built without a CUDA compiler.
#include "backend.h"

#ifndef HIL_NO_CUDA_REASON
#define HIL_NO_CUDA_REASON "no CUDA compiler was found when the addon was built"
#endif

namespace hil {

CudaProbe probeCuda() {
  CudaProbe p;
  p.compiled = false;
  p.available = false;
  p.reason = std::string("addon built without the cuda backend: ") + HIL_NO_CUDA_REASON;
  return p;
}

std::unique_ptr<Backend> makeCudaBackend(int) { throw HilError(probeCuda().reason); }

}  // namespace hil
