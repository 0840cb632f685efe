//===- CommAttributes.cpp - comm enums, attributes and types --------------===//

#include "rankc/Dialect/Comm/Comm.h"
#include "rankc/Support/ProcessGrid.h"

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
                   ArrayAttr params, int64_t bytes, StringAttr dtype,
                   FloatAttr, FloatAttr, FloatAttr, FloatAttr) {
  if (index < 0 || bytes < 0)
    return emitError() << "a bucket's index and bytes are >= 0";
  if (!llvm::all_of(params, [](Attribute p) { return isa<StringAttr>(p); }))
    return emitError() << "a bucket's params are parameter ids (strings)";
  return success();
}

LogicalResult GridAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ArrayRef<int64_t> shape, ArrayRef<int64_t> shift,
                               DenseBoolArrayAttr periodic) {
  if (shape.empty() || shift.size() != shape.size() ||
      size_t(periodic.size()) != shape.size())
    return emitError() << "a grid needs one shift and one periodic flag per "
                          "axis of a non-empty shape";
  if (llvm::any_of(shape, [](int64_t p) { return p < 1; }))
    return emitError() << "a grid's extents are >= 1";
  return success();
}

int64_t GridAttr::resolve(int64_t rank) const {
  return gridPeer(getShape(), getShift(),
                  [&](size_t i) { return getPeriodic()[i]; }, rank);
}

bool GridAttr::leavesGrid() const {
  for (size_t i = 0; i < getShape().size(); ++i)
    if (getShift()[i] != 0 && !getPeriodic()[i])
      return true;
  return false;
}

LogicalResult LrPhaseAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, StringAttr kind,
    IntegerAttr steps, FloatAttr factor, FloatAttr startFactor,
    FloatAttr endFactor, FloatAttr minFactor, IntegerAttr stepSize,
    FloatAttr gamma) {
  StringRef k = kind.getValue();
  bool ok = k == "constant"       ? bool(factor)
            : k == "linear"      ? startFactor && endFactor && steps
            : k == "cosine"      ? minFactor && steps
            : k == "step"        ? stepSize && gamma
            : k == "exponential" ? bool(gamma)
                                 : false;
  if (!ok)
    return emitError() << "'comm.lr_phase' of kind \"" << k
                       << "\" lacks a setting or is of no known kind "
                          "(constant: factor; linear: steps, start_factor, "
                          "end_factor; cosine: steps, min_factor; step: "
                          "step_size, gamma; exponential: gamma)";
  if ((steps && steps.getInt() < 1) || (stepSize && stepSize.getInt() < 1))
    return emitError() << "'comm.lr_phase' steps and step_size must be >= 1";
  return success();
}

LogicalResult OptimizerAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, OptimizerKind kind,
    FloatAttr lr, FloatAttr weightDecay, FloatAttr momentum,
    FloatAttr dampening, BoolAttr nesterov, ArrayAttr betas, FloatAttr eps,
    StringAttr lrInput, ArrayAttr lrSchedule, FloatAttr clipMaxNorm,
    StringAttr clipNormType, StringAttr clipOutput) {
  if (bool(lr) == bool(lrInput))
    return emitError() << "'comm.data_parallel' optimizer needs 'lr' or "
                          "'lr_input', not both";
  if (lr && !(lr.getValueAsDouble() > 0))
    return emitError() << "'comm.data_parallel' optimizer lr must be > 0";
  if (lrSchedule && (lrInput || lrSchedule.empty()))
    return emitError() << "'comm.data_parallel' optimizer lr_schedule must "
                          "be a non-empty list, with 'lr' (not 'lr_input')";
  if (lrSchedule)
    for (auto [i, a] : llvm::enumerate(lrSchedule)) {
      auto phase = dyn_cast<LrPhaseAttr>(a);
      if (!phase)
        return emitError() << "'comm.data_parallel' optimizer lr_schedule "
                              "holds #comm.lr_phase attributes only";
      if (!phase.getSteps() && i + 1 != lrSchedule.size())
        return emitError() << "'comm.data_parallel' optimizer lr_schedule: "
                              "every phase but the last needs 'steps'";
    }
  if (bool(clipMaxNorm) != bool(clipNormType) ||
      (clipOutput && !clipMaxNorm) ||
      (clipMaxNorm && !(clipMaxNorm.getValueAsDouble() > 0)) ||
      (clipNormType && clipNormType.getValue() != "2" &&
       clipNormType.getValue() != "inf"))
    return emitError() << "'comm.data_parallel' optimizer clipping needs "
                          "'clip_max_norm' > 0 and 'clip_norm_type' \"2\" or "
                          "\"inf\" ('clip_output' only with them)";
  bool sgd = kind == OptimizerKind::sgd;
  if (sgd && (!momentum || !dampening || !nesterov))
    return emitError() << "'comm.data_parallel' optimizer sgd needs "
                          "'momentum', 'dampening' and 'nesterov'";
  if (!sgd && (!eps || !betas || betas.size() != 2 ||
               !llvm::all_of(betas, [](Attribute b) { return isa<FloatAttr>(b); })))
    return emitError() << "'comm.data_parallel' optimizer "
                       << stringifyOptimizerKind(kind)
                       << " needs 'betas' (two floats) and 'eps'";
  if (sgd ? bool(eps || betas) : bool(momentum || dampening || nesterov))
    return emitError() << "'comm.data_parallel' optimizer has settings of "
                          "another kind than "
                       << stringifyOptimizerKind(kind);
  return success();
}

LogicalResult DataParallelAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, FloatAttr bucketCapMb,
    FloatAttr firstBucketCapMb, ArrayAttr ignore, StringAttr order,
    OptimizerAttr optimizer, IntegerAttr accumulate) {
  if (accumulate && accumulate.getInt() < 1)
    return emitError() << "'comm.data_parallel' accumulate must be >= 1";
  for (auto [key, cap] : {std::pair{"bucket_cap_mb", bucketCapMb},
                          std::pair{"first_bucket_cap_mb", firstBucketCapMb}})
    if (cap && !(cap.getValueAsDouble() > 0))
      return emitError() << "'comm.data_parallel' " << key
                         << " must be a positive float";
  if (order && order.getValue() != "ready" && order.getValue() != "ddp-initial")
    return emitError() << "'comm.data_parallel' order must be \"ready\" or "
                          "\"ddp-initial\"";
  if (ignore &&
      !llvm::all_of(ignore, [](Attribute x) { return isa<StringAttr>(x); }))
    return emitError()
           << "'comm.data_parallel' ignore must be an array of strings";
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
  if (type.isInteger(16)) // the only 16-bit integer of the DAG format
    return "u16";
  if (type.isBF16())
    return "bf16";
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  return s;
}
