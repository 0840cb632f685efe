/*===- rankc_runtime.h - the C ABI between generated code and MPI ---------===*
 *
 * Generated programs never call MPI (or the file system) themselves: they
 * call these functions. The runtime is plain C++ over MPI and knows nothing
 * of the compiler; rebuilding it against another MPI needs no compiler
 * change. Buffers are passed as addresses; sizes, shapes and names come from
 * the program's manifest (see below).
 *
 *===----------------------------------------------------------------------===*/

#ifndef RANKC_RUNTIME_H
#define RANKC_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The element types, one row each, in the order of the DAG format's dtypes
 * (version 3's unsigned ones last, so that earlier codes never change):
 *   X(ENUM, DAG name, bytes, .npy descr, what a host buffer holds)
 * The one table of dtypes: the compiler (its frontend, the lowering to
 * these calls, the library headers it writes) and the runtime (messages,
 * .npy files, the C API) all read it. A dtype is added here first. */
#define RANKC_DTYPES(X)                                                      \
  X(BOOL, "bool", 1, "|b1", "bool (1 byte)")                                 \
  X(I8, "i8", 1, "|i1", "int8_t")                                            \
  X(I32, "i32", 4, "<i4", "int32_t")                                         \
  X(I64, "i64", 8, "<i8", "int64_t")                                         \
  X(F16, "f16", 2, "<f2", "uint16_t (IEEE half)")                            \
  X(BF16, "bf16", 2, "<u2", "uint16_t (bfloat16 bits)")                      \
  X(F32, "f32", 4, "<f4", "float")                                           \
  X(F64, "f64", 8, "<f8", "double")                                          \
  X(U8, "u8", 1, "|u1", "uint8_t")                                           \
  X(U16, "u16", 2, "<u2", "uint16_t")                                        \
  X(U32, "u32", 4, "<u4", "uint32_t")

enum rankc_dtype {
#define RANKC_X(e, name, bytes, descr, ctype) RANKC_##e,
  RANKC_DTYPES(RANKC_X)
#undef RANKC_X
  RANKC_DTYPE_COUNT
};

/* rankc_rt_gemm's dtype with bf16 or f16 A and B, or'ed with this: C is of
 * their type too, each element the f32 sum rounded once (to nearest even),
 * as PyTorch's autocast GEMMs give it; not with accumulate. */
#define RANKC_GEMM_NARROW_C 0x100

/* The reductions of collectives, as comm.allreduce names them. */
#define RANKC_REDUCES(X) X(SUM, "sum") X(PROD, "prod") X(MAX, "max") \
  X(MIN, "min") X(MEAN, "mean")

enum rankc_reduce {
#define RANKC_X(e, name) RANKC_##e,
  RANKC_REDUCES(RANKC_X)
#undef RANKC_X
  RANKC_REDUCE_COUNT
};

/* How rankc_rt_isend and rankc_rt_irecv read their peer: a rank, an offset
 * from this rank (mod the world), or the grid peer (dag-format.md v3) that
 * the manifest gives for the message's event (`grid` lines); a grid peer
 * may be none (MPI_PROC_NULL): a send then does nothing and a receive gives
 * the event's `fill`. */
enum rankc_peer_kind { RANKC_PEER_RANK, RANKC_PEER_OFFSET, RANKC_PEER_GRID };

/* Called by generated code. Addresses are passed as integers.
 *
 * Inputs and outputs are not copied: the program reads input `index` from
 * the buffer that `rankc_rt_input` returns (declared in MLIR as
 * `(i32) -> memref<?xi8>` with llvm.emit_c_interface, hence
 * `_mlir_ciface_rankc_rt_input` filling a memref descriptor) and tells
 * where it left each output. Both stay valid until the step after next
 * (Arena.h), which is what carrying state from step to step needs. */
struct rankc_byte_memref;
void _mlir_ciface_rankc_rt_input(struct rankc_byte_memref *result,
                                 int32_t index);
void rankc_rt_output(int32_t index, int64_t data);
int64_t rankc_rt_isend(int64_t data, int64_t bytes, int64_t peer,
                       int32_t peer_kind, int32_t mpi_tag, int32_t event);
int64_t rankc_rt_irecv(int64_t data, int64_t bytes, int64_t peer,
                       int32_t peer_kind, int32_t mpi_tag, int32_t event);
int64_t rankc_rt_iallreduce(int64_t in, int64_t out, int64_t count,
                            int32_t dtype, int32_t reduce, int32_t event);
void rankc_rt_wait(int64_t request);
void rankc_rt_part_begin(int32_t part);
/* An index outside [0, bound) at the node of manifest check `check` (or,
 * for a `rem` check, an integer divisor of 0): ends the run, naming the
 * rank, the node and the index. Never returns. */
void rankc_rt_index_error(int32_t check, int64_t index, int64_t bound);
/* Where GPU kernels record the first index out of range they meet (they
 * cannot call the host): int64 {check + 1, index, bound}, zero while none,
 * in the memory generated code uses. The runtime reads it after every step
 * and ends the run as rankc_rt_index_error would. (`() -> memref<?xi8>`
 * with llvm.emit_c_interface, as rankc_rt_input.) */
void _mlir_ciface_rankc_rt_index_record(struct rankc_byte_memref *result);
/* The block a step function's memory plan places its buffers in
 * (rankc-plan-buffers: every buffer that does not outlive the call, at an
 * offset; dead ones' bytes reused), at least `bytes` long, in the memory
 * generated code uses. The same block every call while no caller asks for
 * more: a larger request gets a new one, and blocks handed out stay
 * allocated until the run ends (a replayed step keeps its addresses).
 * (`(i64) -> memref<?xi8>` with llvm.emit_c_interface, as rankc_rt_input.) */
void _mlir_ciface_rankc_rt_scratch(struct rankc_byte_memref *result,
                                   int64_t bytes);
void rankc_rt_part_end(int32_t part);

/* Provided by generated code.
 *
 * rankc_manifest is text, one record per line:
 *   program NAME
 *   world_size N
 *   ranks all | ranks R...                  (the ranks that run it)
 *   input INDEX ID DTYPE RANK DIM...        (inputs and params, in order,
 *                                            then step leaves, then
 *                                            optimizer state)
 *   zero INDEX                              (optimizer state: zeros at
 *                                            first, never read from files)
 *   step INDEX                              (a `step` leaf: the runtime
 *                                            sets it to the step number)
 *   output INDEX DTYPE RANK DIM... : NAME... (no name: optimizer state)
 *   state INPUT-INDEX OUTPUT-INDEX          (carried into the next step)
 *   event INDEX KIND NODE-ID TAG-AS-WRITTEN (send | recv | allreduce)
 *   grid EVENT D P1..Pd S1..Sd PERIODIC1..d (the event's grid peer, 0/1)
 *   fill EVENT DTYPE VALUE                  (a receive's value from no
 *                                            peer; integers exactly)
 *   check INDEX NODE-ID [rem]               (a node whose indices are
 *                                            checked: take, scatter_add;
 *                                            `rem`: an integer divisor)
 *   part INDEX
 *   accumulate K                            (K > 1: steps K-1, 2K-1, ...
 *                                            run rankc_entry, the others
 *                                            rankc_micro_entry)
 * rankc_entry runs the program once: one step. With gradient accumulation
 * rankc_micro_entry runs a micro-step (same inputs and outputs; its
 * messages are the events of rankc_micro_manifest, which is otherwise the
 * same). */
extern const char rankc_manifest[];
void rankc_entry(void);
extern const char rankc_micro_manifest[] __attribute__((weak));
void rankc_micro_entry(void) __attribute__((weak));

#ifdef __cplusplus
}
#endif

#endif /* RANKC_RUNTIME_H */
