//===- ProgramPieces.cpp - a lowered program cut into modules -------------===//
//
// A program of many small nodes is mostly glue: at 50,000 nodes a program
// was 3.7 s of -O0 code generation in one module, on one thread, and its
// translation to LLVM IR another 0.5 s, however many cores there were.
// LLVM's own way to spread a module over threads (llvm::SplitModule, each
// piece written as bitcode and read back into an LLVMContext of its own,
// since a context is not shared between threads) cost 0.8 s a program in
// the round trip alone. The cut is made here instead, in MLIR, before
// translation: functions move (not copied) into modules of their own, each
// declaring what it uses from the others, and every piece is translated
// into its own LLVMContext straight away. MLIR's context is shared between
// threads; LLVM's contexts are not.
//
// Functions are grouped by size (operations in their bodies, PieceSizes):
// optimized code and glue apart, the largest first into the lightest
// group. What cannot move stays in piece 0, the program's own
// module: its globals (their data is emitted once) and constructor lists,
// and anything left for the translation to lower against the module (a
// gpu.binary, a function holding a gpu.launch_func: the CUDA pipeline
// lowers both before, rankc-gpu-launch-to-llvm). Nothing here depends on
// the cores.
//
//===----------------------------------------------------------------------===//

#include "ProgramPieces.h"
#include "rankc/Codegen/Common/Glue.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>

using namespace mlir;

