//===- Bf16Builtins.cpp - float -> bf16 conversions LLVM may call ---------===//
//
// LLVM lowers fptrunc to bfloat into calls of compiler-rt's __truncsfbf2 /
// __truncdfbf2, which GCC 12's libgcc lacks. bf16 values travel in XMM
// registers like _Float16, so returning the bits as a _Float16 matches the
// calling convention. Round to nearest even; NaN stays NaN.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstring>

static _Float16 bitsAsHalf(uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, 2);
  return h;
}

extern "C" _Float16 __truncsfbf2(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000)
    return bitsAsHalf(uint16_t((x >> 16) | 0x40));
  x += 0x7fff + ((x >> 16) & 1);
  return bitsAsHalf(uint16_t(x >> 16));
}

extern "C" _Float16 __truncdfbf2(double d) {
  // Through float: exact unless d is within half an f32 ulp of a tie.
  return __truncsfbf2(float(d));
}
