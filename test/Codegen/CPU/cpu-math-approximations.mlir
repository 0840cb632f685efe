// RUN: rankc-opt %s -rankc-cpu-math-approximations | FileCheck %s
// f32 erf becomes rankc's piecewise polynomials (arith and math.fma ops
// that vectorize with their loop, not libm calls); tanh and f64 stay.
// (Their accuracy, < 1 ulp, is test/E2E/math-accuracy.test's.)

// The near-zero piece x + x Q(x^2) (Q of degree 7: 7 fmas and the final
// one), three tail pieces 1 - P(|x| - c) (degree 9: 9 fmas each) chosen
// by |x| < 1.75, 2.8, 3.93 (else 1), the sign copied, and |x| >= 0.9
// (false for NaN, which takes the near-zero piece) choosing between them.
// CHECK-LABEL: func.func @gelu_erf(
// CHECK-DAG: %[[C09:.*]] = arith.constant 0.899999976 : f32
// CHECK-DAG: %[[C175:.*]] = arith.constant 1.750000e+00 : f32
// CHECK-DAG: %[[C28:.*]] = arith.constant 2.800000e+00 : f32
// CHECK-DAG: %[[C393:.*]] = arith.constant 3.930000e+00 : f32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NOT: math.erf
// CHECK: %[[T:.*]] = math.absf %[[X:.*]] : f32
// CHECK: %[[S:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-COUNT-7: math.fma {{.*}}, %[[S]], {{.*}} : f32
// CHECK-NEXT: %[[NEAR:.*]] = math.fma %[[X]], %{{.*}}, %[[X]] : f32
// CHECK-COUNT-9: math.fma
// CHECK: %[[IN3:.*]] = arith.cmpf olt, %[[T]], %[[C393]] : f32
// CHECK: %[[P3:.*]] = arith.select %[[IN3]], %{{.*}}, %[[ONE]] : f32
// CHECK-COUNT-9: math.fma
// CHECK: %[[IN2:.*]] = arith.cmpf olt, %[[T]], %[[C28]] : f32
// CHECK: %[[P2:.*]] = arith.select %[[IN2]], %{{.*}}, %[[P3]] : f32
// CHECK-COUNT-9: math.fma
// CHECK: %[[IN1:.*]] = arith.cmpf olt, %[[T]], %[[C175]] : f32
// CHECK: %[[P1:.*]] = arith.select %[[IN1]], %{{.*}}, %[[P2]] : f32
// CHECK: %[[TAIL:.*]] = math.copysign %[[P1]], %[[X]] : f32
// CHECK: %[[FAR:.*]] = arith.cmpf oge, %[[T]], %[[C09]] : f32
// CHECK: %[[R:.*]] = arith.select %[[FAR]], %[[TAIL]], %[[NEAR]] : f32
// CHECK: return %[[R]]
func.func @gelu_erf(%x: f32) -> f32 {
  %e = math.erf %x : f32
  return %e : f32
}

// Vectors too (constants as splats).
// CHECK-LABEL: func.func @erf_vec(
// CHECK-NOT: math.erf
// CHECK: arith.constant dense<0.899999976> : vector<8xf32>
// CHECK: arith.select %{{.*}} : vector<8xi1>, vector<8xf32>
func.func @erf_vec(%x: vector<8xf32>) -> vector<8xf32> {
  %e = math.erf %x : vector<8xf32>
  return %e : vector<8xf32>
}

// CHECK-LABEL: func.func @tanh_stays(
// CHECK: math.tanh %{{.*}} : f32
func.func @tanh_stays(%x: f32) -> f32 {
  %t = math.tanh %x : f32
  return %t : f32
}

// CHECK-LABEL: func.func @erf_f64(
// CHECK: math.erf %{{.*}} : f64
func.func @erf_f64(%x: f64) -> f64 {
  %e = math.erf %x : f64
  return %e : f64
}
