//===- Npy.cpp - NumPy .npy files and element conversions -----------------===//

#include "tooling/Npy.h"
#include "rankc_runtime.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace npy {

size_t elementBytes(int dtype) {
  static const size_t bytes[] = {
#define RANKC_X(e, name, bytes, descr, ctype) bytes,
      RANKC_DTYPES(RANKC_X)
#undef RANKC_X
  };
  return bytes[dtype];
}

const char *descr(int dtype) {
  static const char *d[] = {
#define RANKC_X(e, name, bytes, descr, ctype) descr,
      RANKC_DTYPES(RANKC_X)
#undef RANKC_X
  };
  return d[dtype];
}

static std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += std::to_string(shape[i]) + (shape.size() == 1 ? "," : i + 1 < shape.size() ? ", " : "");
  return s + ")";
}

// The value of `key` in the header dict, up to the next ',' outside ().
static std::string field(const std::string &header, const std::string &key) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    return "";
  at = header.find(':', at);
  if (at == std::string::npos)
    return "";
  size_t end = at + 1;
  int depth = 0;
  for (; end < header.size(); ++end) {
    char c = header[end];
    depth += c == '(';
    depth -= c == ')';
    if (depth == 0 && (c == ',' || c == '}'))
      break;
  }
  std::string v = header.substr(at + 1, end - at - 1 + (header[end] == ')'));
  size_t b = v.find_first_not_of(" "), e = v.find_last_not_of(" ");
  return b == std::string::npos ? "" : v.substr(b, e - b + 1);
}

// Headers NumPy writes are a few hundred bytes; a file claiming more than
// this is not one (version 2's 32-bit length would let it claim 4 GiB).
constexpr uint32_t kMaxHeader = 1 << 20;

bool readHeader(const std::string &path, int dtype, std::vector<int64_t> &got,
                size_t &dataOffset, std::string &error) {
  // Only regular files: a FIFO or a device would block the rank (or never
  // end) where no watchdog sees it.
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    error = "'" + path + "' is not a regular file";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read '" + path + "': " + strerror(errno);
    return false;
  }
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    error = "'" + path + "' is not a .npy file";
    return false;
  }
  if (magic[6] < 1 || magic[6] > 3) {
    error = "'" + path + "' is a .npy file of version " +
            std::to_string(int(static_cast<unsigned char>(magic[6]))) +
            " (this reader knows versions 1 to 3)";
    return false;
  }
  uint32_t headerLen = 0;
  unsigned char len[4] = {0, 0, 0, 0};
  if (magic[6] == 1) {
    in.read(reinterpret_cast<char *>(len), 2);
    headerLen = len[0] | (len[1] << 8);
  } else {
    in.read(reinterpret_cast<char *>(len), 4);
    headerLen = len[0] | (len[1] << 8) | (len[2] << 16) | (uint32_t(len[3]) << 24);
  }
  if (!in || headerLen > kMaxHeader) {
    error = "'" + path + "' has a header of " + std::to_string(headerLen) +
            " bytes (at most " + std::to_string(kMaxHeader) + ")";
    return false;
  }
  std::string header(headerLen, ' ');
  if (!in.read(header.data(), headerLen)) {
    error = "'" + path + "' has a truncated header";
    return false;
  }
  std::string d = field(header, "descr");
  std::string want = descr(dtype);
  // '<', '=' and '|' all mean little-endian (or no order) here.
  auto norm = [](std::string s) {
    if (s.size() >= 2 && (s[0] == '\'' || s[0] == '"'))
      s = s.substr(1, s.size() - 2);
    if (!s.empty() && (s[0] == '<' || s[0] == '=' || s[0] == '|'))
      s = s.substr(1);
    return s;
  };
  if (d.empty()) {
    error = "'" + path + "' has no 'descr' in its header";
    return false;
  }
  if (norm(d) != norm(want)) {
    error = "'" + path + "' holds " + d + " but the program expects '" + want + "'";
    return false;
  }
  if (field(header, "fortran_order") != "False") {
    error = "'" + path + "' is in Fortran order; C order is expected";
    return false;
  }
  dataOffset = 8 + (magic[6] == 1 ? 2 : 4) + headerLen;
  std::string s = field(header, "shape");
  got.clear();
  for (size_t i = 0; i < s.size();) {
    if (isdigit(static_cast<unsigned char>(s[i]))) {
      // Checked: a 20-digit dimension is an error, not an exception.
      int64_t v = 0;
      size_t j = i;
      for (; j < s.size() && isdigit(static_cast<unsigned char>(s[j])); ++j)
        if (__builtin_mul_overflow(v, int64_t(10), &v) ||
            __builtin_add_overflow(v, int64_t(s[j] - '0'), &v)) {
          error = "'" + path + "' has a dimension too large in its shape " + s;
          return false;
        }
      got.push_back(v);
      i = j;
    } else {
      ++i;
    }
  }
  return true;
}

