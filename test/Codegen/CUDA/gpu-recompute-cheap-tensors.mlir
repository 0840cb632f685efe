// RUN: rankc-opt %s -pass-pipeline='builtin.module(func.func(rankc-gpu-recompute-cheap-tensors))' | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>
#red = affine_map<(d0, d1) -> (d0)>
#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>

// log_softmax over bf16 logits as an autocast step computes it: the f32
// tensors `x - max` (read by the sum of exponentials and by the next) and
// `x - max - log(sum)` (read by the target's gather and by the gradient),
// each made from a bf16 logit and values per row. Both are computed in
// their readers: no generic yields an f32 [4, 64] tensor any more but the
// gradient, which the function returns; each reader reads the bf16 logits.
// CHECK-LABEL: func.func @log_softmax(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x64xbf16>
// CHECK: %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]], %{{.*}} : tensor<4x64xbf16>, tensor<4x1xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]], {{.*}}outs(%{{.*}} : tensor<4xf32>)
// CHECK: math.log
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[X]], {{.*}}outs(%{{.*}} : tensor<4x64xf32>)
// CHECK: math.log
// CHECK-NOT: linalg.generic
// CHECK: return %{{.*}}, %[[G]]
func.func @log_softmax(%x: tensor<4x64xbf16>, %mx: tensor<4x1xf32>, %init: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x64xf32>) {
  %e = tensor.empty() : tensor<4x64xf32>
  %a = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mx : tensor<4x64xbf16>, tensor<4x1xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: bf16, %m: f32, %o: f32):
    %w = arith.extf %v : bf16 to f32
    %d = arith.subf %w, %m : f32
    linalg.yield %d : f32
  } -> tensor<4x64xf32>
  %s = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x64xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %x1 = math.exp %v : f32
    %r = arith.addf %o, %x1 : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %s2 = tensor.expand_shape %s [[0, 1]] output_shape [4, 1] : tensor<4xf32> into tensor<4x1xf32>
  %b = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %s2 : tensor<4x64xf32>, tensor<4x1xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: f32, %t: f32, %o: f32):
    %l = math.log %t : f32
    %d = arith.subf %v, %l : f32
    linalg.yield %d : f32
  } -> tensor<4x64xf32>
  %picked = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
      ins(%b : tensor<4x64xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.addf %o, %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %grad = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %x1 = math.exp %v : f32
    linalg.yield %x1 : f32
  } -> tensor<4x64xf32>
  return %picked, %grad : tensor<4xf32>, tensor<4x64xf32>
}

// Kept: a producer whose input is as large as its result but read
// transposed (its readers would read it across rows), one a GEMM reads
// (cuBLASLt reads operands from memory), one that five ops read, and one
// the function returns.
// CHECK-LABEL: func.func @kept(
// CHECK: %[[SAME:.*]] = linalg.generic {{.*}} ins(%arg4 : tensor<64x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[SAME]] : tensor<4x64xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[SAME]] : tensor<4x64xf32>)
// CHECK-COUNT-3: linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<4x64xbf16>, tensor<4x1xf32>) outs(%{{.*}} : tensor<4x64xf32>)
// CHECK: return
#tr = affine_map<(d0, d1) -> (d1, d0)>
func.func @kept(%x: tensor<4x64xbf16>, %mx: tensor<4x1xf32>, %y: tensor<4x64xf32>, %w: tensor<64x64xf32>, %yt: tensor<64x4xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>) {
  %e = tensor.empty() : tensor<4x64xf32>
  %same = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%yt : tensor<64x4xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %x1 = math.exp %v : f32
    linalg.yield %x1 : f32
  } -> tensor<4x64xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%same : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %x1 = math.log %v : f32
    linalg.yield %x1 : f32
  } -> tensor<4x64xf32>
  %r2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%same : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %x1 = math.sqrt %v : f32
    linalg.yield %x1 : f32
  } -> tensor<4x64xf32>
  %gemmIn = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mx : tensor<4x64xbf16>, tensor<4x1xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: bf16, %m: f32, %o: f32):
    %wv = arith.extf %v : bf16 to f32
    %d = arith.subf %wv, %m : f32
    linalg.yield %d : f32
  } -> tensor<4x64xf32>
  %mm = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%gemmIn, %w : tensor<4x64xf32>, tensor<64x64xf32>) outs(%y : tensor<4x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x64xf32>
  %five = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mx : tensor<4x64xbf16>, tensor<4x1xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: bf16, %m: f32, %o: f32):
    %wv = arith.extf %v : bf16 to f32
    %d = arith.mulf %wv, %m : f32
    linalg.yield %d : f32
  } -> tensor<4x64xf32>
  %f1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%five : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %x1 = math.exp %v : f32
    linalg.yield %x1 : f32
  } -> tensor<4x64xf32>
  %f2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%five : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %x1 = math.log %v : f32
    linalg.yield %x1 : f32
  } -> tensor<4x64xf32>
  %f3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%five : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %x1 = math.sqrt %v : f32
    linalg.yield %x1 : f32
  } -> tensor<4x64xf32>
  %f4 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%five : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %x1 = math.sin %v : f32
    linalg.yield %x1 : f32
  } -> tensor<4x64xf32>
  %f5 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%five : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %x1 = math.cos %v : f32
    linalg.yield %x1 : f32
  } -> tensor<4x64xf32>
  %ret = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mx : tensor<4x64xbf16>, tensor<4x1xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: bf16, %m: f32, %o: f32):
    %wv = arith.extf %v : bf16 to f32
    %d = arith.addf %wv, %m : f32
    linalg.yield %d : f32
  } -> tensor<4x64xf32>
  %r3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%ret : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %x1 = math.exp %v : f32
    linalg.yield %x1 : f32
  } -> tensor<4x64xf32>
  return %r1, %r2, %mm, %f1, %f2, %f3, %f4, %f5, %ret, %r3 : tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>
}

