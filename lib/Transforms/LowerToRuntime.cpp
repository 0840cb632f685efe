//===- LowerToRuntime.cpp - one program's messages to the runtime ABI -----===//
//
// Tensor-level, before bufferization: receive buffers are allocated as
// memrefs and handed to bufferization with `to_tensor restrict`; values
// that leave are copied into fresh buffers (`alloc_tensor copy`) so that
// MPI reads memory that nothing writes until the request completes.
//
//===----------------------------------------------------------------------===//

#include "rankc/Dialect/Comm/Comm.h"
#include "rankc/Frontend/DagDiagnostics.h"
#include "rankc/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace rankc {
#define GEN_PASS_DEF_COMMLOWERTORUNTIME
#include "rankc/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;
using namespace rankc;

namespace {

/// The runtime's dtype code (rankc_runtime.h) of an element type.
int dtypeCode(Type t) {
  if (t.isInteger(1)) return 0;
  if (t.isInteger(8)) return 1;
  if (t.isInteger(32)) return 2;
  if (t.isInteger(64)) return 3;
  if (t.isF16()) return 4;
  if (t.isBF16()) return 5;
  if (t.isF32()) return 6;
  return 7;
}

int64_t byteSize(RankedTensorType t) {
  unsigned bits = t.getElementType().getIntOrFloatBitWidth();
  return t.getNumElements() * (bits == 1 ? 1 : bits / 8);
}

class Lowering {
public:
  Lowering(ModuleOp module, bool blockingSends)
      : module(module), b(module.getContext()), blockingSends(blockingSends) {}
  LogicalResult run();

private:
  func::FuncOp declare(StringRef name, TypeRange args, TypeRange results);
  Value i32(int64_t v, Location loc) {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  }
  Value i64(int64_t v, Location loc) {
    return arith::ConstantIntOp::create(b, loc, v, 64);
  }
  /// The address of a memref, as the runtime takes it.
  Value address(Value memref, Location loc) {
    return memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  }
  /// A fresh buffer holding `tensor`'s value, for reading by MPI or I/O.
  Value bufferOf(Value tensor, Location loc);
  Value call(func::FuncOp fn, ValueRange args, Location loc) {
    auto c = func::CallOp::create(b, loc, fn, args);
    return c.getNumResults() ? c.getResult(0) : Value();
  }
  void lowerProgram(func::FuncOp program);
  void buildEntry(func::FuncOp program);
  void buildManifest(func::FuncOp program);

  ModuleOp module;
  OpBuilder b;
  bool blockingSends;
  func::FuncOp rtInput, rtOutput, rtIsend, rtIrecv, rtIallreduce, rtWait,
      rtPartBegin, rtPartEnd;
  std::string events; // manifest lines
};

func::FuncOp Lowering::declare(StringRef name, TypeRange args,
                               TypeRange results) {
  if (auto fn = module.lookupSymbol<func::FuncOp>(name))
    return fn;
  b.setInsertionPointToEnd(module.getBody());
  auto fn = func::FuncOp::create(b, module.getLoc(), name,
                                 b.getFunctionType(args, results));
  fn.setPrivate();
  return fn;
}

Value Lowering::bufferOf(Value tensor, Location loc) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Value copy = bufferization::AllocTensorOp::create(b, loc, type, ValueRange(),
                                                    tensor);
  auto buffer = bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), copy,
      /*readOnly=*/true);
  return buffer;
}