bool read(const std::string &path, int dtype, const std::vector<int64_t> &shape,
          void *data, std::string &error) {
  std::vector<int64_t> got;
  size_t offset = 0;
  if (!readHeader(path, dtype, got, offset, error))
    return false;
  if (got != shape) {
    error = "'" + path + "' has shape " + shapeText(got) +
            " but the program expects " + shapeText(shape);
    return false;
  }
  size_t bytes = elementBytes(dtype);
  for (int64_t dim : shape)
    bytes *= dim;
  std::ifstream in(path, std::ios::binary);
  in.seekg(offset);
  if (!in || !in.read(static_cast<char *>(data), bytes)) {
    error = "'" + path + "' is truncated";
    return false;
  }
  return true;
}

bool write(const std::string &path, int dtype,
           const std::vector<int64_t> &shape, const void *data,
           std::string &error) {
  std::string header = std::string("{'descr': '") + descr(dtype) +
                       "', 'fortran_order': False, 'shape': " +
                       shapeText(shape) + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string tmp = path + ".tmp";
  FILE *f = fopen(tmp.c_str(), "wb");
  if (!f) {
    error = "cannot write '" + tmp + "': " + strerror(errno);
    return false;
  }
  unsigned char prefix[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                              static_cast<unsigned char>(header.size() & 0xff),
                              static_cast<unsigned char>(header.size() >> 8)};
  size_t bytes = elementBytes(dtype);
  for (int64_t dim : shape)
    bytes *= dim;
  bool ok = fwrite(prefix, 1, 10, f) == 10 &&
            fwrite(header.data(), 1, header.size(), f) == header.size() &&
            (bytes == 0 || fwrite(data, 1, bytes, f) == bytes);
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
    error = "cannot write '" + path + "': " + strerror(errno);
    remove(tmp.c_str());
    return false;
  }
  return true;
}

static float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f,
           mant = h & 0x3ff, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal: normalize
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000 | (mant << 13);
  } else {
    bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

static uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = int32_t((x >> 23) & 0xff) - 127 + 15;
  uint32_t mant = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff) // inf / nan
    return sign | 0x7c00 | (mant ? 0x200 : 0);
  if (exp >= 31)
    return sign | 0x7c00;
  if (exp <= 0) {
    if (exp < -10)
      return sign;
    mant |= 0x800000;
    uint32_t shift = 14 - exp;
    uint32_t h = mant >> shift, rem = mant & ((1u << shift) - 1),
             half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1)))
      ++h;
    return sign | h;
  }
  uint32_t h = sign | (exp << 10) | (mant >> 13), rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
    ++h; // round to nearest even (may carry into the exponent: correct)
  return h;
}

static float bf16ToFloat(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

static uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000)
    return (x >> 16) | 0x40; // quiet NaN
  x += 0x7fff + ((x >> 16) & 1); // round to nearest even
  return x >> 16;
}

double loadElement(int dtype, const void *data, int64_t i) {
  switch (dtype) {
  case RANKC_BOOL: return static_cast<const uint8_t *>(data)[i] != 0;
  case RANKC_I8: return static_cast<const int8_t *>(data)[i];
  case RANKC_I32: return static_cast<const int32_t *>(data)[i];
  case RANKC_I64: return double(static_cast<const int64_t *>(data)[i]);
  case RANKC_F16: return halfToFloat(static_cast<const uint16_t *>(data)[i]);
  case RANKC_BF16: return bf16ToFloat(static_cast<const uint16_t *>(data)[i]);
  case RANKC_F32: return static_cast<const float *>(data)[i];
  case RANKC_U8: return static_cast<const uint8_t *>(data)[i];
  case RANKC_U16: return static_cast<const uint16_t *>(data)[i];
  case RANKC_U32: return static_cast<const uint32_t *>(data)[i];
  default: return static_cast<const double *>(data)[i];
  }
}

void storeElement(int dtype, void *data, int64_t i, double f, int64_t k,
                  bool b) {
  switch (dtype) {
  case RANKC_BOOL: static_cast<uint8_t *>(data)[i] = b; break;
  case RANKC_I8: static_cast<int8_t *>(data)[i] = int8_t(k); break;
  case RANKC_I32: static_cast<int32_t *>(data)[i] = int32_t(k); break;
  case RANKC_I64: static_cast<int64_t *>(data)[i] = k; break;
  case RANKC_F16: static_cast<uint16_t *>(data)[i] = floatToHalf(float(f)); break;
  case RANKC_BF16: static_cast<uint16_t *>(data)[i] = floatToBf16(float(f)); break;
  case RANKC_F32: static_cast<float *>(data)[i] = float(f); break;
  case RANKC_U8: static_cast<uint8_t *>(data)[i] = uint8_t(k); break;
  case RANKC_U16: static_cast<uint16_t *>(data)[i] = uint16_t(k); break;
  case RANKC_U32: static_cast<uint32_t *>(data)[i] = uint32_t(k); break;
  default: static_cast<double *>(data)[i] = f; break;
  }
}

} // namespace npy
