// HIL_HD marks functions usable from both host C++ and CUDA device code.
#pragma once
#if defined(__CUDACC__)
#define HIL_HD __host__ __device__ __forceinline__
#else
#define HIL_HD inline
#endif
