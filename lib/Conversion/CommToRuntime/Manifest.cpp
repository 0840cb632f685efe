//===- Manifest.cpp - what the runtime must know of one program -----------===//
//
// rankc_manifest, a constant the runtime reads at start-up: which ranks run
// the program, its inputs and outputs (types, names, what is carried from
// step to step), its messages by event (for traces and errors) and its
// index checks. Written from the comm.* attributes and the asynchronous
// schedule, before convert-comm-to-runtime drops them.
//
//===----------------------------------------------------------------------===//

#include "RuntimeABI.h"
#include "rankc/Conversion/Passes.h"
#include "rankc/Dialect/Comm/Comm.h"
#include "rankc/Support/DagLocations.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"

#include <map>

namespace rankc {
#define GEN_PASS_DEF_RANKCRUNTIMEMANIFEST
#include "rankc/Conversion/Passes.h.inc"
} // namespace rankc

using namespace mlir;
using namespace rankc;

namespace {

/// "grid E D P... S... PERIODIC..." for a message to or from a grid peer.
std::string gridLine(int32_t event, comm::GridAttr grid) {
  if (!grid)
    return "";
  std::string line = "grid " + std::to_string(event) + " " +
                     std::to_string(grid.getShape().size());
  for (int64_t p : grid.getShape())
    line += " " + std::to_string(p);
  for (int64_t s : grid.getShift())
    line += " " + std::to_string(s);
  for (bool periodic : grid.getPeriodic().asArrayRef())
    line += periodic ? " 1" : " 0";
  return line + "\n";
}

/// "fill E DTYPE VALUE": what a receive from no grid peer gives.
std::string fillLine(int32_t event, TypedAttr fill) {
  if (!fill)
    return "";
  std::string value;
  if (auto i = dyn_cast<IntegerAttr>(fill)) {
    // The bits as the dtype reads them: u8 0xff is 255, i8 0xff is -1.
    // (i16 is u16 alone; a u8 or u32 fill reads the same either way.)
    llvm::APInt v = i.getValue();
    value = v.getBitWidth() == 1 || v.getBitWidth() == 16
                ? std::to_string(v.getZExtValue())
                : std::to_string(v.getSExtValue());
  } else {
    llvm::raw_string_ostream os(value);
    os << llvm::format("%.17g", cast<FloatAttr>(fill).getValueAsDouble());
  }
  return "fill " + std::to_string(event) + " " +
         std::to_string(runtimeDTypeCode(fill.getType())) + " " + value + "\n";
}

/// "bucket E INDEX [READY START REDUCE EXPOSED]": the DDP bucket an
/// allreduce reduces, and what the machine model predicted for it (seconds
/// into the step), which `launch --stats` and `--trace` set beside the
/// measured times.
std::string bucketLine(int32_t event, comm::BucketAttr bucket) {
  if (!bucket)
    return "";
  std::string line = "bucket " + std::to_string(event) + " " +
                     std::to_string(bucket.getIndex());
  if (bucket.getReduceSeconds() && bucket.getExposedSeconds()) {
    llvm::raw_string_ostream os(line);
    for (FloatAttr f : {bucket.getReadySeconds(), bucket.getStartSeconds(),
                        bucket.getReduceSeconds(), bucket.getExposedSeconds()})
      os << llvm::format(" %.9g", f.getValueAsDouble());
  }
  return line + "\n";
}

/// "event E KIND NODE TAG" for every start of the schedule, by event (with
/// its grid peer and fill, if any).
std::string eventLines(func::FuncOp program) {
  std::map<int32_t, std::string> lines;
  auto describe = [&](Operation *op, int32_t event, StringRef kind,
                      Attribute tag, std::string extra = "") {
    std::string node = dag::dagNodeId(op->getLoc());
    lines[event] = "event " + std::to_string(event) + " " + kind.str() + " " +
                   (node.empty() ? "#" + std::to_string(event) : node) + " " +
                   comm::tagToString(tag) + "\n" + extra;
  };
  program.walk([&](Operation *op) {
    if (auto s = dyn_cast<comm::ISendOp>(op))
      describe(op, s.getEvent(), "send", s.getTag(),
               gridLine(s.getEvent(), s.getGridAttr()));
    else if (auto r = dyn_cast<comm::IRecvOp>(op))
      describe(op, r.getEvent(), "recv", r.getTag(),
               gridLine(r.getEvent(), r.getGridAttr()) +
                   fillLine(r.getEvent(), r.getFillAttr()));
    else if (auto a = dyn_cast<comm::IAllReduceOp>(op))
      describe(op, a.getEvent(), "allreduce", a.getTag(),
               bucketLine(a.getEvent(), a->getAttrOfType<comm::BucketAttr>(
                                            comm::CommDialect::kBucket)));
  });
  std::string text;
  for (auto &[event, line] : lines)
    text += line;
  return text;
}

/// The manifest's text: the program, its world and ranks, its inputs and
/// outputs with their types and names, what is carried between steps, its
/// messages (by event) and its index checks.
std::string manifestText(ModuleOp module, func::FuncOp program,
                         const std::string &events) {
  std::string text = "program " + program.getName().str() + "\n";
  if (auto fp = module->getAttrOfType<StringAttr>("rankc.fingerprint"))
    text += "fingerprint " + fp.str() + "\n";
  auto ws = module->getAttrOfType<IntegerAttr>(comm::CommDialect::kWorldSize);
  text += "world_size " + std::to_string(ws ? ws.getInt() : 1) + "\n";
  // Which ranks run it: an embedder's init checks its own rank against it.
  text += "ranks";
  if (auto list = program->getAttrOfType<DenseI64ArrayAttr>(
          comm::CommDialect::kRanks))
    for (int64_t r : list.asArrayRef())
      text += " " + std::to_string(r);
  else
    text += " all";
  text += "\n";
  auto dims = [](RankedTensorType t, bool isUnsigned) {
    std::string s =
        std::to_string(runtimeDTypeCode(t.getElementType(), isUnsigned)) +
        " " + std::to_string(t.getRank());
    for (int64_t d : t.getShape())
      s += " " + std::to_string(d);
    return s;
  };
  // Carried values: `comm.state` (input id -> output name), updated
  // parameters (`comm.update_of`) and optimizer state (same name in and out).
  llvm::StringMap<unsigned> argOfId, resultOfName, hiddenResult, updateOf;
  for (unsigned i = 0; i < program.getNumResults(); ++i) {
    if (auto names = program.getResultAttrOfType<ArrayAttr>(
            i, comm::CommDialect::kOutputs))
      for (Attribute n : names)
        resultOfName[cast<StringAttr>(n).getValue()] = i;
    if (auto h = program.getResultAttrOfType<StringAttr>(
            i, comm::CommDialect::kOptimizerState))
      hiddenResult[h.getValue()] = i;
    if (auto p = program.getResultAttrOfType<StringAttr>(
            i, comm::CommDialect::kUpdateOf))
      updateOf[p.getValue()] = i;
  }
  std::string carried;
  // For rankc-donate-carried: the result may be written over its input.
  // (Set for all results at once below: one setResultAttr per carried
  // value rebuilt every result's attributes each time, quadratic in a step
  // of thousands of parameters.)
  DenseMap<unsigned, unsigned> carriedFrom;
  auto carry = [&](unsigned arg, unsigned result) {
    carried += "state " + std::to_string(arg) + " " + std::to_string(result) +
               "\n";
    carriedFrom[result] = arg;
  };
  for (unsigned i = 0; i < program.getNumArguments(); ++i) {
    auto id = program.getArgAttrOfType<StringAttr>(i, comm::CommDialect::kInput);
    if (!id)
      id = program.getArgAttrOfType<StringAttr>(i, comm::CommDialect::kParam);
    auto hidden = program.getArgAttrOfType<StringAttr>(
        i, comm::CommDialect::kOptimizerState);
    auto step = program.getArgAttrOfType<StringAttr>(i, comm::CommDialect::kStep);
    if (step)
      id = step;
    bool isUnsigned = bool(program.getArgAttr(i, comm::CommDialect::kUnsigned));
    text += "input " + std::to_string(i) + " " +
            (hidden ? hidden : id).str() + " " +
            dims(cast<RankedTensorType>(program.getArgumentTypes()[i]),
                 isUnsigned) +
            "\n";
    if (step) {
      text += "step " + std::to_string(i) + "\n";
    } else if (hidden) {
      text += "zero " + std::to_string(i) + "\n";
      carry(i, hiddenResult.lookup(hidden.getValue()));
    } else if (auto it = updateOf.find(id.getValue()); it != updateOf.end()) {
      carry(i, it->second);
    }
    argOfId[id ? id.getValue() : hidden.getValue()] = i;
  }
  if (auto state = program->getAttrOfType<DictionaryAttr>(
          comm::CommDialect::kState))
    for (NamedAttribute s : state)
      carry(argOfId.lookup(s.getName().getValue()),
            resultOfName.lookup(cast<StringAttr>(s.getValue()).getValue()));
  if (!carriedFrom.empty()) {
    Builder b(program.getContext());
    SmallVector<DictionaryAttr> resultAttrs;
    for (unsigned i = 0; i < program.getNumResults(); ++i) {
      NamedAttrList attrs(program.getResultAttrDict(i));
      if (auto it = carriedFrom.find(i); it != carriedFrom.end())
        attrs.set(rankc::kCarriedFrom, b.getI64IntegerAttr(it->second));
      resultAttrs.push_back(attrs.getDictionary(program.getContext()));
    }
    program.setAllResultAttrs(resultAttrs);
  }
  for (unsigned i = 0; i < program.getNumResults(); ++i) {
    text += "output " + std::to_string(i) + " " +
            dims(cast<RankedTensorType>(program.getResultTypes()[i]),
                 bool(program.getResultAttr(i, comm::CommDialect::kUnsigned))) +
            " :";
    if (auto names = program.getResultAttrOfType<ArrayAttr>(
            i, comm::CommDialect::kOutputs))
      for (Attribute n : names)
        text += " " + cast<StringAttr>(n).str();
    text += "\n";
  }
  text += carried;
  if (auto dp = module->getAttrOfType<comm::DataParallelAttr>(
          comm::CommDialect::kDataParallel);
      dp && dp.getAccumulateOr1() > 1)
    text += "accumulate " + std::to_string(dp.getAccumulateOr1()) + "\n";
  text += events;
  // Nodes whose indices are checked at run time (take, scatter_add): the
  // importer's numbering, as rankc_rt_index_error receives it.
  if (auto checks = program->getAttrOfType<ArrayAttr>("rankc.index_checks")) {
    for (auto [i, id] : llvm::enumerate(checks))
      text += "check " + std::to_string(i) + " " +
              cast<StringAttr>(id).str() + "\n";
  }
  return text;
}

struct ManifestPass
    : public rankc::impl::RankcRuntimeManifestBase<ManifestPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp program = onlyProgram(module, getArgument());
    if (!program)
      return signalPassFailure();
    WalkResult blocking = program.walk([&](Operation *op) {
      if (!isa<comm::SendOp, comm::RecvOp, comm::AllReduceOp>(op))
        return WalkResult::advance();
      op->emitOpError("is not scheduled: run comm-async-schedule before "
                      "rankc-runtime-manifest");
      return WalkResult::interrupt();
    });
    if (blocking.wasInterrupted())
      return signalPassFailure();
    std::string text = manifestText(module, program, eventLines(program));
    program->removeAttr("rankc.index_checks");
    OpBuilder b(module.getContext());
    std::vector<int8_t> bytes(text.begin(), text.end());
    bytes.push_back(0);
    auto type = MemRefType::get({int64_t(bytes.size())}, b.getI8Type());
    b.setInsertionPointToEnd(module.getBody());
    memref::GlobalOp::create(
        b, module.getLoc(), "rankc_manifest", b.getStringAttr("public"), type,
        DenseElementsAttr::get(RankedTensorType::get(type.getShape(),
                                                     b.getI8Type()),
                               ArrayRef<int8_t>(bytes)),
        /*constant=*/true, /*alignment=*/nullptr);
  }
};

} // namespace
