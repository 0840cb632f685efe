/*===- rankc_core.h - run a compiled program, step by step ----------------===*
 *
 * The runtime's core as a library: what OUT/launch's executables do in
 * main() (runtime/core/Main.cpp), open to any program that links the generated
 * code. One process runs one rank of one program; the calls below run it
 * for as many steps as the caller wants. Inputs and outputs are host
 * buffers in C order, in the order of the program's manifest (inputs and
 * params in document order; outputs in document order, then, with an
 * optimizer, the updated parameters). Errors end the whole run with
 * `error: rank R (program): ...` (MPI_Abort): a rank never continues alone.
 *
 *===----------------------------------------------------------------------===*/

#ifndef RANKC_CORE_H
#define RANKC_CORE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Initializes MPI unless the caller already did, checks the world size
 * against the program's and allocates the inputs (optimizer state: zeros).
 * timeout_seconds bounds every wait for a message (0: 300 s). */
void rankc_core_init(int *argc, char ***argv, double timeout_seconds);
int rankc_core_rank(void);
int rankc_core_world_size(void);

/* The inputs the caller supplies (optimizer state excluded) and the
 * outputs it can read (hidden optimizer state excluded). */
int rankc_core_num_inputs(void);
int rankc_core_num_outputs(void);
const char *rankc_core_input_name(int i);
/* Output i is one value; it may have several names (j = 0, 1, ...: NULL
 * past the last). */
const char *rankc_core_output_name(int i, int j);
int rankc_core_input_dtype(int i);         /* enum rankc_dtype */
int rankc_core_output_dtype(int i);
int rankc_core_input_rank(int i);
int rankc_core_output_rank(int i);
const int64_t *rankc_core_input_shape(int i);
const int64_t *rankc_core_output_shape(int i);
/* The input is carried from step to step (state, or an updated param). */
int rankc_core_input_is_state(int i);

/* Copies a host value into input i; used by the next step. Inputs that are
 * state take it instead of the value carried from the last step. */
void rankc_core_set_input(int i, const void *host);
/* One step: every rank's program once, all its messages completed. */
void rankc_core_step(void);
/* Copies the last step's output i to host memory. */
void rankc_core_get_output(int i, void *host);
int64_t rankc_core_steps_done(void);
/* Micro-steps per optimizer update (`accumulate`; 1 without). */
int64_t rankc_core_accumulate(void);

/* Frees every buffer; finalizes MPI only if init started it. */
void rankc_core_finalize(void);

#ifdef __cplusplus
}
#endif

#endif /* RANKC_CORE_H */