void Lowering::lowerProgram(func::FuncOp program) {
  Block &body = program.getBody().front();
  Operation *terminator = body.getTerminator();
  SmallVector<Value> sendRequests;
  Operation *lastCollectiveStart = nullptr;
  int event = 0, part = 0;
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator())) {
    Location loc = op.getLoc();
    auto describe = [&](StringRef kind, Attribute tag) {
      std::string node = dag::dagNodeId(loc);
      events += "event " + std::to_string(event) + " " + kind.str() + " " +
                (node.empty() ? "#" + std::to_string(event) : node) + " " +
                comm::tagToString(tag) + "\n";
    };
    if (auto recv = dyn_cast<comm::RecvOp>(op)) {
      // Posted at the very start; waited for here, where it is needed.
      describe("recv", recv.getTag());
      auto type = recv.getResult().getType();
      b.setInsertionPointToStart(&body);
      Value buffer = memref::AllocOp::create(
          b, loc, MemRefType::get(type.getShape(), type.getElementType()));
      Value request = call(
          rtIrecv,
          {address(buffer, loc), i64(byteSize(type), loc),
           i64(recv.getPeer(), loc), i32(recv.getRelative(), loc),
           i32(recv.getMpiTag().value_or(0), loc), i32(event, loc)},
          loc);
      b.setInsertionPoint(&op);
      call(rtWait, {request}, loc);
      Value value = bufferization::ToTensorOp::create(
          b, loc, type, buffer, /*restrict=*/true, /*writable=*/true);
      recv.getResult().replaceAllUsesWith(value);
      op.erase();
    } else if (auto send = dyn_cast<comm::SendOp>(op)) {
      // Starts here, where partitioning put it: right after its value.
      describe("send", send.getTag());
      b.setInsertionPoint(&op);
      auto type = send.getValue().getType();
      Value buffer = bufferOf(send.getValue(), loc);
      Value request = call(
          rtIsend,
          {address(buffer, loc), i64(byteSize(type), loc),
           i64(send.getPeer(), loc), i32(send.getRelative(), loc),
           i32(send.getMpiTag().value_or(0), loc), i32(event, loc)},
          loc);
      if (blockingSends)
        call(rtWait, {request}, loc);
      else
        sendRequests.push_back(request);
      op.erase();
    } else if (auto all = dyn_cast<comm::AllReduceOp>(op)) {
      // Starts as soon as its input exists, after the previous collective
      // (every rank starts collectives in the same order); waited for here.
      describe("allreduce", all.getTag());
      Operation *def = all.getValue().getDefiningOp();
      Operation *after = def && def->getBlock() == &body ? def : nullptr;
      // A part's result: start after the part's end mark, not inside it.
      if (auto next = after ? dyn_cast_or_null<func::CallOp>(after->getNextNode())
                            : func::CallOp();
          next && next.getCallee() == "rankc_rt_part_end")
        after = next;
      if (lastCollectiveStart &&
          (!after || after->isBeforeInBlock(lastCollectiveStart)))
        after = lastCollectiveStart;
      if (after)
        b.setInsertionPointAfter(after);
      else
        b.setInsertionPointToStart(&body);
      auto type = all.getValue().getType();
      Value in = bufferOf(all.getValue(), loc);
      Value out = memref::AllocOp::create(
          b, loc, MemRefType::get(type.getShape(), type.getElementType()));
      Value request =
          call(rtIallreduce,
               {address(in, loc), address(out, loc),
                i64(type.getNumElements(), loc),
                i32(dtypeCode(type.getElementType()), loc),
                i32(int(all.getReduce()), loc), i32(event, loc)},
               loc);
      lastCollectiveStart = request.getDefiningOp();
      b.setInsertionPoint(&op);
      call(rtWait, {request}, loc);
      Value value = bufferization::ToTensorOp::create(
          b, loc, type, out, /*restrict=*/true, /*writable=*/true);
      all.getResult().replaceAllUsesWith(value);
      op.erase();
    } else if (isa<func::CallOp>(op)) {
      b.setInsertionPoint(&op);
      Value id = i32(part, loc);
      call(rtPartBegin, {id}, loc);
      b.setInsertionPointAfter(&op);
      call(rtPartEnd, {id}, loc); // right after the call: see allreduces

      ++part;
      continue;
    } else {
      continue;
    }
    ++event;
  }
  // Every send completes before the program returns its results.
  b.setInsertionPoint(terminator);
  for (Value request : sendRequests)
    call(rtWait, {request}, terminator->getLoc());
}

/// rankc_entry, one step: each input is read where the runtime keeps it
/// (its own buffer, or the output it carries from the last step), and the
/// runtime is told where each result is. Nothing is copied either way; an
/// input is never written (not `writable`: bufferization copies first if
/// the program would update a value in place).
void Lowering::buildEntry(func::FuncOp program) {
  Location loc = program.getLoc();
  b.setInsertionPointToEnd(module.getBody());
  auto entry = func::FuncOp::create(b, loc, "rankc_entry",
                                    b.getFunctionType({}, {}));
  b.setInsertionPointToStart(entry.addEntryBlock());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  SmallVector<Value> args;
  for (auto [i, type] : llvm::enumerate(program.getArgumentTypes())) {
    auto t = cast<RankedTensorType>(type);
    Value bytes = call(rtInput, {i32(i, loc)}, loc);
    Value buffer = memref::ViewOp::create(
        b, loc, MemRefType::get(t.getShape(), t.getElementType()), bytes,
        zero, ValueRange());
    args.push_back(bufferization::ToTensorOp::create(
        b, loc, t, buffer, /*restrict=*/true, /*writable=*/false));
  }
  auto results = func::CallOp::create(b, loc, program, args);
  for (auto [i, r] : llvm::enumerate(results.getResults())) {
    auto t = cast<RankedTensorType>(r.getType());
    Value buffer = bufferization::ToBufferOp::create(
        b, loc, MemRefType::get(t.getShape(), t.getElementType()), r,
        /*readOnly=*/true);
    call(rtOutput, {i32(i, loc), address(buffer, loc)}, loc);
  }
  func::ReturnOp::create(b, loc);
}

