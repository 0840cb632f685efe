// RUN: rankc-opt %s -pass-pipeline='builtin.module(func.func(rankc-prune-dead-checks))' | FileCheck %s

func.func private @rankc_rt_index_error(i32, i64, i64)

#col = affine_map<(d0, d1) -> (d0, 0)>
#id = affine_map<(d0, d1) -> (d0, d1)>

// Cross-entropy's one-hot mask of [tokens, classes], left behind by fusion
// (nothing reads it) with its take's check: only the check is left, over
// the tokens (the classes' loop only repeated it), without the logits
// input and without a result. The same check fused a second time into a
// result-less generic goes too.
// CHECK-LABEL: func.func @one_hot(
// CHECK-SAME: %[[T:.*]]: tensor<4x1xi64>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel"]} ins(%[[T]] : tensor<4x1xi64>) {
// CHECK-NEXT: ^bb0(%[[I:.*]]: i64):
// CHECK: arith.cmpi sge, %[[I]], %{{.*}} : i64
// CHECK: scf.if
// CHECK-NEXT: func.call @rankc_rt_index_error(
// CHECK-NOT: linalg.index
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @one_hot(%t: tensor<4x1xi64>, %logits: tensor<4x8xf32>) {
  %c8 = arith.constant 8 : i64
  %c0 = arith.constant 0 : i64
  %c2 = arith.constant 2 : i32
  %e = tensor.empty() : tensor<4x8xf32>
  %m = linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<4x1xi64>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: i64, %o: f32):
    %bad = arith.cmpi sge, %i, %c8 : i64
    scf.if %bad {
      func.call @rankc_rt_index_error(%c2, %i, %c8) : (i32, i64, i64) -> ()
    }
    %j = linalg.index 1 : index
    %j64 = arith.index_cast %j : index to i64
    %hit = arith.cmpi eq, %j64, %i : i64
    %f = arith.uitofp %hit : i1 to f32
    linalg.yield %f : f32
  } -> tensor<4x8xf32>
  linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t, %logits : tensor<4x1xi64>, tensor<4x8xf32>) {
  ^bb0(%i: i64, %l: f32):
    %bad = arith.cmpi sge, %i, %c8 : i64
    scf.if %bad {
      func.call @rankc_rt_index_error(%c2, %i, %c8) : (i32, i64, i64) -> ()
    }
    linalg.yield
  }
  return
}

// A check that reads linalg.index keeps that loop, sized by an input the
// check does not read (linalg infers loop sizes from operands); with only
// the output to size it, the generic stays as it is (in @kept).
// CHECK-LABEL: func.func @index_read(
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<4x1xi64>, tensor<4x8xf32>) {
// CHECK: linalg.index 1 : index
func.func @index_read(%t: tensor<4x1xi64>, %w: tensor<4x8xf32>) {
  %c2 = arith.constant 2 : i32
  %e = tensor.empty() : tensor<4x8xf32>
  %m = linalg.generic {indexing_maps = [#col, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t, %w : tensor<4x1xi64>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: i64, %x: f32, %o: f32):
    %j = linalg.index 1 : index
    %j64 = arith.index_cast %j : index to i64
    %bad = arith.cmpi sge, %i, %j64 : i64
    scf.if %bad {
      func.call @rankc_rt_index_error(%c2, %i, %j64) : (i32, i64, i64) -> ()
    }
    %f = arith.uitofp %bad : i1 to f32
    %s = arith.addf %f, %x : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return
}

// Kept as they are: a generic whose result is read, and a dead one with an
// effect other than a check (a call of something else).
func.func private @other(i64)
// CHECK-LABEL: func.func @kept(
// CHECK: %[[R:.*]] = linalg.generic
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: call @other
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: linalg.index 1
// CHECK: return %[[R]]
func.func @kept(%t: tensor<4x1xi64>) -> tensor<4x8xf32> {
  %c8 = arith.constant 8 : i64
  %c2 = arith.constant 2 : i32
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<4x1xi64>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: i64, %o: f32):
    %bad = arith.cmpi sge, %i, %c8 : i64
    scf.if %bad {
      func.call @rankc_rt_index_error(%c2, %i, %c8) : (i32, i64, i64) -> ()
    }
    %f = arith.uitofp %bad : i1 to f32
    linalg.yield %f : f32
  } -> tensor<4x8xf32>
  %d = linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<4x1xi64>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: i64, %o: f32):
    func.call @other(%i) : (i64) -> ()
    %f = arith.uitofp %i : i64 to f32
    linalg.yield %f : f32
  } -> tensor<4x8xf32>
  %i = linalg.generic {indexing_maps = [#col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<4x1xi64>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: i64, %o: f32):
    %j = linalg.index 1 : index
    %j64 = arith.index_cast %j : index to i64
    %bad = arith.cmpi sge, %i, %j64 : i64
    scf.if %bad {
      func.call @rankc_rt_index_error(%c2, %i, %j64) : (i32, i64, i64) -> ()
    }
    %f = arith.uitofp %bad : i1 to f32
    linalg.yield %f : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
