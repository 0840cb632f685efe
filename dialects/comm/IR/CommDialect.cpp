//===- CommDialect.cpp - comm dialect and its discardable attributes ------===//
//
// The comm.* attributes on modules, functions, arguments and results describe
// how a module's functions map onto MPI ranks. They are verified here, so that
// every tool that reads a rankc module (rankc, rankc-opt) rejects the same
// malformed programs with the same messages.
//
//===----------------------------------------------------------------------===//

#include "rankc/Dialect/Comm/Comm.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace rankc::comm;

#include "rankc/Dialect/Comm/CommDialect.cpp.inc"

void CommDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "rankc/Dialect/Comm/CommOps.cpp.inc"
      >();
  registerAttributes();
  registerTypes();
}

bool rankc::comm::isValidNodeId(StringRef id) {
  if (id.empty() || !(llvm::isAlpha(id[0]) || id[0] == '_'))
    return false;
  return llvm::all_of(id.drop_front(), [](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '.' || c == ':' || c == '-';
  });
}

bool rankc::comm::isValidOutputName(StringRef name) {
  // Names become file names: "." and ".." would escape or alias the folder.
  if (name.empty() || name == "." || name == "..")
    return false;
  return llvm::all_of(name, [](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '.' || c == '-';
  });
}

//===----------------------------------------------------------------------===//
// Module and function attributes
//===----------------------------------------------------------------------===//

/// The largest world (dag-format.md's limit, the JSON reader's too).
constexpr int64_t kMaxWorldSize = int64_t(1) << 24;

/// With `comm.world_size` on a module, the programs' ranks partition
/// [0, world_size). Time and memory grow with the ranks the programs list,
/// not with the world: a module of 2^24 ranks that are "all" of one program
/// costs nothing (the fuzzer's seeds took 230 MB and 0.8 s for it).
static LogicalResult verifyRankCover(ModuleOp module, int64_t worldSize) {
  Operation *everyRank = nullptr; // the program on "all" ranks, if any
  llvm::DenseSet<int64_t> owned;
  for (Operation &op : module.getBody()->getOperations()) {
    Attribute ranks = op.getAttr(CommDialect::kRanks);
    if (!ranks)
      continue;
    // A malformed comm.ranks is its function's error, verified after the
    // module's attributes: the cover cannot be judged before it is fixed.
    auto list = dyn_cast<DenseI64ArrayAttr>(ranks);
    auto all = dyn_cast<StringAttr>(ranks);
    if (!list && !(all && all.getValue() == "all"))
      return success();
    if (all) {
      if (everyRank || !owned.empty())
        return op.emitOpError("runs on all ranks, but rank ")
               << (everyRank ? 0 : *llvm::min_element(owned))
               << " also belongs to another program";
      everyRank = &op;
      continue;
    }
    for (int64_t r : list.asArrayRef()) {
      if (r < 0 || r >= worldSize)
        return op.emitOpError("runs on rank ")
               << r << ", outside the world of " << worldSize << " ranks";
      if (everyRank || !owned.insert(r).second)
        return op.emitOpError("runs on rank ")
               << r << ", which already belongs to another program";
    }
  }
  if (everyRank || int64_t(owned.size()) == worldSize)
    return success();
  // Distinct ranks in range, fewer than the world: the least one missing.
  std::vector<int64_t> sorted(owned.begin(), owned.end());
  llvm::sort(sorted);
  int64_t missing = 0;
  while (missing < int64_t(sorted.size()) && sorted[missing] == missing)
    ++missing;
  return module.emitOpError("rank ") << missing << " belongs to no program";
}

