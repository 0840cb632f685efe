// The values rankc-gpu-recompute-cheap-tensors leaves: attention's softmax
// as the exporter writes it (masked, scaled scores read by the row max
// through a keepdim expansion and by exp(x - max), whose sum and quotient
// read it in turn) compiled for this machine by upstream's passes and run
// (mlir-runner), before and after the pass: the same bits. After it the
// chain is three generics (max, sum, probabilities), each computing the
// masked scores from the scores; layer norm's backward (a generic of two
// results, split) two.
// REQUIRES: mlir-runner
// DEFINE: %{lower} = -one-shot-bufferize=bufferize-function-boundaries -convert-linalg-to-loops -convert-scf-to-cf -expand-strided-metadata -lower-affine -finalize-memref-to-llvm -convert-math-to-llvm -convert-arith-to-llvm -convert-cf-to-llvm -convert-func-to-llvm -convert-index-to-llvm -reconcile-unrealized-casts
// RUN: mlir-opt %s %{lower} | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | grep -v base@ > %t.ref
// RUN: rankc-opt %s -pass-pipeline='builtin.module(func.func(rankc-gpu-recompute-cheap-tensors))' | mlir-opt %{lower} | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | grep -v base@ > %t.out
// RUN: diff %t.ref %t.out
// RUN: FileCheck %s --check-prefix=VAL --input-file %t.out
// RUN: rankc-opt %s -pass-pipeline='builtin.module(func.func(rankc-gpu-recompute-cheap-tensors))' | FileCheck %s
// VAL: {{\[\[\[\[}}0],
// VAL-NEXT: 1.09375
// CHECK-LABEL: func.func @softmax(
// CHECK-COUNT-3: linalg.generic {{.*}} ins(%arg1, %arg0
// CHECK-NOT: linalg.generic
// CHECK: return
// CHECK-LABEL: func.func @lnb(
// CHECK-COUNT-2: linalg.generic {{.*}} ins(%arg
// CHECK-NOT: linalg.generic
// CHECK: return
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#m45 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#i5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#r5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @softmax(%s: tensor<4x4x4x64xf32>, %mask: tensor<4x64xi1>) -> (tensor<4x4x4x1xf32>, tensor<4x4x4x1xf32>, tensor<4x4x4x64xf32>) {
  %e = tensor.empty() : tensor<4x4x4x64xf32>
  %scale = arith.constant 0.125 : bf16
  %ninf = arith.constant 0xFF80 : bf16
  %m = linalg.generic {indexing_maps = [#m45, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%mask, %s : tensor<4x64xi1>, tensor<4x4x4x64xf32>) outs(%e : tensor<4x4x4x64xf32>) {
  ^bb0(%k: i1, %v: f32, %o: f32):
    %b = arith.truncf %v : f32 to bf16
    %x = arith.mulf %b, %scale : bf16
    %y = arith.select %k, %ninf, %x : bf16
    %w = arith.extf %y : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<4x4x4x64xf32>
  %ninf32 = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %r0 = tensor.empty() : tensor<4x4x4x1xf32>
  %init = linalg.fill ins(%ninf32 : f32) outs(%r0 : tensor<4x4x4x1xf32>) -> tensor<4x4x4x1xf32>
  %x5 = tensor.expand_shape %m [[0], [1], [2, 3], [4]] output_shape [4, 4, 4, 1, 64] : tensor<4x4x4x64xf32> into tensor<4x4x4x1x64xf32>
  %max = linalg.generic {indexing_maps = [#i5, #r5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x5 : tensor<4x4x4x1x64xf32>) outs(%init : tensor<4x4x4x1xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %o, %v : f32
    linalg.yield %r : f32
  } -> tensor<4x4x4x1xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%m, %max : tensor<4x4x4x64xf32>, tensor<4x4x4x1xf32>) outs(%e : tensor<4x4x4x64xf32>) {
  ^bb0(%v: f32, %t: f32, %o: f32):
    %d = arith.subf %v, %t : f32
    %x1 = math.exp %d : f32
    linalg.yield %x1 : f32
  } -> tensor<4x4x4x64xf32>
  %zinit = linalg.fill ins(%zero : f32) outs(%r0 : tensor<4x4x4x1xf32>) -> tensor<4x4x4x1xf32>
  %ex5 = tensor.expand_shape %ex [[0], [1], [2, 3], [4]] output_shape [4, 4, 4, 1, 64] : tensor<4x4x4x64xf32> into tensor<4x4x4x1x64xf32>
  %sum = linalg.generic {indexing_maps = [#i5, #r5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%ex5 : tensor<4x4x4x1x64xf32>) outs(%zinit : tensor<4x4x4x1xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.addf %o, %v : f32
    linalg.yield %r : f32
  } -> tensor<4x4x4x1xf32>
  %p = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%ex, %sum : tensor<4x4x4x64xf32>, tensor<4x4x4x1xf32>) outs(%e : tensor<4x4x4x64xf32>) {
  ^bb0(%v: f32, %t: f32, %o: f32):
    %d = arith.divf %v, %t : f32
    linalg.yield %d : f32
  } -> tensor<4x4x4x64xf32>
  return %max, %sum, %p : tensor<4x4x4x1xf32>, tensor<4x4x4x1xf32>, tensor<4x4x4x64xf32>
}


// Layer norm's backward as fusion leaves it: x_hat and dy * gamma yielded
// by one generic, read by a row reduction and the final op; split and
// recomputed in both.
#row2 = affine_map<(d0, d1) -> (d0, 0)>
#col2 = affine_map<(d0, d1) -> (d1)>
#red2 = affine_map<(d0, d1) -> (d0)>
func.func @lnb(%x: tensor<64x64xf32>, %dy: tensor<64x64xbf16>, %mean: tensor<64x1xf32>, %rstd: tensor<64x1xf32>, %g: tensor<64xf32>) -> (tensor<64xf32>, tensor<64x64xf32>) {
  %e = tensor.empty() : tensor<64x64xf32>
  %p:2 = linalg.generic {indexing_maps = [#id2, #id2, #row2, #row2, #col2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %dy, %mean, %rstd, %g : tensor<64x64xf32>, tensor<64x64xbf16>, tensor<64x1xf32>, tensor<64x1xf32>, tensor<64xf32>) outs(%e, %e : tensor<64x64xf32>, tensor<64x64xf32>) {
  ^bb0(%xv: f32, %dv: bf16, %m: f32, %r: f32, %gv: f32, %o1: f32, %o2: f32):
    %c = arith.subf %xv, %m : f32
    %xh = arith.mulf %c, %r : f32
    %dw = arith.extf %dv : bf16 to f32
    %dg = arith.mulf %dw, %gv : f32
    linalg.yield %xh, %dg : f32, f32
  } -> (tensor<64x64xf32>, tensor<64x64xf32>)
  %zero = arith.constant 0.0 : f32
  %i0 = tensor.empty() : tensor<64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%i0 : tensor<64xf32>) -> tensor<64xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #red2], iterator_types = ["parallel", "reduction"]}
      ins(%p#0, %p#1 : tensor<64x64xf32>, tensor<64x64xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %o, %m : f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
  %out = linalg.generic {indexing_maps = [#id2, #id2, #red2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p#1, %p#0, %s : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%b: f32, %a: f32, %t: f32, %o: f32):
    %m = arith.mulf %a, %t : f32
    %d = arith.subf %b, %m : f32
    linalg.yield %d : f32
  } -> tensor<64x64xf32>
  return %s, %out : tensor<64xf32>, tensor<64x64xf32>
}

/// sin(0.37 i + 0.11 j + phase) of a [64, 64] tensor.
func.func @pattern(%phase: f32) -> tensor<64x64xf32> {
  %e = tensor.empty() : tensor<64x64xf32>
  %t = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<64x64xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %jj = arith.index_cast %j : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %fj = arith.sitofp %jj : i32 to f32
    %a = arith.constant 0.37 : f32
    %b = arith.constant 0.11 : f32
    %x = arith.mulf %fi, %a : f32
    %y = arith.mulf %fj, %b : f32
    %z = arith.addf %x, %y : f32
    %w = arith.addf %z, %phase : f32
    %v = math.sin %w : f32
    linalg.yield %v : f32
  } -> tensor<64x64xf32>
  return %t : tensor<64x64xf32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %e = tensor.empty() : tensor<4x4x4x64xf32>
  %s = linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%e : tensor<4x4x4x64xf32>) {
  ^bb0(%o: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %c7 = arith.constant 7 : index
    %c5 = arith.constant 5 : index
    %c3 = arith.constant 3 : index
    %a = arith.muli %i0, %c7 : index
    %b = arith.muli %i1, %c5 : index
    %c = arith.muli %i2, %c3 : index
    %t0 = arith.addi %a, %b : index
    %t1 = arith.addi %t0, %c : index
    %t2 = arith.addi %t1, %i3 : index
    %n = arith.index_cast %t2 : index to i32
    %f = arith.sitofp %n : i32 to f32
    %k = arith.constant 0.9 : f32
    %g = arith.mulf %f, %k : f32
    %r = math.sin %g : f32
    %w = arith.constant 9.0 : f32
    %v = arith.mulf %r, %w : f32
    linalg.yield %v : f32
  } -> tensor<4x4x4x64xf32>
  %em = tensor.empty() : tensor<4x64xi1>
  %mask = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%em : tensor<4x64xi1>) {
  ^bb0(%o: i1):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c16 = arith.constant 16 : index
    %i16 = arith.muli %i, %c16 : index
    %gt = arith.cmpi ugt, %j, %i16 : index
    linalg.yield %gt : i1
  } -> tensor<4x64xi1>
  %max, %sum, %p = call @softmax(%s, %mask) : (tensor<4x4x4x64xf32>, tensor<4x64xi1>) -> (tensor<4x4x4x1xf32>, tensor<4x4x4x1xf32>, tensor<4x4x4x64xf32>)
  %u0 = tensor.cast %max : tensor<4x4x4x1xf32> to tensor<*xf32>
  %u1 = tensor.cast %sum : tensor<4x4x4x1xf32> to tensor<*xf32>
  %u2 = tensor.cast %p : tensor<4x4x4x64xf32> to tensor<*xf32>
  call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()
  %ph0 = arith.constant 0.0 : f32
  %ph1 = arith.constant 1.3 : f32
  %x = call @pattern(%ph0) : (f32) -> tensor<64x64xf32>
  %dyf = call @pattern(%ph1) : (f32) -> tensor<64x64xf32>
  %eb = tensor.empty() : tensor<64x64xbf16>
  %dy = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%dyf : tensor<64x64xf32>) outs(%eb : tensor<64x64xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64x64xbf16>
  %sl = tensor.extract_slice %x[0, 0] [64, 1] [1, 1] : tensor<64x64xf32> to tensor<64x1xf32>
  %sr = tensor.extract_slice %dyf[0, 3] [64, 1] [1, 1] : tensor<64x64xf32> to tensor<64x1xf32>
  %gm = tensor.extract_slice %x[5, 0] [1, 64] [1, 1] : tensor<64x64xf32> to tensor<64xf32>
  %ls, %lo = call @lnb(%x, %dy, %sl, %sr, %gm) : (tensor<64x64xf32>, tensor<64x64xbf16>, tensor<64x1xf32>, tensor<64x1xf32>, tensor<64xf32>) -> (tensor<64xf32>, tensor<64x64xf32>)
  %u3 = tensor.cast %ls : tensor<64xf32> to tensor<*xf32>
  %u4 = tensor.cast %lo : tensor<64x64xf32> to tensor<*xf32>
  call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%u4) : (tensor<*xf32>) -> ()
  return
}
