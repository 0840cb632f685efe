//===- GpuIndexChecks.cpp - index checks that kernels can make ------------===//
//
// take and scatter_add check every index they read (IndexingBuilders.cpp):
// out of range, they call rankc_rt_index_error, which ends the run on the
// host. A GPU kernel cannot call the host, so on the CUDA backend each such
// call becomes a write into the runtime's index record instead: the first
// thread to find a bad index claims the record (an atomic compare-and-swap
// of its first word from 0 to check + 1) and stores the index and the
// bound; the runtime reads the record after the step and ends the run with
// the same message (runtime/core/CoreApi.cpp). The index itself is already clamped
// to 0, so nothing reads or writes out of bounds meanwhile.
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/CUDA/Passes.h"
#include "rankc/Support/IndexChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPUINDEXCHECKS
#include "rankc/Codegen/CUDA/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// `call(check, index, bound)` as a claim of `record` ({check + 1, index,
/// bound}, int64) that only the first bad index anywhere wins.
void recordInstead(OpBuilder &b, func::CallOp call, Value record) {
  Location loc = call.getLoc();
  b.setInsertionPoint(call);
  Type i64 = b.getI64Type();
  Value check = call.getOperand(0), index = call.getOperand(1),
        bound = call.getOperand(2);
  Value zero = arith::ConstantIntOp::create(b, loc, 0, 64);
  Value one = arith::ConstantIntOp::create(b, loc, 1, 64);
  Value tag = arith::AddIOp::create(
      b, loc, arith::ExtSIOp::create(b, loc, i64, check), one);
  Value at = arith::ConstantIndexOp::create(b, loc, 0);
  auto claim = memref::GenericAtomicRMWOp::create(b, loc, record, at);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(claim.getBody());
    Value current = claim.getCurrentValue();
    Value free = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       current, zero);
    memref::AtomicYieldOp::create(
        b, loc, arith::SelectOp::create(b, loc, free, tag, current));
  }
  Value won = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                    claim.getResult(), zero);
  auto ifWon = scf::IfOp::create(b, loc, won, /*withElseRegion=*/false);
  b.setInsertionPointToStart(ifWon.thenBlock());
  memref::StoreOp::create(b, loc, index, record,
                          ValueRange{arith::ConstantIndexOp::create(b, loc, 1)});
  memref::StoreOp::create(b, loc, bound, record,
                          ValueRange{arith::ConstantIndexOp::create(b, loc, 2)});
  call.erase();
}

struct GpuIndexChecksPass
    : public rankc::impl::RankcGpuIndexChecksBase<GpuIndexChecksPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    auto bytes = MemRefType::get({ShapedType::kDynamic}, b.getI8Type());
    auto recordType = MemRefType::get({3}, b.getI64Type());
    func::FuncOp getRecord;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      SmallVector<func::CallOp> calls;
      fn.walk([&](func::CallOp call) {
        if (call.getCallee() == rankc::kIndexErrorFunction)
          calls.push_back(call);
      });
      if (calls.empty())
        continue;
      if (!getRecord) {
        b.setInsertionPointToEnd(module.getBody());
        getRecord = func::FuncOp::create(b, module.getLoc(),
                                         rankc::kIndexRecordFunction,
                                         b.getFunctionType({}, {bytes}));
        getRecord.setPrivate();
        getRecord->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                           b.getUnitAttr());
      }
      // Asked for once per call of the function, on the host.
      Location loc = fn.getLoc();
      b.setInsertionPointToStart(&fn.getBody().front());
      Value raw = func::CallOp::create(b, loc, getRecord).getResult(0);
      Value offset = arith::ConstantIndexOp::create(b, loc, 0);
      Value record = memref::ViewOp::create(b, loc, recordType, raw, offset,
                                            ValueRange());
      for (func::CallOp call : calls)
        recordInstead(b, call, record);
    }
    if (auto decl = module.lookupSymbol<func::FuncOp>(rankc::kIndexErrorFunction);
        decl && SymbolTable::symbolKnownUseEmpty(decl, module))
      decl.erase();
  }
};

} // namespace