namespace rankc {

namespace {

/// Every symbol `attr` names, nested ones included.
void collectSymbols(Attribute attr, llvm::SmallVectorImpl<StringAttr> &out) {
  if (auto flat = dyn_cast<FlatSymbolRefAttr>(attr)) {
    out.push_back(flat.getAttr());
  } else if (auto ref = dyn_cast<SymbolRefAttr>(attr)) {
    out.push_back(ref.getRootReference());
  } else if (isa<ArrayAttr, DictionaryAttr>(attr)) {
    attr.walk([&](SymbolRefAttr ref) { out.push_back(ref.getRootReference()); });
  }
}

/// The symbols an op of a function body names. Calls and addresses are
/// nearly all of them, read directly; other ops that use symbols say so
/// (SymbolUserOpInterface, CallOpInterface) and are read whole, as are ops
/// of other dialects (a gpu.launch_func). (Reading every op's attributes
/// whole built a dictionary of its properties each: 0.1 s a program.)
void collectUses(Operation *op, llvm::SmallVectorImpl<StringAttr> &out) {
  if (auto call = dyn_cast<LLVM::CallOp>(op)) {
    if (FlatSymbolRefAttr callee = call.getCalleeAttr())
      out.push_back(callee.getAttr());
    return;
  }
  if (auto address = dyn_cast<LLVM::AddressOfOp>(op)) {
    out.push_back(address.getGlobalNameAttr().getAttr());
    return;
  }
  if (isa<SymbolUserOpInterface, CallOpInterface>(op) ||
      !isa<LLVM::LLVMDialect>(op->getDialect()))
    for (const NamedAttribute &a : op->getAttrs())
      collectSymbols(a.getValue(), out);
}

/// What one top-level op of the program is to the cut.
struct TopLevel {
  Operation *op;
  size_t ops = 0;    // operations in its body
  bool movable = false;
  bool glue = false;
  unsigned group = 0;
  llvm::SmallVector<StringAttr> uses; // symbols its body and attributes name
};

/// Greedy: the largest first into the lightest group (ties: the earlier
/// function, the lower group), over the groups [first, first + count).
void assignGroups(std::vector<TopLevel *> items, std::vector<size_t> &load,
                  unsigned first, unsigned count) {
  std::stable_sort(items.begin(), items.end(),
                   [](TopLevel *a, TopLevel *b) { return a->ops > b->ops; });
  for (TopLevel *item : items) {
    unsigned best = first;
    for (unsigned g = first + 1; g < first + count; ++g)
      if (load[g] < load[best])
        best = g;
    item->group = best;
    load[best] += item->ops;
  }
}

/// A declaration of `def` (a function or a global) for another module.
Operation *declarationOf(Operation *def, bool hidden) {
  Operation *decl = def->cloneWithoutRegions();
  if (auto fn = dyn_cast<LLVM::LLVMFuncOp>(decl)) {
    fn.setLinkage(LLVM::Linkage::External);
    fn.removePassthroughAttr();
    fn.removeComdatAttr();
    fn.removePersonalityAttr();
    fn.removeSymVisibilityAttr();
    if (hidden)
      fn.setVisibility_(LLVM::Visibility::Hidden);
  } else if (auto global = dyn_cast<LLVM::GlobalOp>(decl)) {
    global.setLinkage(LLVM::Linkage::External);
    global.removeValueAttr();
    global.removeComdatAttr();
    global.removeSectionAttr();
    if (hidden)
      global.setVisibility_(LLVM::Visibility::Hidden);
  }
  return decl;
}

bool hasLocalLinkage(Operation *op) {
  LLVM::Linkage linkage = LLVM::Linkage::External;
  if (auto fn = dyn_cast<LLVM::LLVMFuncOp>(op))
    linkage = fn.getLinkage();
  else if (auto global = dyn_cast<LLVM::GlobalOp>(op))
    linkage = global.getLinkage();
  return linkage == LLVM::Linkage::Private ||
         linkage == LLVM::Linkage::Internal;
}

/// Gives a definition of local linkage a name the linker sees, hidden so
/// that it leaves neither the executable nor a library.
void makeHidden(Operation *op) {
  if (auto fn = dyn_cast<LLVM::LLVMFuncOp>(op)) {
    fn.setLinkage(LLVM::Linkage::External);
    fn.setVisibility_(LLVM::Visibility::Hidden);
  } else if (auto global = dyn_cast<LLVM::GlobalOp>(op)) {
    global.setLinkage(LLVM::Linkage::External);
    global.setVisibility_(LLVM::Visibility::Hidden);
  }
}

} // namespace

ProgramPieces cutIntoPieces(ModuleOp program, const PieceSizes &sizes) {
  ProgramPieces result;
  std::vector<TopLevel> tops;
  llvm::StringMap<unsigned> index; // symbol name -> position in `tops`
  size_t optimizedOps = 0, glueOps = 0;
  bool pinnedOptimized = false;
  for (Operation &op : program.getBody()->getOperations()) {
    TopLevel top{&op};
    if (auto fn = dyn_cast<LLVM::LLVMFuncOp>(op)) {
      for (const NamedAttribute &a : op.getAttrs())
        collectSymbols(a.getValue(), top.uses);
      if (!fn.isExternal()) {
        top.glue = isGlueFunction(fn);
        top.movable = true;
        // Ops of other dialects are translated against this module (a
        // gpu.launch_func, against its gpu.binary): the function stays.
        fn.getBody().walk([&](Operation *inner) {
          ++top.ops;
          if (!isa<LLVM::LLVMDialect>(inner->getDialect()))
            top.movable = false;
          collectUses(inner, top.uses);
        });
        (top.glue ? glueOps : optimizedOps) += top.ops;
        pinnedOptimized |= !top.movable && !top.glue;
      }
    } else if (isa<LLVM::GlobalOp>(op)) {
      for (const NamedAttribute &a : op.getAttrs())
        collectSymbols(a.getValue(), top.uses);
      op.walk([&](Operation *inner) { collectUses(inner, top.uses); });
    } else if (isa<LLVM::GlobalCtorsOp, LLVM::GlobalDtorsOp>(op)) {
      // (Stays in piece 0, which declares the functions it names.)
      for (const NamedAttribute &a : op.getAttrs())
        collectSymbols(a.getValue(), top.uses);
    } else if (!isa<gpu::BinaryOp>(op)) {
      return result; // (comdats, aliases, ctors: built whole)
    }
    if (auto name = op.getAttrOfType<StringAttr>(
            SymbolTable::getSymbolAttrName()))
      index[name.getValue()] = tops.size();
    tops.push_back(std::move(top));
  }

  // Glue is a piece of its own only when there is much of it (else it goes
  // with the optimized code, where -O3 skips it).
  unsigned glueGroups =
      glueOps >= sizes.glueOps / 4
          ? std::clamp<size_t>(glueOps / sizes.glueOps, 1, sizes.maxGroups)
          : 0;
  unsigned optimizedGroups =
      optimizedOps > 0 ? std::clamp<size_t>(optimizedOps / sizes.optimizedOps,
                                            1, sizes.maxGroups)
                       : 0;
  if (glueGroups == 0 && optimizedOps == 0)
    return result;
  if (glueGroups == 0)
    optimizedGroups = std::max(optimizedGroups, 1u);
  unsigned groups = glueGroups + optimizedGroups;
  if (groups <= 1)
    return result;

  // Groups: glue first (group 0 holds what stays, at -O0), unless a function
  // that must stay is optimized code: then the optimized groups come first.
  bool glueFirst = glueGroups > 0 && !pinnedOptimized;
  unsigned glueBase = glueFirst ? 0 : optimizedGroups;
  unsigned optimizedBase = glueFirst ? glueGroups : 0;
  std::vector<size_t> load(groups, 0);
  std::vector<TopLevel *> glue, optimized;
  for (TopLevel &top : tops) {
    if (!top.movable) {
      top.group = 0;
      load[0] += top.ops;
    } else if (top.glue && glueGroups > 0) {
      glue.push_back(&top);
    } else {
      optimized.push_back(&top);
    }
  }
  assignGroups(glue, load, glueBase, glueGroups);
  assignGroups(optimized, load, optimizedBase, optimizedGroups);

  // Pieces 1 ... groups - 1: new modules with the program's attributes (data
  // layout, target triple), their functions moved in, in program order.
  result.pieces.resize(groups);
  for (unsigned g = 0; g < groups; ++g) {
    result.pieces[g].glue = glueGroups > 0 && g >= glueBase &&
                            g < glueBase + glueGroups;
    result.pieces[g].ops = load[g];
  }
  result.pieces[0].module = program;
  result.owned.resize(groups);
  for (unsigned g = 1; g < groups; ++g) {
    result.owned[g] = ModuleOp::create(program.getLoc());
    (*result.owned[g])->setAttrs(program->getAttrDictionary());
    result.pieces[g].module = *result.owned[g];
  }
  // What each piece names and does not define: a declaration, placed
  // first in the piece, in program order.
  std::vector<std::vector<unsigned>> needed(groups);
  {
    std::vector<llvm::DenseSet<unsigned>> seen(groups);
    for (TopLevel &top : tops)
      for (StringAttr use : top.uses) {
        auto it = index.find(use.getValue());
        if (it == index.end())
          continue;
        TopLevel &def = tops[it->second];
        // (Declarations and globals stay in piece 0: the others declare.)
        if (def.group != top.group &&
            seen[top.group].insert(it->second).second)
          needed[top.group].push_back(it->second);
      }
  }
  for (unsigned g = 0; g < groups; ++g)
    llvm::sort(needed[g]);
  // Definitions used from another piece keep a name the linker sees.
  for (unsigned g = 0; g < groups; ++g)
    for (unsigned i : needed[g])
      if (hasLocalLinkage(tops[i].op))
        makeHidden(tops[i].op);
  for (TopLevel &top : tops)
    if (top.group != 0 && top.movable) {
      Block *body = result.pieces[top.group].module.getBody();
      top.op->moveBefore(body, body->end());
    }
  for (unsigned g = 0; g < groups; ++g) {
    Block *body = result.pieces[g].module.getBody();
    auto at = body->begin();
    for (unsigned i : needed[g]) {
      Operation *def = tops[i].op;
      bool hidden = false;
      if (auto fn = dyn_cast<LLVM::LLVMFuncOp>(def))
        hidden = fn.getVisibility_() == LLVM::Visibility::Hidden;
      else if (auto global = dyn_cast<LLVM::GlobalOp>(def))
        hidden = global.getVisibility_() == LLVM::Visibility::Hidden;
      else
        continue; // (a gpu.binary: its users stay with it)
      body->getOperations().insert(at, declarationOf(def, hidden));
    }
  }
  return result;
}

} // namespace rankc
