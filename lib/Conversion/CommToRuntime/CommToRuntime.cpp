//===- CommToRuntime.cpp - one program's schedule to the runtime's C ABI --===//
//
// One pattern per op of the asynchronous schedule (comm-async-schedule):
// a start becomes a call of rankc_rt_isend / irecv / iallreduce on a buffer,
// a wait a call of rankc_rt_wait. A request becomes the runtime's handle
// and, for one that delivers a value, the buffer the value arrives in (a
// 1:N type conversion), which the wait hands to bufferization with
// `to_tensor restrict`. Values that leave are copied into fresh buffers
// (`alloc_tensor copy`) so that MPI reads memory nothing writes until the
// request completes. Part calls are bracketed for the trace, and
// `rankc_entry` runs one step. Tensor-level, before bufferization.
//
//===----------------------------------------------------------------------===//

#include "RuntimeABI.h"
#include "rankc/Conversion/Passes.h"
#include "rankc/Dialect/Comm/Comm.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/DialectConversion.h"

namespace rankc {
#define GEN_PASS_DEF_CONVERTCOMMTORUNTIME
#include "rankc/Conversion/Passes.h.inc"
} // namespace rankc

using namespace mlir;
using namespace rankc;

namespace {

/// The runtime's entry points, declared once in the module.
struct RuntimeFunctions {
  func::FuncOp input, output, isend, irecv, iallreduce, wait, partBegin,
      partEnd;
};

func::FuncOp declare(ModuleOp module, OpBuilder &b, StringRef name,
                     TypeRange args, TypeRange results) {
  if (auto fn = module.lookupSymbol<func::FuncOp>(name))
    return fn;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(module.getBody());
  auto fn = func::FuncOp::create(b, module.getLoc(), name,
                                 b.getFunctionType(args, results));
  fn.setPrivate();
  return fn;
}

RuntimeFunctions declareRuntime(ModuleOp module) {
  OpBuilder b(module.getContext());
  Type index = b.getIndexType(), i32 = b.getI32Type(), i64 = b.getI64Type();
  RuntimeFunctions rt;
  rt.input = declare(module, b, "rankc_rt_input", {i32},
                     {MemRefType::get({ShapedType::kDynamic}, b.getI8Type())});
  rt.input->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    UnitAttr::get(b.getContext()));
  rt.output = declare(module, b, "rankc_rt_output", {i32, index}, {});
  rt.isend = declare(module, b, "rankc_rt_isend",
                     {index, i64, i64, i32, i32, i32}, {i64});
  rt.irecv = declare(module, b, "rankc_rt_irecv",
                     {index, i64, i64, i32, i32, i32}, {i64});
  rt.iallreduce = declare(module, b, "rankc_rt_iallreduce",
                          {index, index, i64, i32, i32, i32}, {i64});
  rt.wait = declare(module, b, "rankc_rt_wait", {i64}, {});
  // The runtime orders messages after the GPU work queued before them (it
  // waits for the stream before MPI or a staging copy touches a buffer;
  // NCCL and a world of one queue on the stream): no host wait needed.
  for (func::FuncOp fn : {rt.isend, rt.irecv, rt.iallreduce, rt.wait})
    fn->setAttr(rankc::kStreamOrdered, b.getUnitAttr());
  rt.partBegin = declare(module, b, "rankc_rt_part_begin", {i32}, {});
  rt.partEnd = declare(module, b, "rankc_rt_part_end", {i32}, {});
  return rt;
}

Value i32(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}
Value i64(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 64);
}
/// The address of a memref, as the runtime takes it.
Value address(OpBuilder &b, Location loc, Value memref) {
  return memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
}
Value call(OpBuilder &b, Location loc, func::FuncOp fn, ValueRange args) {
  auto c = func::CallOp::create(b, loc, fn, args);
  return c.getNumResults() ? c.getResult(0) : Value();
}
MemRefType bufferType(RankedTensorType type) {
  return MemRefType::get(type.getShape(), type.getElementType());
}
/// A fresh buffer holding `tensor`'s value, for reading by MPI.
Value bufferOf(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Value copy = bufferization::AllocTensorOp::create(b, loc, type, ValueRange(),
                                                    tensor);
  return bufferization::ToBufferOp::create(b, loc, bufferType(type), copy,
                                           /*readOnly=*/true);
}

