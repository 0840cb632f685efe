// RUN: rankc-opt %s -rankc-linalg-to-gpu-loops -verify-diagnostics

// The pass runs after bufferization: a linalg op on tensors is a misuse of
// the pipeline, reported on the op.
func.func @on_tensors(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{rankc-linalg-to-gpu-loops expects bufferized linalg ops}}
  %r = linalg.copy ins(%a : tensor<4xf32>) outs(%b : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