// Attention's softmax as rankc-gpu-collapse-dims leaves it: exp(x - max)
// over bf16 scores, its sum read through a collapse of the rows (the
// reduction's loops joined) and the division read directly. The
// exponentials are computed in both: in the sum collapsed the same way
// (the [..., 1] maxima read without their unit dimension), so the f32
// tensor is never written.
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<2x2x4x64xbf16>, %[[M:[a-z0-9]+]]: tensor<2x2x4x1xf32>
// CHECK-DAG: %[[SC:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0, 1, 2], [3]] : tensor<2x2x4x64xbf16> into tensor<16x64xbf16>
// CHECK-DAG: %[[MC:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2]] : tensor<2x2x4xf32> into tensor<16xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[SC]], %[[MC]] : tensor<16x64xbf16>, tensor<16xf32>) outs(%{{.*}} : tensor<16xf32>)
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[S]], %{{.*}}, %{{.*}} : tensor<2x2x4x64xbf16>, tensor<2x2x4xf32>, tensor<2x2x4x1xf32>) outs(%{{.*}} : tensor<2x2x4x64xbf16>)
// CHECK: math.exp
// CHECK: arith.divf
// CHECK-NOT: linalg.generic
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
func.func @softmax(%s: tensor<2x2x4x64xbf16>, %mx: tensor<2x2x4x1xf32>, %init: tensor<16xf32>) -> tensor<2x2x4x64xbf16> {
  %e = tensor.empty() : tensor<2x2x4x64xf32>
  %x = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %mx : tensor<2x2x4x64xbf16>, tensor<2x2x4x1xf32>) outs(%e : tensor<2x2x4x64xf32>) {
  ^bb0(%v: bf16, %m: f32, %o: f32):
    %w = arith.extf %v : bf16 to f32
    %d = arith.subf %w, %m : f32
    %x1 = math.exp %d : f32
    linalg.yield %x1 : f32
  } -> tensor<2x2x4x64xf32>
  %rows = tensor.collapse_shape %x [[0, 1, 2], [3]] : tensor<2x2x4x64xf32> into tensor<16x64xf32>
  %sum = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
      ins(%rows : tensor<16x64xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.addf %o, %v : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %sum4 = tensor.expand_shape %sum [[0, 1, 2, 3]] output_shape [2, 2, 4, 1] : tensor<16xf32> into tensor<2x2x4x1xf32>
  %eb = tensor.empty() : tensor<2x2x4x64xbf16>
  %p = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %sum4 : tensor<2x2x4x64xf32>, tensor<2x2x4x1xf32>) outs(%eb : tensor<2x2x4x64xbf16>) {
  ^bb0(%v: f32, %t: f32, %o: bf16):
    %d = arith.divf %v, %t : f32
    %b = arith.truncf %d : f32 to bf16
    linalg.yield %b : bf16
  } -> tensor<2x2x4x64xbf16>
  return %p : tensor<2x2x4x64xbf16>
}

// Kept: a reader that reads each element over a loop of its own (here 8
// times, a contraction kept for the kernel generator would be the same)
// would compute it 8 times over.
// CHECK-LABEL: func.func @kept_broadcast_reader(
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<4x64xbf16>, tensor<4x1xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[W]] : tensor<4x64xf32>)
#b3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#o3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @kept_broadcast_reader(%x: tensor<4x64xbf16>, %mx: tensor<4x1xf32>) -> tensor<4x64x8xf32> {
  %e = tensor.empty() : tensor<4x64xf32>
  %w = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mx : tensor<4x64xbf16>, tensor<4x1xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: bf16, %m: f32, %o: f32):
    %wv = arith.extf %v : bf16 to f32
    %d = arith.subf %wv, %m : f32
    %x1 = math.exp %d : f32
    linalg.yield %x1 : f32
  } -> tensor<4x64xf32>
  %e3 = tensor.empty() : tensor<4x64x8xf32>
  %r = linalg.generic {indexing_maps = [#b3, #o3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w : tensor<4x64xf32>) outs(%e3 : tensor<4x64x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = math.sqrt %v : f32
    linalg.yield %s : f32
  } -> tensor<4x64x8xf32>
  return %r : tensor<4x64x8xf32>
}

