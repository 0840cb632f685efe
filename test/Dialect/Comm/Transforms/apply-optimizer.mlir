// RUN: rankc-opt %s -split-input-file -comm-apply-optimizer | FileCheck %s
// Applying it twice changes nothing (a printed module is accepted back).
// RUN: rankc-opt %s -split-input-file -comm-apply-optimizer -comm-apply-optimizer | FileCheck %s

// SGD with Nesterov momentum and weight decay (torch.optim.SGD's order of
// operations): the step count and the momentum buffer become optimizer
// state, the new parameter a result named after it.
// CHECK-LABEL: func.func @all(
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4xf32> {comm.param = "w"}, %[[X:[a-z0-9]+]]: tensor<4xf32> {comm.input = "x"},
// CHECK-SAME: %[[STEP:[a-z0-9]+]]: tensor<i64> {comm.optimizer_state = "optimizer@step"},
// CHECK-SAME: %[[BUF:[a-z0-9]+]]: tensor<4xf32> {comm.optimizer_state = "w@momentum_buffer"})
// CHECK-SAME: tensor<4xf32> {comm.outputs = ["w"], comm.update_of = "w"}, tensor<4xf32> {comm.optimizer_state = "w@momentum_buffer"}, tensor<i64> {comm.optimizer_state = "optimizer@step"})
// CHECK: %[[NEXT:.*]] = linalg.generic {{.*}} ins(%[[STEP]] : tensor<i64>)
// CHECK: arith.addi
// CHECK: %[[NEW:.*]]:2 = linalg.generic {{.*}} ins(%[[W]], %[[X]], %[[BUF]], %[[STEP]] :
// CHECK-NEXT: ^bb0(%[[P:.*]]: f32, %[[G:.*]]: f32, %[[B:.*]]: f32, %[[T:.*]]: i64,
// d_p = g + wd * p
// CHECK: %[[WD:.*]] = arith.constant 0.00999999977 : f32
// CHECK: %[[WP:.*]] = arith.mulf %[[WD]], %[[P]]
// CHECK: %[[DP:.*]] = arith.addf %[[G]], %[[WP]]
// The buffer is the first gradient on the first step, then buf * m + (1 - d) * d_p.
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[T]], %{{.*}} : i64
// CHECK: %[[KEPT:.*]] = arith.mulf %[[B]], %{{.*}}
// CHECK: %[[LATER:.*]] = arith.addf %[[KEPT]],
// CHECK: %[[NB:.*]] = arith.select %[[FIRST]], %[[DP]], %[[LATER]]
// Nesterov: d_p + m * buf; then p - lr * d_p.
// CHECK: %[[MB:.*]] = arith.mulf %{{.*}}, %[[NB]]
// CHECK: %[[NDP:.*]] = arith.addf %[[DP]], %[[MB]]
// CHECK: %[[LR:.*]] = arith.constant -1.000000e-01 : f32
// CHECK: %[[STEPP:.*]] = arith.mulf %[[LR]], %[[NDP]]
// CHECK: %[[NP:.*]] = arith.addf %[[P]], %[[STEPP]]
// CHECK: linalg.yield %[[NP]], %[[NB]]
// CHECK: return %[[X]], %[[X]], %[[NEW]]#0, %[[NEW]]#1, %[[NEXT]]
#id = affine_map<(d0) -> (d0)>
module attributes {comm.world_size = 1 : i64, comm.data_parallel = #comm.data_parallel<bucket_cap_mb = 25.0 : f64, first_bucket_cap_mb = 1.0 : f64, ignore = [], order = "ready", optimizer = <kind = sgd, lr = 0.1 : f64, weight_decay = 0.01 : f64, momentum = 0.9 : f64, dampening = 0.0 : f64, nesterov = true>>} {
  func.func @all(%w: tensor<4xf32> {comm.param = "w"}, %x: tensor<4xf32> {comm.input = "x"})
      -> (tensor<4xf32> {comm.outputs = ["loss"]}, tensor<4xf32> {comm.grad_of = "w", comm.outputs = ["g"]})
      attributes {comm.ranks = "all"} {
    return %x, %x : tensor<4xf32>, tensor<4xf32>
  }
}

// -----

