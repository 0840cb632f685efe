//===- CommOps.td - comm dialect operations ----------------*- tablegen -*-===//

#ifndef RANKC_COMM_OPS_TD
#define RANKC_COMM_OPS_TD

include "CommBase.td"

def Comm_SendOp : Comm_Op<"send", [
    MemoryEffects<[MemRead<Comm_Network>, MemWrite<Comm_Network>]>]> {
  let summary = "send a tensor to one rank";
  let description = [{
    Sends `value` to a peer rank under `tag`. The peer is an absolute rank
    (`to rank 3`) or an offset from the executing rank modulo the world size
    (`to offset -1`) or a rank on a process grid (`to grid #comm.grid<...>`,
    none past a non-periodic edge: then the send does nothing). A send has
    no result and is never removed.

    ```mlir
    comm.send %halo to offset 1 tag "east" : tensor<8xf32>
    ```
  }];
  let arguments = (ins Comm_Tensor:$value, I64Attr:$peer, UnitAttr:$relative,
                       OptionalAttr<Comm_GridAttr>:$grid,
                       Comm_TagAttr:$tag, OptionalAttr<I32Attr>:$mpi_tag);
  let assemblyFormat = [{
    $value `to` custom<Peer>($peer, $relative, $grid) `tag` custom<Tag>($tag)
    attr-dict `:` type($value)
  }];
  let hasVerifier = 1;
}

