// The values of gpu-row-chains.mlir's functions with their row chains run
// one lane per row (`row-chain-lanes=1`: no shuffles, so the CPU can run
// them; each reduction then combines its row in the order upstream's loops
// do) against the same functions lowered by upstream's linalg-to-loops:
// the same bits. What this checks is what the GPU's warp changes nothing
// of: which ops form a chain, the indices each op computes from the row,
// the totals taken from registers instead of memory, the fills folded, the
// buffers the chain may not reorder (the negative cases run too).
// REQUIRES: mlir-runner
// (Arithmetic first: memref.generic_atomic_rmw's lowering needs its body
// in the LLVM dialect.)
// DEFINE: %{lower} = -convert-linalg-to-loops -convert-scf-to-cf -expand-strided-metadata -lower-affine -convert-math-to-llvm -convert-arith-to-llvm -finalize-memref-to-llvm -convert-cf-to-llvm -convert-func-to-llvm -convert-index-to-llvm -reconcile-unrealized-casts
// DEFINE: %{run} = mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils
// RUN: cat %S/gpu-row-chains.mlir %s > %t.mlir
// RUN: mlir-opt %t.mlir %{lower} | %{run} > %t.ref.full && grep -v base@ %t.ref.full > %t.ref
// RUN: rankc-opt %t.mlir -rankc-linalg-to-gpu-loops="row-chains=1 row-chain-lanes=1 threads=16" | mlir-opt %{lower} | %{run} > %t.out.full && grep -v base@ %t.out.full > %t.out
// RUN: diff %t.ref %t.out
// RUN: FileCheck %s --input-file %t.out.full
// Five softmaxes, then the layer norm and its statistics: the first
// probabilities (row 0 keeps 8 columns: 0 past them), each with its max and
// sum.
// CHECK: rank = 3 offset = 0 sizes = [4, 8, 64]
// CHECK-NEXT: [0.11449, 0.174378, 0.180393, 0.122861, 0.0784207, 0.0708828, 0.0995621, 0.159013, 0, 0,
// CHECK: rank = 1 offset = 0 sizes = [64]
// CHECK: rank = 3 offset = 0 sizes = [4, 8, 64]
// CHECK: rank = 1 offset = 0 sizes = [64]
// CHECK: rank = 3 offset = 0 sizes = [4, 8, 64]
// CHECK: rank = 1 offset = 0 sizes = [64]
// CHECK: rank = 3 offset = 0 sizes = [4, 8, 64]
// CHECK: rank = 1 offset = 0 sizes = [64]
// CHECK: rank = 3 offset = 0 sizes = [4, 8, 64]
// CHECK: rank = 1 offset = 0 sizes = [64]
// CHECK: rank = 2 offset = 0 sizes = [32, 96]
// CHECK: rank = 1 offset = 0 sizes = [96]
// CHECK: rank = 2 offset = 0 sizes = [32, 96]
// CHECK: rank = 1 offset = 0 sizes = [1]
// CHECK-NEXT: [70000]
// The picks (row 6's 0), the maxes and sums, the record {3, 70, 64}.
// CHECK: rank = 1 offset = 0 sizes = [16]
// CHECK-NEXT: [{{[^,]+}}, {{[^,]+}}, {{[^,]+}}, {{[^,]+}}, {{[^,]+}}, {{[^,]+}}, 0,
// CHECK: rank = 1 offset = 0 sizes = [32]
// CHECK: rank = 1 offset = 0 sizes = [3]
// CHECK-NEXT: [3,  70,  64]

func.func private @printMemrefF32(memref<*xf32>)
func.func private @printMemrefI64(memref<*xi64>)

// x[i, j, k] = 4 sin(7i + 3j + k): every row different, both signs.
func.func @scores(%s: memref<4x8x64xf32>) {
  %four = arith.constant 4.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%s : memref<4x8x64xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %c7 = arith.constant 7 : index
    %c3 = arith.constant 3 : index
    %a = arith.muli %i, %c7 : index
    %b = arith.muli %j, %c3 : index
    %ab = arith.addi %a, %b : index
    %n = arith.addi %ab, %k : index
    %ni = arith.index_cast %n : index to i64
    %f = arith.sitofp %ni : i64 to f32
    %sin = math.sin %f : f32
    %v = arith.mulf %sin, %four : f32
    linalg.yield %v : f32
  }
  return
}

// Causal-like: column k of row j is masked past 8j + 7.
func.func @causal(%m: memref<8x64xi1>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      outs(%m : memref<8x64xi1>) {
  ^bb0(%o: i1):
    %j = linalg.index 0 : index
    %k = linalg.index 1 : index
    %c8 = arith.constant 8 : index
    %c7 = arith.constant 7 : index
    %a = arith.muli %j, %c8 : index
    %lim = arith.addi %a, %c7 : index
    %masked = arith.cmpi ugt, %k, %lim : index
    linalg.yield %masked : i1
  }
  return
}

