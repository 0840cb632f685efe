//===- ProgramPiecesTest.cpp - a lowered program cut into modules ---------===//
//
// lib/Target/ProgramPieces.cpp, with pieces small enough that a module of
// a few functions is cut: every piece verifies on its own (llvm.call and
// llvm.mlir.addressof check that what they name is in their module, so
// each piece declares everything it uses), the globals and the function
// with an op of another dialect stay in piece 0, glue and optimized code
// never share a piece, a symbol of local linkage used from another piece
// becomes hidden, constructor lists stay in piece 0 and declare what
// they name, and the same module is cut the same way every time.
//
//===----------------------------------------------------------------------===//

#include "ProgramPieces.h"
#include "rankc/Codegen/Common/Glue.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir;

namespace {

// Glue (optnone) and optimized functions of 4-6 ops each; @helper is
// internal and called from glue that lands in another piece; @answer is a
// private constant read by both kinds; @mixed holds an arith op.
constexpr const char *kProgram = R"mlir(
llvm.mlir.global private constant @answer(42 : i64) : i64
llvm.func @runtime_call(i64) -> i64
llvm.func internal @helper(%a: i64) -> i64 attributes {passthrough = ["noinline", "optnone"]} {
  %0 = llvm.call @runtime_call(%a) : (i64) -> i64
  %1 = llvm.add %0, %a : i64
  %2 = llvm.mul %1, %0 : i64
  llvm.return %2 : i64
}
llvm.func @glue0(%a: i64) -> i64 attributes {passthrough = ["noinline", "optnone"]} {
  %p = llvm.mlir.addressof @answer : !llvm.ptr
  %v = llvm.load %p : !llvm.ptr -> i64
  %0 = llvm.call @helper(%v) : (i64) -> i64
  %1 = llvm.call @kernel0(%0) : (i64) -> i64
  llvm.return %1 : i64
}
llvm.func @glue1(%a: i64) -> i64 attributes {passthrough = ["noinline", "optnone"]} {
  %0 = llvm.call @helper(%a) : (i64) -> i64
  %1 = llvm.call @glue0(%0) : (i64) -> i64
  %2 = llvm.call @kernel1(%1) : (i64) -> i64
  %3 = llvm.add %2, %1 : i64
  llvm.return %3 : i64
}
llvm.func @kernel0(%a: i64) -> i64 {
  %p = llvm.mlir.addressof @answer : !llvm.ptr
  %v = llvm.load %p : !llvm.ptr -> i64
  %0 = llvm.mul %a, %v : i64
  %1 = llvm.add %0, %a : i64
  llvm.return %1 : i64
}
llvm.func @kernel1(%a: i64) -> i64 {
  %0 = llvm.mul %a, %a : i64
  %1 = llvm.add %0, %a : i64
  %2 = llvm.call @kernel0(%1) : (i64) -> i64
  llvm.return %2 : i64
}
llvm.func @mixed(%a: i64) -> i64 attributes {passthrough = ["noinline", "optnone"]} {
  %0 = arith.addi %a, %a : i64
  %1 = llvm.call @glue1(%0) : (i64) -> i64
  llvm.return %1 : i64
}
)mlir";

struct Cut {
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  rankc::ProgramPieces pieces;
  explicit Cut(llvm::StringRef source = kProgram) {
    ctx.loadDialect<LLVM::LLVMDialect, arith::ArithDialect>();
    module = parseSourceString<ModuleOp>(source, &ctx);
    rankc::PieceSizes sizes;
    sizes.glueOps = 8;
    sizes.optimizedOps = 5;
    pieces = rankc::cutIntoPieces(*module, sizes);
  }
  /// The piece that defines `name` (with a body), or -1.
  int definer(llvm::StringRef name) {
    for (auto [i, piece] : llvm::enumerate(pieces.pieces))
      if (auto fn = piece.module.lookupSymbol<LLVM::LLVMFuncOp>(name))
        if (!fn.isExternal())
          return i;
    return -1;
  }
  std::string print() {
    std::string text;
    llvm::raw_string_ostream os(text);
    for (rankc::ProgramPiece piece : pieces.pieces)
      os << piece.module << "\n----\n";
    return text;
  }
};

TEST(ProgramPieces, EveryPieceVerifiesAlone) {
  Cut cut;
  ASSERT_TRUE(cut.module);
  ASSERT_GE(cut.pieces.pieces.size(), 3u);
  EXPECT_EQ(cut.pieces.pieces[0].module, *cut.module);
  for (rankc::ProgramPiece piece : cut.pieces.pieces)
    EXPECT_TRUE(succeeded(verify(piece.module))) << piece.module;
  // Every function is defined exactly once, somewhere.
  for (const char *name :
       {"helper", "glue0", "glue1", "kernel0", "kernel1", "mixed"}) {
    int defined = 0;
    for (rankc::ProgramPiece piece : cut.pieces.pieces)
      if (auto fn = piece.module.lookupSymbol<LLVM::LLVMFuncOp>(name))
        defined += !fn.isExternal();
    EXPECT_EQ(defined, 1) << name;
  }
}