/// rankc_rt_isend's and _irecv's arguments: the buffer, its size, the peer
/// (absolute, an offset when `relative` is 1, or the event's grid peer in
/// the manifest when it is 2: RANKC_PEER_*), the MPI tag and the event.
template <typename Op>
SmallVector<Value, 6> messageArgs(OpBuilder &b, Location loc, Op op,
                                  Value buffer, RankedTensorType type) {
  int32_t kind = op.getGrid()       ? RANKC_PEER_GRID
                 : op.getRelative() ? RANKC_PEER_OFFSET
                                    : RANKC_PEER_RANK;
  return {address(b, loc, buffer), i64(b, loc, messageBytes(type)),
          i64(b, loc, op.getPeer()), i32(b, loc, kind),
          i32(b, loc, op.getMpiTag().value_or(0)), i32(b, loc, op.getEvent())};
}

/// A request is the runtime's handle (i64), then for one that delivers a
/// value the buffer it arrives in.
class RequestConverter : public TypeConverter {
public:
  RequestConverter() {
    addConversion([](Type t) { return t; });
    addConversion([](comm::RequestType t, SmallVectorImpl<Type> &out) {
      out.push_back(IntegerType::get(t.getContext(), 64));
      if (auto value = dyn_cast_or_null<RankedTensorType>(t.getValueType()))
        out.push_back(bufferType(value));
      return success();
    });
  }
};

template <typename Op>
struct RuntimePattern : OpConversionPattern<Op> {
  RuntimePattern(const TypeConverter &converter, MLIRContext *ctx,
                 const RuntimeFunctions &rt)
      : OpConversionPattern<Op>(converter, ctx), rt(rt) {}
  const RuntimeFunctions &rt;
};

/// isend: the value copied into a buffer of its own, then rankc_rt_isend.
struct ISendLowering : RuntimePattern<comm::ISendOp> {
  using RuntimePattern::RuntimePattern;
  LogicalResult
  matchAndRewrite(comm::ISendOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = op.getValue().getType();
    Value buffer = bufferOf(rewriter, loc, adaptor.getValue());
    Value handle = call(rewriter, loc, rt.isend,
                        messageArgs(rewriter, loc, op, buffer, type));
    rewriter.replaceOpWithMultiple(op, {{handle}});
    return success();
  }
};

/// irecv: a buffer for the value, then rankc_rt_irecv into it.
struct IRecvLowering : RuntimePattern<comm::IRecvOp> {
  using RuntimePattern::RuntimePattern;
  LogicalResult
  matchAndRewrite(comm::IRecvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getRequest().getType().getValueType());
    Value buffer = memref::AllocOp::create(rewriter, loc, bufferType(type));
    Value handle = call(rewriter, loc, rt.irecv,
                        messageArgs(rewriter, loc, op, buffer, type));
    rewriter.replaceOpWithMultiple(op, {{handle, buffer}});
    return success();
  }
};

/// iallreduce: the input copied, a buffer for the result, then
/// rankc_rt_iallreduce.
struct IAllReduceLowering : RuntimePattern<comm::IAllReduceOp> {
  using RuntimePattern::RuntimePattern;
  LogicalResult
  matchAndRewrite(comm::IAllReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = op.getValue().getType();
    Value in = bufferOf(rewriter, loc, adaptor.getValue());
    Value out = memref::AllocOp::create(rewriter, loc, bufferType(type));
    Value handle = call(rewriter, loc, rt.iallreduce,
                        {address(rewriter, loc, in), address(rewriter, loc, out),
                         i64(rewriter, loc, type.getNumElements()),
                         i32(rewriter, loc,
                             runtimeDTypeCode(type.getElementType())),
                         i32(rewriter, loc, int(op.getReduce())),
                         i32(rewriter, loc, op.getEvent())});
    rewriter.replaceOpWithMultiple(op, {{handle, out}});
    return success();
  }
};