/// A function with `comm.ranks` is a program: every argument is an input or a
/// parameter, every result has output names, and ids and names are unique.
static LogicalResult verifyProgram(FunctionOpInterface fn) {
  llvm::StringSet<> ids, names;
  llvm::StringMap<Type> optimizerState; // argument name -> type
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
    auto input = fn.getArgAttrOfType<StringAttr>(i, CommDialect::kInput);
    auto param = fn.getArgAttrOfType<StringAttr>(i, CommDialect::kParam);
    auto hidden = fn.getArgAttrOfType<StringAttr>(i, CommDialect::kOptimizerState);
    auto step = fn.getArgAttrOfType<StringAttr>(i, CommDialect::kStep);
    if (int(bool(input)) + int(bool(param)) + int(bool(hidden)) +
            int(bool(step)) != 1)
      return fn.emitOpError("argument #")
             << i << " must have exactly one of 'comm.input', 'comm.param', "
                     "'comm.optimizer_state' and 'comm.step'";
    if (step) {
      auto t = dyn_cast<RankedTensorType>(fn.getArgumentTypes()[i]);
      if (!t || t.getRank() != 0)
        return fn.emitOpError("argument #")
               << i << ": the step number 'comm.step' is a 0-d tensor";
      if (!ids.insert(step.getValue()).second)
        return fn.emitOpError("two arguments have the id '")
               << step.getValue() << "'";
      continue;
    }
    if (hidden) {
      if (!optimizerState.try_emplace(hidden.getValue(), fn.getArgumentTypes()[i])
               .second)
        return fn.emitOpError("two arguments are the optimizer state '")
               << hidden.getValue() << "'";
      continue;
    }
    StringRef id = input ? input.getValue() : param.getValue();
    if (!ids.insert(id).second)
      return fn.emitOpError("two arguments have the id '") << id << "'";
  }
  llvm::StringSet<> carried;
  for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i) {
    auto outs = fn.getResultAttrOfType<ArrayAttr>(i, CommDialect::kOutputs);
    auto hidden =
        fn.getResultAttrOfType<StringAttr>(i, CommDialect::kOptimizerState);
    if (!outs && !hidden)
      return fn.emitOpError("result #")
             << i << " must have 'comm.outputs' or 'comm.optimizer_state' "
                     "(both: an output carried as state)";
    if (hidden) {
      auto it = optimizerState.find(hidden.getValue());
      if (it == optimizerState.end() || it->second != fn.getResultTypes()[i] ||
          !carried.insert(hidden.getValue()).second)
        return fn.emitOpError("result #")
               << i << ": optimizer state '" << hidden.getValue()
               << "' needs exactly one argument and one result of one type";
      if (!outs)
        continue;
    }
    for (Attribute name : outs)
      if (!names.insert(cast<StringAttr>(name).getValue()).second)
        return fn.emitOpError("output name '")
               << cast<StringAttr>(name).getValue() << "' is used twice";
  }
  if (carried.size() != optimizerState.size())
    return fn.emitOpError("an optimizer state argument has no result of the "
                          "same name");
  return success();
}

/// `comm.state`: each input id names an argument, each output name a result
/// of the same type.
static LogicalResult verifyState(Operation *op, DictionaryAttr state) {
  auto fn = dyn_cast<FunctionOpInterface>(op);
  if (!fn || !op->hasAttr(CommDialect::kRanks))
    return op->emitOpError("'comm.state' is only valid on a program function");
  llvm::StringMap<unsigned> argOfId, resultOfName;
  for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
    for (StringRef kind : {CommDialect::kInput, CommDialect::kParam})
      if (auto a = fn.getArgAttrOfType<StringAttr>(i, kind))
        argOfId[a.getValue()] = i;
  for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i)
    if (auto outs = fn.getResultAttrOfType<ArrayAttr>(i, CommDialect::kOutputs))
      for (Attribute n : outs)
        if (auto s = dyn_cast<StringAttr>(n))
          resultOfName[s.getValue()] = i;
  for (NamedAttribute entry : state) {
    auto output = dyn_cast<StringAttr>(entry.getValue());
    if (!output)
      return op->emitOpError("'comm.state' maps input ids to output names "
                             "(strings)");
    auto argIt = argOfId.find(entry.getName().getValue());
    if (argIt == argOfId.end())
      return op->emitOpError("'comm.state' names '")
             << entry.getName().getValue()
             << "', which is not an input or param of this program";
    auto result = resultOfName.find(output.getValue());
    if (result == resultOfName.end())
      return op->emitOpError("'comm.state' of '")
             << entry.getName().getValue() << "' names output '"
             << output.getValue() << "', which this program does not have";
    unsigned arg = argIt->second;
    if (fn.getArgumentTypes()[arg] != fn.getResultTypes()[result->second])
      return op->emitOpError("'comm.state' of '")
             << entry.getName().getValue() << "' has type "
             << fn.getArgumentTypes()[arg] << " but output '"
             << output.getValue() << "' has type "
             << fn.getResultTypes()[result->second];
  }
  return success();
}

