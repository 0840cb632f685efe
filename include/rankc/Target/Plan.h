//===- Plan.h - the schedule of a partitioned module, for people -*- C++ -*-===//
//
// Reads the schedule back from a partitioned module (each program function is
// a sequence of waits, part calls and sends) and writes it as plan.json (see
// shared/spec/cli.md) or as a Graphviz drawing.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_TARGET_PLAN_H
#define RANKC_TARGET_PLAN_H

#include "mlir/IR/SymbolTable.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace rankc {

/// One part of a program's schedule: the waits before it, its computation
/// (a call, or none), the messages sent right after it.
struct PlanPart {
  llvm::SmallVector<mlir::Operation *> waits; // comm.recv / comm.allreduce
  mlir::func::CallOp call;                    // null: no computation
  llvm::SmallVector<mlir::Operation *> sends; // comm.send
  unsigned ops = 0; // DAG nodes computed (top-level ops without DAG names)
  /// Parameters whose optimizer update this part computes (comm.update_of).
  std::vector<std::string> updates;
};

/// The parts of a program function of a partitioned module, in order.
/// `symbols` is the module's table, built once for all its programs (a
/// lookup in the module itself scans it: quadratic in the parts).
std::vector<PlanPart> readSchedule(mlir::func::FuncOp program,
                                   mlir::SymbolTable &symbols);

/// A gradient bucket, as DDP's reducer would report it.
struct BucketInfo {
  std::vector<std::string> params;
  std::string dtype;
  int64_t bytes = 0;
  /// --bucket-cap-mb auto: when the bucket's last gradient is predicted
  /// ready, its reduction to start, how long it takes, and what its wait
  /// adds after the computation (seconds).
  std::optional<double> ready, start, reduce, exposed;
};
/// The buckets of a partitioned module in the order their reductions start.
std::vector<BucketInfo> readBuckets(mlir::ModuleOp module);

/// Records on a program's function what its lowered step and micro-step
/// allocate (the module attributes of rankc-step-memory; a null micro-step
/// without accumulation), for writePlan's `memory`.
void setPlannedMemory(mlir::func::FuncOp program, mlir::DictionaryAttr step,
                      mlir::DictionaryAttr microStep);

/// plan.json of a partitioned module.
mlir::LogicalResult writePlan(mlir::ModuleOp module, llvm::raw_ostream &os);

/// A Graphviz drawing of a partitioned module: one cluster per program, its
/// parts and messages in order, and an edge for every message.
mlir::LogicalResult writeDot(mlir::ModuleOp module, llvm::raw_ostream &os);

} // namespace rankc

#endif // RANKC_TARGET_PLAN_H
