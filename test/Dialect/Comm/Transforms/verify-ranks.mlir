// RUN: rankc-opt %s -split-input-file -comm-verify-ranks -verify-diagnostics | FileCheck %s
// comm-verify-ranks on every error class, with its exact text; a valid
// module passes unchanged.

// CHECK: module attributes {comm.world_size = 2 : i64}
// CHECK: comm.send
module attributes {comm.world_size = 2 : i64} {
  func.func @rank0(%x: tensor<4xf32> {comm.input = "x"}) attributes {comm.ranks = array<i64: 0>} {
    comm.send %x to rank 1 tag 7 : tensor<4xf32>
    return
  }
  func.func @rank1() -> (tensor<4xf32> {comm.outputs = ["y"]}) attributes {comm.ranks = array<i64: 1>} {
    %r = comm.recv from offset -1 tag 7 : tensor<4xf32>
    return %r : tensor<4xf32>
  }
}

// -----

module attributes {comm.world_size = 2 : i64} {
  func.func @rank0(%x: tensor<4xf32> {comm.input = "x"}) attributes {comm.ranks = array<i64: 0>} {
    // expected-error @+1 {{rank 0 sends '#0' to rank 1 with tag 7, but rank 1 (program [1]) has no matching receive}}
    comm.send %x to rank 1 tag 7 : tensor<4xf32>
    return
  }
  func.func @rank1() attributes {comm.ranks = array<i64: 1>} { return }
}

// -----

module attributes {comm.world_size = 2 : i64} {
  func.func @rank0() attributes {comm.ranks = array<i64: 0>} { return }
  func.func @rank1() attributes {comm.ranks = array<i64: 1>} {
    // expected-error @+1 {{rank 1 receives '#0' from rank 0 with tag "halo", but rank 0 (program [0]) sends nothing to rank 1 with that tag}}
    %r = comm.recv from rank 0 tag "halo" : tensor<4xf32>
    return
  }
}

// -----

module attributes {comm.world_size = 2 : i64} {
  func.func @rank0(%x: tensor<4xf32> {comm.input = "x"}) attributes {comm.ranks = array<i64: 0>} {
    comm.send %x to rank 1 tag 7 : tensor<4xf32>
    return
  }
  func.func @rank1() attributes {comm.ranks = array<i64: 1>} {
    // expected-error @+1 {{rank 0 sends f32[4] ('#0') to rank 1 with tag 7, but rank 1 receives f64[4] ('#0')}}
    %r = comm.recv from rank 0 tag 7 : tensor<4xf64>
    return
  }
}

// -----

module attributes {comm.world_size = 2 : i64} {
  func.func @rank0(%x: tensor<4xf32> {comm.input = "x"}) attributes {comm.ranks = array<i64: 0>} {
    comm.send %x to rank 1 tag 7 : tensor<4xf32>
    // expected-error @+1 {{rank 0 sends to rank 1 with tag 7 twice: nodes '#0' and '#1'}}
    comm.send %x to rank 1 tag 7 : tensor<4xf32>
    return
  }
  func.func @rank1() attributes {comm.ranks = array<i64: 1>} {
    %r = comm.recv from rank 0 tag 7 : tensor<4xf32>
    return
  }
}

// -----

module attributes {comm.world_size = 2 : i64} {
  func.func @rank0(%x: tensor<4xf32> {comm.input = "x"}) attributes {comm.ranks = array<i64: 0>} {
    comm.send %x to rank 1 tag 7 : tensor<4xf32>
    return
  }
  func.func @rank1() attributes {comm.ranks = array<i64: 1>} {
    %r = comm.recv from rank 0 tag 7 : tensor<4xf32>
    // expected-error @+1 {{rank 1 receives from rank 0 with tag 7 twice: nodes '#0' and '#1'}}
    %s = comm.recv from rank 0 tag 7 : tensor<4xf32>
    return
  }
}

// -----

module attributes {comm.world_size = 2 : i64} {
  func.func @all(%x: tensor<4xf32> {comm.input = "x"}) attributes {comm.ranks = "all"} {
    // expected-error @+1 {{rank 0: peer rank 2 of '#0' is outside [0, 2)}}
    comm.send %x to rank 2 tag 7 : tensor<4xf32>
    return
  }
}

// -----

