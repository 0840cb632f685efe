//===- CommAttributes.cpp - comm enums and attributes ---------------------===//

#include "rankc/Dialect/Comm/Comm.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace rankc::comm;

#include "rankc/Dialect/Comm/CommEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "rankc/Dialect/Comm/CommAttrs.cpp.inc"

void CommDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "rankc/Dialect/Comm/CommAttrs.cpp.inc"
      >();
}

bool rankc::comm::isValidTag(Attribute tag) {
  if (auto i = dyn_cast<IntegerAttr>(tag))
    return i.getInt() >= 0 && i.getInt() < (int64_t(1) << 31);
  if (auto s = dyn_cast<StringAttr>(tag))
    return !s.getValue().empty();
  return false;
}

std::string rankc::comm::tagToString(Attribute tag) {
  if (auto i = dyn_cast<IntegerAttr>(tag))
    return std::to_string(i.getInt());
  std::string out;
  llvm::raw_string_ostream os(out);
  os << '"';
  llvm::printEscapedString(cast<StringAttr>(tag).getValue(), os);
  os << '"';
  return out;
}

std::string rankc::comm::dtypeName(Type type) {
  if (type.isInteger(1))
    return "bool";
  if (type.isBF16())
    return "bf16";
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  return s;
}
