// IEEE 754 binary16 <-> binary32 conversion on raw bits, round-to-nearest-even.
// Plain C++ so the host backend needs no compiler support for _Float16; the CUDA
// side uses __float2half_rn / __half2float, which have the same semantics.
#pragma once
#include <cstdint>
#include <cstring>

namespace hil {

inline float halfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do { ++e; man <<= 1; } while ((man & 0x400u) == 0);
      bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((man & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {  // inf or nan
    return sign | (absx > 0x7f800000u ? 0x7e00u : 0x7c00u);
  }
  if (absx >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: overflow to inf
  const int exp = static_cast<int>(absx >> 23) - 127;
  if (exp < -25) return sign;  // below half of the smallest subnormal
  uint32_t man = (absx & 0x7fffffu) | 0x800000u;  // 24-bit significand
  int shift;  // bits dropped from the 24-bit significand
  uint32_t base;
  if (exp < -14) {  // subnormal half
    shift = 13 + (-14 - exp);
    base = 0;
  } else {
    shift = 13;
    base = static_cast<uint32_t>(exp + 15) << 10;
    man &= 0x7fffffu;
  }
  uint32_t kept = man >> shift;
  const uint32_t rem = man & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  uint32_t result = base + kept;
  if (rem > halfway || (rem == halfway && (kept & 1u))) result += 1;  // carries into exponent correctly
  return static_cast<uint16_t>(sign | result);
}

}  // namespace hil
