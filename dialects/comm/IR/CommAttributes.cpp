//===- CommAttributes.cpp - comm enums, attributes and types --------------===//

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

#define GET_TYPEDEF_CLASSES
#include "rankc/Dialect/Comm/CommTypes.cpp.inc"

void CommDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "rankc/Dialect/Comm/CommTypes.cpp.inc"
      >();
}

void CommDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "rankc/Dialect/Comm/CommAttrs.cpp.inc"
      >();
}

LogicalResult
BucketAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t index,
                   ArrayAttr params, int64_t bytes, StringAttr dtype) {
  if (index < 0 || bytes < 0)
    return emitError() << "a bucket's index and bytes are >= 0";
  if (!llvm::all_of(params, [](Attribute p) { return isa<StringAttr>(p); }))
    return emitError() << "a bucket's params are parameter ids (strings)";
  return success();
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