LogicalResult CommDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  Attribute value = attr.getValue();
  if (name == kWorldSize) {
    auto module = dyn_cast<ModuleOp>(op);
    auto size = dyn_cast<IntegerAttr>(value);
    if (!module)
      return op->emitOpError("'comm.world_size' is only valid on a module");
    // The JSON format's limit; checked before anything is sized by it (a
    // world of 2^63 ranks would size a vector of owners).
    if (!size || size.getType().isUnsignedInteger() || size.getInt() < 1 ||
        size.getInt() > kMaxWorldSize)
      return op->emitOpError("'comm.world_size' must be an integer in [1, 2^24]");
    return verifyRankCover(module, size.getInt());
  }
  if (name == kDataParallel) {
    if (!isa<ModuleOp>(op) || !isa<DataParallelAttr>(value))
      return op->emitOpError("'comm.data_parallel' must be a "
                             "#comm.data_parallel<...> on a module");
    return success();
  }
  if (name == kState) {
    auto dict = dyn_cast<DictionaryAttr>(value);
    if (!dict)
      return op->emitOpError("'comm.state' must be a dictionary");
    return verifyState(op, dict);
  }
  if (name == kMachine || name == kBucketChoice) {
    if (!isa<ModuleOp>(op))
      return op->emitOpError("'") << name << "' is only valid on a module";
    if (name == kMachine ? !isa<MachineModelAttr>(attr.getValue())
                         : !isa<DictionaryAttr>(attr.getValue()))
      return op->emitOpError("'") << name << "' must be a "
             << (name == kMachine ? "#comm.machine" : "dictionary");
    return success();
  }
  if (name == kPartitioned) {
    if (!isa<ModuleOp>(op) || !isa<UnitAttr>(value))
      return op->emitOpError("'comm.partitioned' must be a unit attribute on "
                             "a module");
    return success();
  }
  if (name == kPartOf) {
    if (!isa<FunctionOpInterface>(op) || !isa<StringAttr>(value))
      return op->emitOpError("'comm.part_of' must name a program function, "
                             "on a function");
    return success();
  }
  if (name == kMicroStepOf) {
    if (!isa<FunctionOpInterface>(op) || !isa<StringAttr>(value))
      return op->emitOpError("'comm.micro_step_of' must name a program "
                             "function, on a function");
    return success();
  }
  if (name == kBucket) {
    if (!isa<AllReduceOp, IAllReduceOp>(op) || !isa<BucketAttr>(value))
      return op->emitOpError("'comm.bucket' must be a #comm.bucket<index, "
                             "params, bytes, dtype> on a comm.allreduce or "
                             "comm.iallreduce");
    return success();
  }
  if (name == kRanks) {
    auto fn = dyn_cast<FunctionOpInterface>(op);
    if (!fn)
      return op->emitOpError("'comm.ranks' is only valid on a function");
    if (auto all = dyn_cast<StringAttr>(value)) {
      if (all.getValue() != "all")
        return op->emitOpError(
            "'comm.ranks' must be an array<i64> of ranks or \"all\"");
    } else if (auto ranks = dyn_cast<DenseI64ArrayAttr>(value)) {
      if (ranks.empty())
        return op->emitOpError("'comm.ranks' must not be empty");
      llvm::DenseSet<int64_t> seen;
      for (int64_t r : ranks.asArrayRef())
        if (r < 0 || !seen.insert(r).second)
          return op->emitOpError("'comm.ranks' must list distinct ranks >= 0");
    } else {
      return op->emitOpError(
          "'comm.ranks' must be an array<i64> of ranks or \"all\"");
    }
    return verifyProgram(fn);
  }
  return op->emitOpError("unknown or misplaced attribute '") << name << "'";
}

