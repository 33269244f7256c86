// Every CUDA call is checked; a failure becomes a HilError naming the call and CUDA's text.
#pragma once
#include <cuda_runtime.h>
#include <string>
#include "../backend/error.h"

namespace hil {

inline void cudaCheck(cudaError_t err, const char* call) {
  if (err != cudaSuccess) {
    throw HilError(std::string(call) + " failed: " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
  }
}

// After a kernel launch: reports launch-configuration errors under the kernel's name.
inline void checkLaunch(const char* kernel) { cudaCheck(cudaGetLastError(), kernel); }

}  // namespace hil

#define HIL_CUDA(call) ::hil::cudaCheck((call), #call)