// The probabilities, then the max and the sum (the block's first bytes).
func.func @print3(%p: memref<4x8x64xf32>, %blk: memref<9216xi8>) {
  %u = memref.cast %p : memref<4x8x64xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  %c0 = arith.constant 0 : index
  %stats = memref.view %blk[%c0][] : memref<9216xi8> to memref<64xf32>
  %su = memref.cast %stats : memref<64xf32> to memref<*xf32>
  call @printMemrefF32(%su) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %c0_ = arith.constant 0 : index
  %s = memref.alloc() : memref<4x8x64xf32>
  %mask = memref.alloc() : memref<8x64xi1>
  call @scores(%s) : (memref<4x8x64xf32>) -> ()
  call @causal(%mask) : (memref<8x64xi1>) -> ()

  %b1 = memref.alloc() : memref<9216xi8>
  %p1 = call @softmax(%s, %mask, %b1) : (memref<4x8x64xf32>, memref<8x64xi1>, memref<9216xi8>) -> memref<4x8x64xf32>
  call @print3(%p1, %b1) : (memref<4x8x64xf32>, memref<9216xi8>) -> ()

  %out = memref.alloc() : memref<4x8x64xf32>
  %b2 = memref.alloc() : memref<9216xi8>
  %p2 = call @output_argument(%s, %mask, %out, %b2) : (memref<4x8x64xf32>, memref<8x64xi1>, memref<4x8x64xf32>, memref<9216xi8>) -> memref<4x8x64xf32>
  call @print3(%p2, %b2) : (memref<4x8x64xf32>, memref<9216xi8>) -> ()
  %b3 = memref.alloc() : memref<9216xi8>
  %p3 = call @transposed(%s, %mask, %b3) : (memref<4x8x64xf32>, memref<8x64xi1>, memref<9216xi8>) -> memref<4x8x64xf32>
  call @print3(%p3, %b3) : (memref<4x8x64xf32>, memref<9216xi8>) -> ()
  %b4 = memref.alloc() : memref<9216xi8>
  %p4 = call @copy_apart(%s, %mask, %b4) : (memref<4x8x64xf32>, memref<8x64xi1>, memref<9216xi8>) -> memref<4x8x64xf32>
  call @print3(%p4, %b4) : (memref<4x8x64xf32>, memref<9216xi8>) -> ()
  // (It overwrites the scores with the copy's source: last.)
  %src = memref.alloc() : memref<4x8x64xf32>
  %half = arith.constant 0.5 : f32
  linalg.fill ins(%half : f32) outs(%src : memref<4x8x64xf32>)
  %s2 = memref.alloc() : memref<4x8x64xf32>
  memref.copy %s, %s2 : memref<4x8x64xf32> to memref<4x8x64xf32>
  %b5 = memref.alloc() : memref<9216xi8>
  %p5 = call @copy_into_scores(%s2, %mask, %src, %b5) : (memref<4x8x64xf32>, memref<8x64xi1>, memref<4x8x64xf32>, memref<9216xi8>) -> memref<4x8x64xf32>
  call @print3(%p5, %b5) : (memref<4x8x64xf32>, memref<9216xi8>) -> ()

  %x = memref.alloc() : memref<32x96xf32>
  %xs = memref.collapse_shape %x [[0, 1]] : memref<32x96xf32> into memref<3072xf32>
  %x3 = memref.expand_shape %xs [[0, 1, 2]] output_shape [4, 8, 96] : memref<3072xf32> into memref<4x8x96xf32>
  %xv = memref.subview %x3[0, 0, 0] [4, 8, 64] [1, 1, 1] : memref<4x8x96xf32> to memref<4x8x64xf32, strided<[768, 96, 1]>>
  %tmp = memref.alloc() : memref<4x8x64xf32>
  call @scores(%tmp) : (memref<4x8x64xf32>) -> ()
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%x : memref<32x96xf32>)
  memref.copy %tmp, %xv : memref<4x8x64xf32> to memref<4x8x64xf32, strided<[768, 96, 1]>>
  %b6 = memref.alloc() : memref<13312xi8>
  %y = call @layer_norm(%x, %b6) : (memref<32x96xf32>, memref<13312xi8>) -> memref<32x96xf32>
  %yu = memref.cast %y : memref<32x96xf32> to memref<*xf32>
  call @printMemrefF32(%yu) : (memref<*xf32>) -> ()
  %stats = memref.view %b6[%c0_][] : memref<13312xi8> to memref<96xf32>
  %su = memref.cast %stats : memref<96xf32> to memref<*xf32>
  call @printMemrefF32(%su) : (memref<*xf32>) -> ()

  %b8 = memref.alloc() : memref<13312xi8>
  %xh = memref.alloc() : memref<32x96xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<32x96xf32>) outs(%xh : memref<32x96xf32>) {
  ^bb0(%v: f32, %o: f32):
    %c = math.cos %v : f32
    linalg.yield %c : f32
  }
  %dx = call @two_sums(%y, %xh, %b8) : (memref<32x96xf32>, memref<32x96xf32>, memref<13312xi8>) -> memref<32x96xf32>
  %dxu = memref.cast %dx : memref<32x96xf32> to memref<*xf32>
  call @printMemrefF32(%dxu) : (memref<*xf32>) -> ()

  // 70000 rows of ones: each row of the quotient sums to one.
  %big = memref.alloc() : memref<70000x64xf32>
  linalg.fill ins(%one : f32) outs(%big : memref<70000x64xf32>)
  %b7 = memref.alloc() : memref<18200000xi8>
  %q = call @many_rows(%big, %b7) : (memref<70000x64xf32>, memref<18200000xi8>) -> memref<70000x64xf32>
  %total = memref.alloc() : memref<1xf32>
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%total : memref<1xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0)>], iterator_types = ["reduction", "reduction"]}
      ins(%q : memref<70000x64xf32>) outs(%total : memref<1xf32>) {
  ^bb0(%v: f32, %o: f32):
    %a = arith.addf %o, %v : f32
    linalg.yield %a : f32
  }
  %tu = memref.cast %total : memref<1xf32> to memref<*xf32>
  call @printMemrefF32(%tu) : (memref<*xf32>) -> ()

  // Cross-entropy's pick: logits 4 sin(...), targets 5r mod 64 but row 6's
  // 70 (out of range: recorded, its pick 0), the class table reversed.
  %cx = memref.alloc() : memref<4x8x64xf32>
  call @scores(%cx) : (memref<4x8x64xf32>) -> ()
  %logits = memref.collapse_shape %cx [[0, 1], [2]] : memref<4x8x64xf32> into memref<32x64xf32>
  %x16 = memref.subview %logits[0, 0] [16, 64] [1, 1] : memref<32x64xf32> to memref<16x64xf32, strided<[64, 1]>>
  %xc = memref.alloc() : memref<16x64xf32>
  memref.copy %x16, %xc : memref<16x64xf32, strided<[64, 1]>> to memref<16x64xf32>
  %t = memref.alloc() : memref<16xi64>
  %table = memref.alloc() : memref<64xi64>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      outs(%t : memref<16xi64>) {
  ^bb0(%o: i64):
    %r = linalg.index 0 : index
    %ri = arith.index_cast %r : index to i64
    %c5 = arith.constant 5 : i64
    %c64 = arith.constant 64 : i64
    %c6 = arith.constant 6 : i64
    %c70 = arith.constant 70 : i64
    %v = arith.muli %ri, %c5 : i64
    %m = arith.remsi %v, %c64 : i64
    %six = arith.cmpi eq, %ri, %c6 : i64
    %tv = arith.select %six, %c70, %m : i64
    linalg.yield %tv : i64
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      outs(%table : memref<64xi64>) {
  ^bb0(%o: i64):
    %r = linalg.index 0 : index
    %ri = arith.index_cast %r : index to i64
    %c63 = arith.constant 63 : i64
    %v = arith.subi %c63, %ri : i64
    linalg.yield %v : i64
  }
  %b9 = memref.alloc() : memref<256xi8>
  %picked = call @pick(%xc, %t, %table, %b9) : (memref<16x64xf32>, memref<16xi64>, memref<64xi64>, memref<256xi8>) -> memref<16xf32>
  %pu = memref.cast %picked : memref<16xf32> to memref<*xf32>
  call @printMemrefF32(%pu) : (memref<*xf32>) -> ()
  %c0p = arith.constant 0 : index
  %pstats = memref.view %b9[%c0p][] : memref<256xi8> to memref<32xf32>
  %psu = memref.cast %pstats : memref<32xf32> to memref<*xf32>
  call @printMemrefF32(%psu) : (memref<*xf32>) -> ()
  %rec = memref.get_global @index_record : memref<24xi8>
  %rec64 = memref.view %rec[%c0p][] : memref<24xi8> to memref<3xi64>
  %ru = memref.cast %rec64 : memref<3xi64> to memref<*xi64>
  call @printMemrefI64(%ru) : (memref<*xi64>) -> ()
  return
}