//===----------------------------------------------------------------------===//
// Argument and result attributes
//===----------------------------------------------------------------------===//

/// `comm.unsigned`: a unit attribute on a tensor of 8, 16 or 32-bit integers.
static LogicalResult verifyUnsigned(Operation *op, StringRef what,
                                    unsigned index, Attribute value,
                                    ArrayRef<Type> types) {
  auto t = index < types.size() ? dyn_cast<RankedTensorType>(types[index])
                                : RankedTensorType();
  unsigned bits = t && t.getElementType().isSignlessInteger()
                      ? t.getElementType().getIntOrFloatBitWidth()
                      : 0;
  if (!isa<UnitAttr>(value) || (bits != 8 && bits != 16 && bits != 32))
    return op->emitOpError() << what << " #" << index
                             << ": 'comm.unsigned' is a unit attribute on a "
                                "tensor of i8, i16 or i32 (u8, u16, u32)";
  return success();
}

LogicalResult CommDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kOptimizerState) {
    auto s = dyn_cast<StringAttr>(attr.getValue());
    if (!s || s.getValue().empty())
      return op->emitOpError("argument #")
             << argIndex << ": 'comm.optimizer_state' must be a name";
    return success();
  }
  if (name == kUnsigned) {
    auto fn = dyn_cast<FunctionOpInterface>(op);
    if (!fn)
      return op->emitOpError("'comm.unsigned' is only valid on a function");
    return verifyUnsigned(op, "argument", argIndex, attr.getValue(),
                          fn.getArgumentTypes());
  }
  if (name != kInput && name != kParam && name != kStep)
    return op->emitOpError("'")
           << name << "' is not valid on a function argument";
  auto id = dyn_cast<StringAttr>(attr.getValue());
  if (!id || !isValidNodeId(id.getValue()))
    return op->emitOpError("argument #")
           << argIndex << ": '" << name << "' must be a valid node id";
  return success();
}

LogicalResult CommDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto fn = dyn_cast<FunctionOpInterface>(op);
  if (!fn)
    return op->emitOpError("'") << name << "' is only valid on a function";
  if (name == kOutputs) {
    auto names = dyn_cast<ArrayAttr>(attr.getValue());
    if (!names || names.empty())
      return op->emitOpError("result #")
             << resultIndex << ": 'comm.outputs' must be a non-empty array";
    for (Attribute n : names) {
      auto s = dyn_cast<StringAttr>(n);
      if (!s || !isValidOutputName(s.getValue()))
        return op->emitOpError("result #")
               << resultIndex << ": invalid output name " << n;
    }
    return success();
  }
  if (name == kUnsigned)
    return verifyUnsigned(op, "result", resultIndex, attr.getValue(),
                          fn.getResultTypes());
  if (name == kOptimizerState) {
    auto s = dyn_cast<StringAttr>(attr.getValue());
    if (!s || s.getValue().empty())
      return op->emitOpError("result #")
             << resultIndex << ": 'comm.optimizer_state' must be a name";
    return success();
  }
  if (name == kGradOf || name == kUpdateOf) {
    auto param = dyn_cast<StringAttr>(attr.getValue());
    if (!param)
      return op->emitOpError("result #")
             << resultIndex << ": '" << name << "' must be a string";
    for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i) {
      auto id = fn.getArgAttrOfType<StringAttr>(i, kParam);
      if (id && id == param) {
        if (fn.getArgumentTypes()[i] != fn.getResultTypes()[resultIndex])
          return op->emitOpError("result #")
                 << resultIndex << ": " << (name == kGradOf ? "gradient" : "updated parameter") << " type "
                 << fn.getResultTypes()[resultIndex]
                 << " differs from parameter '" << param.getValue()
                 << "' of type " << fn.getArgumentTypes()[i];
        return success();
      }
    }
    return op->emitOpError("result #")
           << resultIndex << ": '" << name << "' names '" << param.getValue()
           << "', which is not a parameter of this program";
  }
  return op->emitOpError("'") << name << "' is not valid on a function result";
}