/// wait: rankc_rt_wait, then the delivered buffer as a tensor (`restrict`:
/// nothing else aliases it; `writable`: the program may update it in place).
struct WaitLowering : RuntimePattern<comm::WaitOp> {
  using RuntimePattern::RuntimePattern;
  LogicalResult
  matchAndRewrite(comm::WaitOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ValueRange request = adaptor.getRequest();
    call(rewriter, loc, rt.wait, {request.front()});
    if (!op.getValue()) {
      rewriter.eraseOp(op);
      return success();
    }
    Value value = bufferization::ToTensorOp::create(
        rewriter, loc, op.getValue().getType(), request.back(),
        /*restrict=*/true, /*writable=*/true);
    rewriter.replaceOp(op, value);
    return success();
  }
};

/// Part calls between rankc_rt_part_begin and _end (the trace's parts),
/// numbered in program order; the end right after the call, so that a
/// collective started after the part starts after its end mark.
void bracketParts(func::FuncOp program, const RuntimeFunctions &rt) {
  OpBuilder b(program.getContext());
  int part = 0;
  for (auto callOp : llvm::to_vector(
           program.getBody().front().getOps<func::CallOp>())) {
    Location loc = callOp.getLoc();
    b.setInsertionPoint(callOp);
    Value id = i32(b, loc, part++);
    call(b, loc, rt.partBegin, {id});
    b.setInsertionPointAfter(callOp);
    call(b, loc, rt.partEnd, {id});
  }
}

/// rankc_entry, one step: each input is read where the runtime keeps it
/// (its own buffer, or the output it carries from the last step), and the
/// runtime is told where each result is. Nothing is copied either way; an
/// input is never written (not `writable`: bufferization copies first if
/// the program would update a value in place).
void buildEntry(ModuleOp module, func::FuncOp program,
                const RuntimeFunctions &rt) {
  OpBuilder b(module.getContext());
  Location loc = program.getLoc();
  b.setInsertionPointToEnd(module.getBody());
  auto entry = func::FuncOp::create(b, loc, "rankc_entry",
                                    b.getFunctionType({}, {}));
  b.setInsertionPointToStart(entry.addEntryBlock());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  SmallVector<Value> args;
  for (auto [i, type] : llvm::enumerate(program.getArgumentTypes())) {
    auto t = cast<RankedTensorType>(type);
    Value bytes = call(b, loc, rt.input, {i32(b, loc, i)});
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
    call(b, loc, rt.output, {i32(b, loc, i), address(b, loc, buffer)});
  }
  func::ReturnOp::create(b, loc);
}


struct CommToRuntimePass
    : public rankc::impl::ConvertCommToRuntimeBase<CommToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp program = onlyProgram(module, getArgument());
    if (!program)
      return signalPassFailure();
    RuntimeFunctions rt = declareRuntime(module);
    bracketParts(program, rt);

    RequestConverter converter;
    ConversionTarget target(getContext());
    target.addIllegalDialect<comm::CommDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(&getContext());
    patterns.add<ISendLowering, IRecvLowering, IAllReduceLowering,
                 WaitLowering>(converter, &getContext(), rt);
    if (failed(applyPartialConversion(program, target, std::move(patterns))))
      return signalPassFailure();

    buildEntry(module, program, rt);
    // The manifest (rankc-runtime-manifest) now carries what the comm.*
    // attributes said.
    // (All of a function's argument or result attributes set at once: one
    // setter per index rebuilt them all each time, quadratic in a step of
    // thousands of parameters.)
    Builder b(&getContext());
    DictionaryAttr none = b.getDictionaryAttr({});
    for (auto fn : module.getOps<func::FuncOp>()) {
      fn.setAllArgAttrs(SmallVector<DictionaryAttr>(fn.getNumArguments(), none));
      // (Except which input each carried result is the next value of:
      // rankc-donate-carried writes the result over that input.)
      SmallVector<DictionaryAttr> resultAttrs;
      for (unsigned i = 0; i < fn.getNumResults(); ++i) {
        Attribute from = fn.getResultAttr(i, rankc::kCarriedFrom);
        resultAttrs.push_back(
            from ? b.getDictionaryAttr(b.getNamedAttr(rankc::kCarriedFrom, from))
                 : none);
      }
      fn.setAllResultAttrs(resultAttrs);
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
  }
};

} // namespace