module attributes {comm.world_size = 2 : i64} {
  func.func @rank0(%x: tensor<4xf32> {comm.input = "x"}) attributes {comm.ranks = array<i64: 0>} {
    // expected-error @+1 {{allreduce with tag "g" ('#0' on program [0]): rank 1 (program [1]) has no allreduce with this tag; every rank needs exactly one}}
    %a = comm.allreduce sum %x tag "g" : tensor<4xf32>
    return
  }
  func.func @rank1() attributes {comm.ranks = array<i64: 1>} { return }
}

// -----

module attributes {comm.world_size = 2 : i64} {
  func.func @rank0(%x: tensor<4xf32> {comm.input = "x"}) attributes {comm.ranks = array<i64: 0>} {
    %a = comm.allreduce sum %x tag "g" : tensor<4xf32>
    return
  }
  func.func @rank1(%x: tensor<4xf32> {comm.input = "x"}) attributes {comm.ranks = array<i64: 1>} {
    // expected-error @+1 {{allreduce with tag "g": program [0] reduces f32[4] by sum ('#0') but program [1] reduces f32[4] by max ('#0')}}
    %a = comm.allreduce max %x tag "g" : tensor<4xf32>
    return
  }
}

// -----

module attributes {comm.world_size = 1 : i64} {
  func.func @rank0(%x: tensor<4xf32> {comm.input = "x"}) attributes {comm.ranks = array<i64: 0>} {
    %a = comm.allreduce sum %x tag 1 : tensor<4xf32>
    // expected-error @+1 {{program [0] has two allreduces with tag 1: nodes '#0' and '#1'}}
    %b = comm.allreduce sum %x tag 1 : tensor<4xf32>
    return
  }
}

// -----

// A cycle through computation across two ranks.
module attributes {comm.world_size = 2 : i64} {
  func.func @rank0() attributes {comm.ranks = array<i64: 0>} {
    %r = comm.recv from rank 1 tag 1 : tensor<4xf32>
    %e = tensor.empty() : tensor<4xf32>
    %n = linalg.negf ins(%r : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    // expected-error @+1 {{deadlock: these operations wait for each other in a cycle: (rank 0, '#3', send) -> (rank 1, '#0', recv) -> (rank 1, '#1', send) -> (rank 0, '#0', recv) -> (rank 0, '#2', linalg.negf) -> (rank 0, '#3', send)}}
    comm.send %n to rank 1 tag 2 : tensor<4xf32>
    return
  }
  func.func @rank1() attributes {comm.ranks = array<i64: 1>} {
    %r = comm.recv from rank 0 tag 2 : tensor<4xf32>
    comm.send %r to rank 0 tag 1 : tensor<4xf32>
    return
  }
}

// -----

// Two collectives in opposite orders on two ranks.
module attributes {comm.world_size = 2 : i64} {
  func.func @rank0(%x: tensor<4xf32> {comm.input = "x"}) attributes {comm.ranks = array<i64: 0>} {
    %a = comm.allreduce sum %x tag "A" : tensor<4xf32>
    %b = comm.allreduce sum %a tag "B" : tensor<4xf32>
    return
  }
  func.func @rank1(%x: tensor<4xf32> {comm.input = "x"}) attributes {comm.ranks = array<i64: 1>} {
    // expected-error @+1 {{deadlock: these operations wait for each other in a cycle: (all ranks, allreduce tag "B") -> (rank 1, '#0', allreduce) -> (all ranks, allreduce tag "A") -> (rank 0, '#0', allreduce) -> (all ranks, allreduce tag "B")}}
    %b = comm.allreduce sum %x tag "B" : tensor<4xf32>
    %a = comm.allreduce sum %b tag "A" : tensor<4xf32>
    return
  }
}

// -----

// The SPMD ring that waits before it sends: every rank waits for its left
// neighbour forever.
module attributes {comm.world_size = 3 : i64} {
  func.func @all() attributes {comm.ranks = "all"} {
    %r = comm.recv from offset -1 tag 0 : tensor<4xf32>
    // expected-error @+1 {{deadlock: these operations wait for each other in a cycle: (rank 0, '#1', send) -> (rank 1, '#0', recv) -> (rank 1, '#1', send) -> (rank 2, '#0', recv) -> (rank 2, '#1', send) -> (rank 0, '#0', recv) -> (rank 0, '#1', send)}}
    comm.send %r to offset 1 tag 0 : tensor<4xf32>
    return
  }
}
