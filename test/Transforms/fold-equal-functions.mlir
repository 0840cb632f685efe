// RUN: rankc-opt %s -rankc-fold-equal-functions | FileCheck %s

// Parts equal but for their names, value names and locations are one
// function; calls go to the first. Parts that differ in a constant, a type
// or an attribute stay, as do public functions, declarations, and functions
// used other than as a callee.
// CHECK-LABEL: func.func @step(
// CHECK: call @part0(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: call @part0(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: call @other_constant(
// CHECK-NEXT: call @other_type(
// CHECK-NEXT: call @other_attribute(
// CHECK-NEXT: call @part0(
// CHECK-NEXT: call @pinned(
// CHECK-NEXT: call @public_copy(
// CHECK-NEXT: call @external(
// CHECK: func.func private @part0(
// CHECK-NOT: func.func private @part1(
// CHECK: func.func private @other_constant(
// CHECK: func.func private @other_type(
// CHECK: func.func private @other_attribute(
// CHECK-NOT: func.func private @part5(
// CHECK: func.func private @pinned(
// CHECK: func.func @public_copy(
// CHECK: func.func private @external(
module attributes {rankc.pins = [@pinned]} {
  func.func @step(%x: tensor<4xf32>, %d: tensor<4xf64>) {
    %0 = call @part0(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = call @part1(%0) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = call @other_constant(%1) : (tensor<4xf32>) -> tensor<4xf32>
    %3 = call @other_type(%d) : (tensor<4xf64>) -> tensor<4xf64>
    %4 = call @other_attribute(%2) : (tensor<4xf32>) -> tensor<4xf32>
    %5 = call @part5(%4) : (tensor<4xf32>) -> tensor<4xf32>
    %6 = call @pinned(%5) : (tensor<4xf32>) -> tensor<4xf32>
    %8 = call @public_copy(%6) : (tensor<4xf32>) -> tensor<4xf32>
    %9 = call @external(%8) : (tensor<4xf32>) -> tensor<4xf32>
    return
  }
  func.func private @part0(%a: tensor<4xf32>) -> tensor<4xf32> attributes {comm.part_of = "rank0"} {
    %c = arith.constant dense<2.0> : tensor<4xf32>
    %m = arith.mulf %a, %c : tensor<4xf32>
    %s = arith.addf %m, %a : tensor<4xf32>
    return %s : tensor<4xf32>
  }
  // Other value names and locations: folded.
  func.func private @part1(%b: tensor<4xf32> loc("doc.json":1:7)) -> tensor<4xf32> attributes {comm.part_of = "rank0"} {
    %two = arith.constant dense<2.0> : tensor<4xf32> loc("doc.json":1:9)
    %p = arith.mulf %b, %two : tensor<4xf32> loc("doc.json":2:1)
    %q = arith.addf %p, %b : tensor<4xf32>
    return %q : tensor<4xf32>
  }
  func.func private @other_constant(%a: tensor<4xf32>) -> tensor<4xf32> attributes {comm.part_of = "rank0"} {
    %c = arith.constant dense<3.0> : tensor<4xf32>
    %m = arith.mulf %a, %c : tensor<4xf32>
    %s = arith.addf %m, %a : tensor<4xf32>
    return %s : tensor<4xf32>
  }
  func.func private @other_type(%a: tensor<4xf64>) -> tensor<4xf64> attributes {comm.part_of = "rank0"} {
    %c = arith.constant dense<2.0> : tensor<4xf64>
    %m = arith.mulf %a, %c : tensor<4xf64>
    %s = arith.addf %m, %a : tensor<4xf64>
    return %s : tensor<4xf64>
  }
  // The same body, but a part of another program.
  func.func private @other_attribute(%a: tensor<4xf32>) -> tensor<4xf32> attributes {comm.part_of = "rank1"} {
    %c = arith.constant dense<2.0> : tensor<4xf32>
    %m = arith.mulf %a, %c : tensor<4xf32>
    %s = arith.addf %m, %a : tensor<4xf32>
    return %s : tensor<4xf32>
  }
  // Equal to @part0 again, further down: folded too.
  func.func private @part5(%a: tensor<4xf32>) -> tensor<4xf32> attributes {comm.part_of = "rank0"} {
    %c = arith.constant dense<2.0> : tensor<4xf32>
    %m = arith.mulf %a, %c : tensor<4xf32>
    %s = arith.addf %m, %a : tensor<4xf32>
    return %s : tensor<4xf32>
  }
  // Equal to @part0, but named by an attribute (not only by calls): kept.
  func.func private @pinned(%a: tensor<4xf32>) -> tensor<4xf32> attributes {comm.part_of = "rank0"} {
    %c = arith.constant dense<2.0> : tensor<4xf32>
    %m = arith.mulf %a, %c : tensor<4xf32>
    %s = arith.addf %m, %a : tensor<4xf32>
    return %s : tensor<4xf32>
  }
  // Public: its name is an ABI.
  func.func @public_copy(%a: tensor<4xf32>) -> tensor<4xf32> attributes {comm.part_of = "rank0"} {
    %c = arith.constant dense<2.0> : tensor<4xf32>
    %m = arith.mulf %a, %c : tensor<4xf32>
    %s = arith.addf %m, %a : tensor<4xf32>
    return %s : tensor<4xf32>
  }
  func.func private @external(%a: tensor<4xf32>) -> tensor<4xf32>
}