void Lowering::buildManifest(func::FuncOp program) {
  std::string text = "program " + program.getName().str() + "\n";
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
  auto dims = [](RankedTensorType t) {
    std::string s = std::to_string(dtypeCode(t.getElementType())) + " " +
                    std::to_string(t.getRank());
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
  auto carry = [&](unsigned arg, unsigned result) {
    carried += "state " + std::to_string(arg) + " " + std::to_string(result) +
               "\n";
  };
  for (unsigned i = 0; i < program.getNumArguments(); ++i) {
    auto id = program.getArgAttrOfType<StringAttr>(i, comm::CommDialect::kInput);
    if (!id)
      id = program.getArgAttrOfType<StringAttr>(i, comm::CommDialect::kParam);
    auto hidden = program.getArgAttrOfType<StringAttr>(
        i, comm::CommDialect::kOptimizerState);
    text += "input " + std::to_string(i) + " " +
            (hidden ? hidden : id).str() + " " +
            dims(cast<RankedTensorType>(program.getArgumentTypes()[i])) + "\n";
    if (hidden) {
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
  for (unsigned i = 0; i < program.getNumResults(); ++i) {
    text += "output " + std::to_string(i) + " " +
            dims(cast<RankedTensorType>(program.getResultTypes()[i])) + " :";
    if (auto names = program.getResultAttrOfType<ArrayAttr>(
            i, comm::CommDialect::kOutputs))
      for (Attribute n : names)
        text += " " + cast<StringAttr>(n).str();
    text += "\n";
  }
  text += carried;
  text += events;
  // Nodes whose indices are checked at run time (take, scatter_add): the
  // importer's numbering, as rankc_rt_index_error receives it.
  if (auto checks = program->getAttrOfType<ArrayAttr>("rankc.index_checks")) {
    for (auto [i, id] : llvm::enumerate(checks))
      text += "check " + std::to_string(i) + " " +
              cast<StringAttr>(id).str() + "\n";
    program->removeAttr("rankc.index_checks");
  }
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

LogicalResult Lowering::run() {
  SmallVector<func::FuncOp> programs;
  for (auto fn : module.getOps<func::FuncOp>())
    if (fn->hasAttr(comm::CommDialect::kRanks))
      programs.push_back(fn);
  if (programs.size() != 1)
    return module.emitError("comm-lower-to-runtime needs a module with one "
                            "program function, found ")
           << programs.size();
  func::FuncOp program = programs.front();
  Type index = b.getIndexType(), i32Type = b.getI32Type(),
       i64Type = b.getI64Type();
  rtInput = declare("rankc_rt_input", {i32Type},
                    {MemRefType::get({ShapedType::kDynamic}, b.getI8Type())});
  rtInput->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                   UnitAttr::get(b.getContext()));
  rtOutput = declare("rankc_rt_output", {i32Type, index}, {});
  rtIsend = declare("rankc_rt_isend",
                    {index, i64Type, i64Type, i32Type, i32Type, i32Type},
                    {i64Type});
  rtIrecv = declare("rankc_rt_irecv",
                    {index, i64Type, i64Type, i32Type, i32Type, i32Type},
                    {i64Type});
  rtIallreduce =
      declare("rankc_rt_iallreduce",
              {index, index, i64Type, i32Type, i32Type, i32Type}, {i64Type});
  rtWait = declare("rankc_rt_wait", {i64Type}, {});
  // The runtime orders messages after the GPU work queued before them (it
  // waits for the stream before MPI or a staging copy touches a buffer;
  // NCCL and a world of one queue on the stream): no host wait needed.
  for (func::FuncOp fn : {rtIsend, rtIrecv, rtIallreduce, rtWait})
    fn->setAttr(rankc::kStreamOrdered, b.getUnitAttr());
  rtPartBegin = declare("rankc_rt_part_begin", {i32Type}, {});
  rtPartEnd = declare("rankc_rt_part_end", {i32Type}, {});

  lowerProgram(program);
  buildManifest(program);
  buildEntry(program);

  // The manifest now carries what the comm.* attributes said.
  for (auto fn : module.getOps<func::FuncOp>()) {
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      fn.setArgAttrs(i, ArrayRef<NamedAttribute>{});
    for (unsigned i = 0; i < fn.getNumResults(); ++i)
      fn.setResultAttrs(i, ArrayRef<NamedAttribute>{});
    fn->removeAttr(comm::CommDialect::kRanks);
    if (fn->removeAttr(comm::CommDialect::kPartOf))
      fn->setAttr(rankc::kPartFunction, UnitAttr::get(fn.getContext()));
    fn->removeAttr(comm::CommDialect::kState);
  }
  program.setPrivate();
  for (StringRef attr : {comm::CommDialect::kWorldSize,
                         comm::CommDialect::kDataParallel,
                         comm::CommDialect::kPartitioned})
    module->removeAttr(attr);
  return success();
}

struct LowerToRuntimePass
    : public rankc::impl::CommLowerToRuntimeBase<LowerToRuntimePass> {
  using CommLowerToRuntimeBase::CommLowerToRuntimeBase;
  void runOnOperation() override {
    if (failed(Lowering(getOperation(), blockingSends).run()))
      signalPassFailure();
  }
};

} // namespace
