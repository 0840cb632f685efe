//===- Npy.h - NumPy .npy files and element conversions ---------*- C++ -*-===//
//
// Format 1.0 (2.0 and 3.0 read too), little-endian, C order. bf16 travels as
// '<u2' (the upper 16 bits of an f32), bool as '|b1' (dag-format.md).
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_RUNTIME_NPY_H
#define RANKC_RUNTIME_NPY_H

#include <cstdint>
#include <string>
#include <vector>

namespace npy {

size_t elementBytes(int dtype);
const char *descr(int dtype);

/// Checks `path`'s header (a .npy file of `dtype` in C order) and gives its
/// shape and where its data begins; false and a message in `error` if not.
bool readHeader(const std::string &path, int dtype, std::vector<int64_t> &shape,
                size_t &dataOffset, std::string &error);

/// Reads `path` into `data`, which holds the product of `shape` elements of
/// `dtype`. On a missing file, another dtype or another shape: false and a
/// message in `error`.
bool read(const std::string &path, int dtype, const std::vector<int64_t> &shape,
          void *data, std::string &error);

/// Writes `path` through a temporary file renamed at the end.
bool write(const std::string &path, int dtype,
           const std::vector<int64_t> &shape, const void *data,
           std::string &error);

/// Element `i` of an array of `dtype`, as a double.
double loadElement(int dtype, const void *data, int64_t i);
/// Stores a value into element `i`: floats take `f`, integers `k`, bools `b`.
void storeElement(int dtype, void *data, int64_t i, double f, int64_t k,
                  bool b);

} // namespace npy

#endif // RANKC_RUNTIME_NPY_H
