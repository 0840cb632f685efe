// RUN: rankc-opt %s -rankc-cpu-math-approximations | FileCheck %s
// f32 erf and tanh become upstream's polynomial approximations (arith and
// math ops that vectorize with their loop), not libm calls; f64 stays.

// CHECK-LABEL: func.func @gelu_erf(
// CHECK-NOT: math.erf
// CHECK: math.fma
// CHECK: return
func.func @gelu_erf(%x: f32) -> f32 {
  %e = math.erf %x : f32
  return %e : f32
}

// CHECK-LABEL: func.func @tanh_vec(
// CHECK-NOT: math.tanh
// CHECK: arith.select
// CHECK: return
func.func @tanh_vec(%x: vector<8xf32>) -> vector<8xf32> {
  %t = math.tanh %x : vector<8xf32>
  return %t : vector<8xf32>
}

// CHECK-LABEL: func.func @erf_f64(
// CHECK: math.erf %{{.*}} : f64
func.func @erf_f64(%x: f64) -> f64 {
  %e = math.erf %x : f64
  return %e : f64
}