// Made from as many bytes as it holds, read as it is written: attention's
// masked, scaled scores (f32 from the f32 scores and a [64, 64] mask), read
// by the row maximum through an expansion that only adds the keepdim unit
// dimension, and by exp(x - max). Both compute them from the scores: each
// reads as many bytes as before, and the producer's kernel (a read and a
// write of the scores) goes. The maximum reads the scores without the unit
// dimension (its d3, of extent 1).
// CHECK-LABEL: func.func @same_layout(
// CHECK-SAME: %[[SC:[a-z0-9]+]]: tensor<2x3x64x64xf32>, %[[MASK:[a-z0-9]+]]: tensor<64x64xi1>
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[MASK]], %[[SC]] : tensor<64x64xi1>, tensor<2x3x64x64xf32>) outs(%{{.*}} : tensor<2x3x64x1xf32>)
// CHECK: arith.select
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}} ins(%[[MASK]], %[[SC]], %[[MAX]] : tensor<64x64xi1>, tensor<2x3x64x64xf32>, tensor<2x3x64x1xf32>)
// CHECK: arith.select
// CHECK: math.exp
// CHECK-NOT: linalg.generic
#m45 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#i5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#r5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
func.func @same_layout(%s: tensor<2x3x64x64xf32>, %mask: tensor<64x64xi1>, %init: tensor<2x3x64x1xf32>) -> (tensor<2x3x64x1xf32>, tensor<2x3x64x64xf32>) {
  %e = tensor.empty() : tensor<2x3x64x64xf32>
  %scale = arith.constant 0.125 : bf16
  %ninf = arith.constant 0xFF80 : bf16
  %m = linalg.generic {indexing_maps = [#m45, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%mask, %s : tensor<64x64xi1>, tensor<2x3x64x64xf32>) outs(%e : tensor<2x3x64x64xf32>) {
  ^bb0(%k: i1, %v: f32, %o: f32):
    %b = arith.truncf %v : f32 to bf16
    %x = arith.mulf %b, %scale : bf16
    %y = arith.select %k, %ninf, %x : bf16
    %w = arith.extf %y : bf16 to f32
    linalg.yield %w : f32
  } -> tensor<2x3x64x64xf32>
  %x5 = tensor.expand_shape %m [[0], [1], [2, 3], [4]] output_shape [2, 3, 64, 1, 64] : tensor<2x3x64x64xf32> into tensor<2x3x64x1x64xf32>
  %max = linalg.generic {indexing_maps = [#i5, #r5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%x5 : tensor<2x3x64x1x64xf32>) outs(%init : tensor<2x3x64x1xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %o, %v : f32
    linalg.yield %r : f32
  } -> tensor<2x3x64x1xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%m, %max : tensor<2x3x64x64xf32>, tensor<2x3x64x1xf32>) outs(%e : tensor<2x3x64x64xf32>) {
  ^bb0(%v: f32, %t: f32, %o: f32):
    %d = arith.subf %v, %t : f32
    %x1 = math.exp %d : f32
    linalg.yield %x1 : f32
  } -> tensor<2x3x64x64xf32>
  return %max, %ex : tensor<2x3x64x1xf32>, tensor<2x3x64x64xf32>
}

// Kept: made from more bytes than it holds (an f32 tensor rounded to bf16
// for two readers: each would read twice the bytes).
// CHECK-LABEL: func.func @kept_wider_input(
// CHECK: %[[B:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<4x64xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[B]] : tensor<4x64xbf16>)
// CHECK: linalg.generic {{.*}} ins(%[[B]] : tensor<4x64xbf16>)
func.func @kept_wider_input(%x: tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4x64xf32>) {
  %eb = tensor.empty() : tensor<4x64xbf16>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x64xf32>) outs(%eb : tensor<4x64xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x64xbf16>
  %e = tensor.empty() : tensor<4x64xf32>
  %r1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<4x64xbf16>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %w = arith.extf %v : bf16 to f32
    %x1 = math.exp %w : f32
    linalg.yield %x1 : f32
  } -> tensor<4x64xf32>
  %r2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<4x64xbf16>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %w = arith.extf %v : bf16 to f32
    %x1 = math.log %w : f32
    linalg.yield %x1 : f32
  } -> tensor<4x64xf32>
  return %r1, %r2 : tensor<4x64xf32>, tensor<4x64xf32>
}

