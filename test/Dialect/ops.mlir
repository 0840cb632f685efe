// RUN: rankc-opt %s | FileCheck %s
// Round trip: what rankc-opt prints, it parses back to the same text.
// RUN: rankc-opt %s | rankc-opt | FileCheck %s

// CHECK-LABEL: func.func @messages
func.func @messages(%x: tensor<4xf32>, %b: tensor<2x3xi1>) -> tensor<4xf32> {
  // CHECK: comm.send %{{.*}} to rank 1 tag 7 : tensor<4xf32>
  comm.send %x to rank 1 tag 7 : tensor<4xf32>
  // CHECK: comm.send %{{.*}} to offset -1 tag "west" : tensor<2x3xi1>
  comm.send %b to offset -1 tag "west" : tensor<2x3xi1>
  // CHECK: comm.recv from offset 1 tag "east" : tensor<4xf32>
  %r = comm.recv from offset 1 tag "east" : tensor<4xf32>
  // CHECK: comm.recv from rank 0 tag 2147483647 : tensor<f64>
  %s = comm.recv from rank 0 tag 2147483647 : tensor<f64>
  // CHECK: comm.allreduce mean %{{.*}} tag "grads" : tensor<4xf32>
  %m = comm.allreduce mean %r tag "grads" : tensor<4xf32>
  // CHECK: comm.allreduce max %{{.*}} tag 3 : tensor<2x3xi1>
  %o = comm.allreduce max %b tag 3 : tensor<2x3xi1>
  return %m : tensor<4xf32>
}

// Tags with characters that need escaping survive printing.
// CHECK-LABEL: func.func @escaped
func.func @escaped(%x: tensor<bf16>) {
  // CHECK: comm.send %{{.*}} to rank 0 tag "a\22b" : tensor<bf16>
  comm.send %x to rank 0 tag "a\"b" : tensor<bf16>
  return
}