TEST(ProgramPieces, WhatCannotMoveStaysInPieceZero) {
  Cut cut;
  EXPECT_EQ(cut.definer("mixed"), 0);
  auto answer = cut.pieces.pieces[0].module.lookupSymbol<LLVM::GlobalOp>(
      "answer");
  ASSERT_TRUE(answer);
  EXPECT_TRUE(answer.getValueOrNull()); // the definition, with its value
  for (size_t i = 1; i < cut.pieces.pieces.size(); ++i)
    if (auto g = cut.pieces.pieces[i].module.lookupSymbol<LLVM::GlobalOp>(
            "answer")) {
      EXPECT_FALSE(g.getValueOrNull()); // a declaration
      EXPECT_EQ(g.getLinkage(), LLVM::Linkage::External);
    }
}

TEST(ProgramPieces, GlueAndOptimizedCodeApart) {
  Cut cut;
  for (rankc::ProgramPiece piece : cut.pieces.pieces)
    for (auto fn : piece.module.getOps<LLVM::LLVMFuncOp>()) {
      if (!fn.isExternal()) {
        EXPECT_EQ(rankc::isGlueFunction(fn), piece.glue) << fn.getSymName().str();
      }
    }
}

TEST(ProgramPieces, LocalSymbolsUsedAcrossPiecesBecomeHidden) {
  Cut cut;
  int helper = cut.definer("helper");
  ASSERT_GE(helper, 0);
  bool usedElsewhere = false;
  for (auto [i, piece] : llvm::enumerate(cut.pieces.pieces))
    if (int(i) != helper && piece.module.lookupSymbol("helper"))
      usedElsewhere = true;
  ASSERT_TRUE(usedElsewhere); // (glue0 and glue1 do not share a piece)
  auto fn = cut.pieces.pieces[helper].module.lookupSymbol<LLVM::LLVMFuncOp>(
      "helper");
  EXPECT_EQ(fn.getLinkage(), LLVM::Linkage::External);
  EXPECT_EQ(fn.getVisibility_(), LLVM::Visibility::Hidden);
}

TEST(ProgramPieces, TheSameCutEveryTime) {
  Cut a, b;
  EXPECT_EQ(a.print(), b.print());
}

// A CUDA program after rankc-gpu-launch-to-llvm: its modules load in a
// global constructor, and a launching function reads a kernel's handle.
constexpr const char *kConstructors = R"mlir(
llvm.mlir.global internal @kernel_handle() : !llvm.ptr {
  %0 = llvm.mlir.zero : !llvm.ptr
  llvm.return %0 : !llvm.ptr
}
llvm.func @lookup() -> !llvm.ptr
llvm.func internal @load() {
  %0 = llvm.call @lookup() : () -> !llvm.ptr
  %1 = llvm.mlir.addressof @kernel_handle : !llvm.ptr
  llvm.store %0, %1 : !llvm.ptr, !llvm.ptr
  llvm.store %0, %1 : !llvm.ptr, !llvm.ptr
  llvm.return
}
llvm.func @launch0(%a: i64) -> i64 {
  %p = llvm.mlir.addressof @kernel_handle : !llvm.ptr
  %f = llvm.load %p : !llvm.ptr -> !llvm.ptr
  %0 = llvm.mul %a, %a : i64
  %1 = llvm.add %0, %a : i64
  llvm.return %1 : i64
}
llvm.func @launch1(%a: i64) -> i64 {
  %p = llvm.mlir.addressof @kernel_handle : !llvm.ptr
  %f = llvm.load %p : !llvm.ptr -> !llvm.ptr
  %0 = llvm.mul %a, %a : i64
  %1 = llvm.call @launch0(%0) : (i64) -> i64
  llvm.return %1 : i64
}
llvm.mlir.global_ctors ctors = [@load], priorities = [123 : i32], data = [#llvm.zero]
)mlir";

TEST(ProgramPieces, ConstructorListsStayAndNameWhatMoved) {
  Cut cut(kConstructors);
  ASSERT_TRUE(cut.module);
  ASSERT_GE(cut.pieces.pieces.size(), 2u);
  for (rankc::ProgramPiece piece : cut.pieces.pieces)
    EXPECT_TRUE(succeeded(verify(piece.module))) << piece.module;
  ModuleOp zero = cut.pieces.pieces[0].module;
  EXPECT_EQ(llvm::range_size(zero.getOps<LLVM::GlobalCtorsOp>()), 1u);
  for (size_t i = 1; i < cut.pieces.pieces.size(); ++i)
    EXPECT_TRUE(cut.pieces.pieces[i].module.getOps<LLVM::GlobalCtorsOp>().empty());
  // Functions move out of piece 0 as in a CPU program; the handle is
  // defined once, in piece 0, and hidden where pieces share it.
  int load = cut.definer("load");
  ASSERT_GE(load, 0);
  EXPECT_NE(cut.definer("launch0"), cut.definer("launch1"));
  auto handle = zero.lookupSymbol<LLVM::GlobalOp>("kernel_handle");
  ASSERT_TRUE(handle);
  EXPECT_EQ(handle.getVisibility_(), LLVM::Visibility::Hidden);
  if (load != 0) {
    auto declared = zero.lookupSymbol<LLVM::LLVMFuncOp>("load");
    ASSERT_TRUE(declared);
    EXPECT_TRUE(declared.isExternal());
  }
}

TEST(ProgramPieces, SmallProgramsStayWhole) {
  MLIRContext ctx;
  ctx.loadDialect<LLVM::LLVMDialect, arith::ArithDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kProgram, &ctx);
  ASSERT_TRUE(module);
  EXPECT_TRUE(rankc::cutIntoPieces(*module).pieces.empty());
}

} // namespace