// A generic of several results, each cheap on its own: layer norm's
// backward as fusion leaves it, x_hat = (x - mean) * rstd and dy * gamma
// yielded together and read by a row reduction and the final elementwise
// op. Split into one copy per result, each with the inputs it needs, and
// both recomputed in both readers: no generic yields two [64, 64] tensors.
// CHECK-LABEL: func.func @split(
// CHECK-NOT: -> (tensor<64x64xf32>, tensor<64x64xf32>)
// CHECK: %[[S:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0, %arg2, %arg3, %arg1, %arg4 : tensor<64x64xf32>, tensor<64x1xf32>, tensor<64x1xf32>, tensor<64x64xbf16>, tensor<64xf32>)
// CHECK: linalg.generic {{.*}} ins(%arg1, %arg4, %arg0, %arg2, %arg3, %[[S]] :
// CHECK-NOT: linalg.generic
#col = affine_map<(d0, d1) -> (d1)>
func.func @split(%x: tensor<64x64xf32>, %dy: tensor<64x64xbf16>, %mean: tensor<64x1xf32>, %rstd: tensor<64x1xf32>, %g: tensor<64xf32>, %init: tensor<64xf32>) -> (tensor<64xf32>, tensor<64x64xf32>) {
  %e = tensor.empty() : tensor<64x64xf32>
  %p:2 = linalg.generic {indexing_maps = [#id, #id, #row, #row, #col, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %dy, %mean, %rstd, %g : tensor<64x64xf32>, tensor<64x64xbf16>, tensor<64x1xf32>, tensor<64x1xf32>, tensor<64xf32>) outs(%e, %e : tensor<64x64xf32>, tensor<64x64xf32>) {
  ^bb0(%xv: f32, %dv: bf16, %m: f32, %r: f32, %gv: f32, %o1: f32, %o2: f32):
    %c = arith.subf %xv, %m : f32
    %xh = arith.mulf %c, %r : f32
    %dw = arith.extf %dv : bf16 to f32
    %dg = arith.mulf %dw, %gv : f32
    linalg.yield %xh, %dg : f32, f32
  } -> (tensor<64x64xf32>, tensor<64x64xf32>)
  %s = linalg.generic {indexing_maps = [#id, #id, #red], iterator_types = ["parallel", "reduction"]}
      ins(%p#0, %p#1 : tensor<64x64xf32>, tensor<64x64xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %t = arith.addf %o, %m : f32
    linalg.yield %t : f32
  } -> tensor<64xf32>
  %out = linalg.generic {indexing_maps = [#id, #id, #red, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p#1, %p#0, %s : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%b: f32, %a: f32, %t: f32, %o: f32):
    %m = arith.mulf %a, %t : f32
    %d = arith.subf %b, %m : f32
    linalg.yield %d : f32
  } -> tensor<64x64xf32>
  return %s, %out : tensor<64xf32>, tensor<64x64xf32>
}

// Kept whole: one of its results is read by a GEMM (cuBLASLt reads it from
// memory), so the copies would read x twice.
// CHECK-LABEL: func.func @split_kept(
// CHECK: %{{.*}}:2 = linalg.generic
// CHECK: } -> (tensor<64x64xf32>, tensor<64x64xf32>)
func.func @split_kept(%x: tensor<64x64xf32>, %dy: tensor<64x64xbf16>, %mean: tensor<64x1xf32>, %rstd: tensor<64x1xf32>, %g: tensor<64xf32>, %w: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %e = tensor.empty() : tensor<64x64xf32>
  %p:2 = linalg.generic {indexing_maps = [#id, #id, #row, #row, #col, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %dy, %mean, %rstd, %g : tensor<64x64xf32>, tensor<64x64xbf16>, tensor<64x1xf32>, tensor<64x1xf32>, tensor<64xf32>) outs(%e, %e : tensor<64x64xf32>, tensor<64x64xf32>) {
  ^bb0(%xv: f32, %dv: bf16, %m: f32, %r: f32, %gv: f32, %o1: f32, %o2: f32):
    %c = arith.subf %xv, %m : f32
    %xh = arith.mulf %c, %r : f32
    %dw = arith.extf %dv : bf16 to f32
    %dg = arith.mulf %dw, %gv : f32
    linalg.yield %xh, %dg : f32, f32
  } -> (tensor<64x64xf32>, tensor<64x64xf32>)
  %z = arith.constant 0.0 : f32
  %acc = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %mm = linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%p#0, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%acc : tensor<64x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %out = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p#1 : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%b: f32, %o: f32):
    %d = math.exp %b : f32
    linalg.yield %d : f32
  } -> tensor<64x64xf32>
  return %mm, %out : tensor<64x64xf32>, tensor<64x64xf32>
}