def Comm_RecvOp : Comm_Op<"recv", [
    MemoryEffects<[MemRead<Comm_Network>, MemWrite<Comm_Network>]>]> {
  let summary = "receive a tensor from one rank";
  let description = [{
    The tensor that the peer rank sends to this rank under `tag`. Never
    removed, even when its result is unused: its sender would wait forever.
    `mpi_tag`, set by comm-assign-mpi-tags, is the MPI tag the message
    travels with (the same number on both ends). From a grid peer that a
    rank does not have, the result is `fill` (a scalar of the element type,
    required when the grid's shift leaves a non-periodic axis) everywhere.

    ```mlir
    %h = comm.recv from rank 0 tag 7 : tensor<8xf32>
    ```
  }];
  let arguments = (ins I64Attr:$peer, UnitAttr:$relative,
                       OptionalAttr<Comm_GridAttr>:$grid, Comm_TagAttr:$tag,
                       OptionalAttr<I32Attr>:$mpi_tag,
                       OptionalAttr<TypedAttrInterface>:$fill);
  let results = (outs Comm_Tensor:$result);
  let assemblyFormat = [{
    `from` custom<Peer>($peer, $relative, $grid) `tag` custom<Tag>($tag)
    attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Comm_AllReduceOp : Comm_Op<"allreduce", [
    MemoryEffects<[MemRead<Comm_Network>, MemWrite<Comm_Network>]>,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "reduce a tensor elementwise over all ranks";
  let description = [{
    Every rank contributes `value`; every rank receives the elementwise
    reduction. All ranks have exactly one allreduce per tag, of the same type
    and reduction (checked across ranks). `mean` takes floats.

    ```mlir
    %g = comm.allreduce sum %x tag "grads" : tensor<16xf32>
    ```
  }];
  let arguments = (ins Comm_ReduceKindAttr:$reduce, Comm_Tensor:$value,
                       Comm_TagAttr:$tag);
  let results = (outs Comm_Tensor:$result);
  let assemblyFormat = [{
    $reduce $value `tag` custom<Tag>($tag) attr-dict `:` type($value)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// The asynchronous schedule (comm-async-schedule): MPI's nonblocking calls
//===----------------------------------------------------------------------===//

def Comm_ISendOp : Comm_Op<"isend", [
    MemoryEffects<[MemRead<Comm_Network>, MemWrite<Comm_Network>]>]> {
  let summary = "start sending a tensor to one rank";
  let description = [{
    `comm.send` split as MPI_Isend: the send starts here and completes at
    the `comm.wait` of its request. `event` numbers the program's messages
    and collectives in program order (the runtime's trace and errors name
    them by it).

    ```mlir
    %r = comm.isend %halo to offset 1 tag "east" event 0 : tensor<8xf32>
    ```
  }];
  let arguments = (ins Comm_Tensor:$value, I64Attr:$peer, UnitAttr:$relative,
                       OptionalAttr<Comm_GridAttr>:$grid,
                       Comm_TagAttr:$tag, OptionalAttr<I32Attr>:$mpi_tag,
                       I32Attr:$event);
  let results = (outs Comm_SendRequest:$request);
  let assemblyFormat = [{
    $value `to` custom<Peer>($peer, $relative, $grid) `tag` custom<Tag>($tag)
    `event` $event attr-dict `:` type($value)
  }];
  let builders = [OpBuilder<(ins "::mlir::Value":$value, "SendOp":$send,
                                 "int32_t":$event)>];
  let hasVerifier = 1;
}

def Comm_IRecvOp : Comm_Op<"irecv", [
    MemoryEffects<[MemRead<Comm_Network>, MemWrite<Comm_Network>]>]> {
  let summary = "post the receive of a tensor from one rank";
  let description = [{
    `comm.recv` split as MPI_Irecv: posted here, its value delivered by the
    `comm.wait` of its request, whose type names the tensor.

    ```mlir
    %r = comm.irecv from rank 0 tag 7 event 1 : !comm.request<tensor<8xf32>>
    ```
  }];
  let arguments = (ins I64Attr:$peer, UnitAttr:$relative,
                       OptionalAttr<Comm_GridAttr>:$grid, Comm_TagAttr:$tag,
                       OptionalAttr<I32Attr>:$mpi_tag, I32Attr:$event,
                       OptionalAttr<TypedAttrInterface>:$fill);
  let results = (outs Comm_RequestType:$request);
  let assemblyFormat = [{
    `from` custom<Peer>($peer, $relative, $grid) `tag` custom<Tag>($tag)
    `event` $event attr-dict `:` qualified(type($request))
  }];
  let builders = [OpBuilder<(ins "RecvOp":$recv, "int32_t":$event)>];
  let hasVerifier = 1;
}

def Comm_IAllReduceOp : Comm_Op<"iallreduce", [
    MemoryEffects<[MemRead<Comm_Network>, MemWrite<Comm_Network>]>,
    TypesMatchWith<"the request delivers the reduced type", "value", "request",
                   "::rankc::comm::RequestType::get($_self.getContext(), $_self)">]> {
  let summary = "start an allreduce";
  let description = [{
    `comm.allreduce` split as MPI_Iallreduce: started here (every rank
    starts its collectives in the same order), its result delivered by the
    `comm.wait` of its request.

    ```mlir
    %r = comm.iallreduce sum %x tag "grads" event 2 : tensor<16xf32>
    ```
  }];
  let arguments = (ins Comm_ReduceKindAttr:$reduce, Comm_Tensor:$value,
                       Comm_TagAttr:$tag, I32Attr:$event);
  let results = (outs Comm_RequestType:$request);
  let assemblyFormat = [{
    $reduce $value `tag` custom<Tag>($tag) `event` $event attr-dict `:`
    type($value)
  }];
  let builders = [OpBuilder<(ins "AllReduceOp":$allreduce, "int32_t":$event)>];
  let hasVerifier = 1;
}

def Comm_WaitOp : Comm_Op<"wait", [
    MemoryEffects<[MemRead<Comm_Network>, MemWrite<Comm_Network>]>]> {
  let summary = "complete a request";
  let description = [{
    Blocks until the request completes, as MPI_Wait; a receive's or a
    reduction's request delivers its value here.

    ```mlir
    comm.wait %send
    %h = comm.wait %recv : tensor<8xf32>
    ```
  }];
  let arguments = (ins Comm_RequestType:$request);
  let results = (outs Optional<Comm_Tensor>:$value);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

#endif // RANKC_COMM_OPS_TD