// AdamW on an f16 parameter: computed in f32, rounded once; the bias
// corrections in f64 from the new step count, as Python computes them.
// CHECK-LABEL: func.func @all(
// CHECK-SAME: {comm.optimizer_state = "w@exp_avg"}, %{{.*}}: tensor<4xf16> {comm.optimizer_state = "w@exp_avg_sq"})
// CHECK: %[[S:.*]]:3 = linalg.generic
// CHECK: %[[T1:.*]] = arith.addi
// CHECK: %[[TF:.*]] = arith.sitofp %[[T1]] : i64 to f64
// CHECK: math.powf %{{.*}}, %[[TF]] : f64
// CHECK: math.powf
// CHECK: %[[SS:.*]] = arith.divf
// CHECK: %[[BC2:.*]] = math.sqrt %{{.*}} : f64
// CHECK: linalg.yield %[[T1]], %[[SS]], %[[BC2]] : i64, f64, f64
// CHECK: linalg.generic {{.*}} ins({{.*}}, %[[S]]#1, %[[S]]#2 : {{.*}}, tensor<f64>, tensor<f64>)
// CHECK: %[[P:.*]] = arith.extf %{{.*}} : f16 to f32
// Decoupled weight decay first: p * (1 - lr * wd).
// CHECK: %[[DECAY:.*]] = arith.constant 9.990000e-01 : f32
// CHECK: %[[P0:.*]] = arith.mulf %[[P]], %[[DECAY]]
// CHECK: %[[M:.*]] = arith.addf
// CHECK: %[[V:.*]] = arith.addf
// CHECK: %[[ROOT:.*]] = math.sqrt %[[V]] : f32
// CHECK: %[[DEN:.*]] = arith.divf %[[ROOT]],
// CHECK: %[[DENOM:.*]] = arith.addf %[[DEN]], %{{.*}}
// CHECK: %[[NEG:.*]] = arith.negf
// CHECK: %[[NUM:.*]] = arith.mulf %[[NEG]], %[[M]]
// CHECK: %[[DELTA:.*]] = arith.divf %[[NUM]], %[[DENOM]]
// CHECK: %[[NP:.*]] = arith.addf %[[P0]], %[[DELTA]]
// CHECK: %[[R:.*]] = arith.truncf %[[NP]] : f32 to f16
// CHECK: linalg.yield %[[R]],
module attributes {comm.world_size = 1 : i64, comm.data_parallel = #comm.data_parallel<bucket_cap_mb = 25.0 : f64, first_bucket_cap_mb = 1.0 : f64, ignore = [], order = "ready", optimizer = <kind = adamw, lr = 0.1 : f64, weight_decay = 0.01 : f64, betas = [0.9 : f64, 0.999 : f64], eps = 1.0e-08 : f64>>} {
  func.func @all(%w: tensor<4xf16> {comm.param = "w"}, %x: tensor<4xf32> {comm.input = "x"})
      -> (tensor<4xf32> {comm.outputs = ["loss"]}, tensor<4xf16> {comm.grad_of = "w", comm.outputs = ["g"]})
      attributes {comm.ranks = "all"} {
    return %x, %w : tensor<4xf32>, tensor<4xf16>
  }
}

// -----

// Plain SGD keeps no buffer; a program without gradients is left alone.
// CHECK-LABEL: func.func @rank0(
// CHECK-SAME: %{{.*}}: tensor<i64> {comm.optimizer_state = "optimizer@step"})
// CHECK-NOT: momentum_buffer
// CHECK: arith.constant -5.000000e-01 : f32
// CHECK-LABEL: func.func @rank1(
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<2xf32> {comm.input = "x"}) -> (tensor<2xf32> {comm.outputs = ["y"]})
module attributes {comm.world_size = 2 : i64, comm.data_parallel = #comm.data_parallel<bucket_cap_mb = 25.0 : f64, first_bucket_cap_mb = 1.0 : f64, ignore = [], order = "ready", optimizer = <kind = sgd, lr = 0.5 : f64, weight_decay = 0.0 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, nesterov = false>>} {
  func.func @rank0(%w: tensor<2xf32> {comm.param = "w"}) -> (tensor<2xf32> {comm.grad_of = "w", comm.outputs = ["g"]})
      attributes {comm.ranks = array<i64: 0>} {
    return %w : tensor<2xf32>
  }
  func.func @rank1(%x: tensor<2xf32> {comm.input = "x"}) -> (tensor<2xf32> {comm.outputs = ["y"]})
      attributes {comm.ranks = array<i64: 1>} {
    return %x : tensor<2xf32>
  }
}
