/* A C application stepping a program compiled with `rankc compile --emit
 * lib` (test/E2E/lib.test). Built with -DPROGRAM=<P> -DHEADER='"rankc_P.h"'
 * against OUT/include and OUT/lib.
 *
 *   lib_client RAW STEPS
 *
 * Checks that bad calls come back as errors with messages (the process
 * goes on), then fills every input with value(i) = i / 1000 + rank (f64
 * inputs only), runs STEPS steps leaving carried inputs NULL after the
 * first, and writes each output's bytes to RAW/rank<r>/<name>.bin.
 * With -DAPP_OWNS_MPI the application initializes MPI itself first: the
 * library must use it, leave MPI_COMM_WORLD's traffic alone, and not
 * finalize it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CAT2(a, b, c) a##b##c
#define CAT(a, b, c) CAT2(a, b, c)
#define API(f) CAT(rankc_, PROGRAM, _##f)
#include HEADER
#ifdef APP_OWNS_MPI
#include <mpi.h>
#endif

static long long elements(const int64_t *shape, int rank) {
  long long n = 1;
  for (int d = 0; d < rank; ++d)
    n *= shape[d];
  return n;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: lib_client RAW STEPS\n");
    return 2;
  }
  int steps = atoi(argv[2]);
#ifdef APP_OWNS_MPI
  MPI_Init(&argc, &argv);
#endif
  /* Before init: an error, not a crash. */
  if (API(step)(NULL, NULL) == 0) {
    fprintf(stderr, "step before init succeeded\n");
    return 1;
  }
  printf("before init: %s\n", API(last_error)());
  if (API(init)() != 0) {
    printf("init failed: %s\n", API(last_error)());
    /* The application goes on; finalize ends what init started. */
    if (API(finalize)() != 0)
      printf("finalize failed: %s\n", API(last_error)());
    printf("still running\n");
    return 0;
  }
  int rank = API(rank)(), nin = API(num_inputs)(), nout = API(num_outputs)();
  if (rank == 0) {
    printf("world size %d, %d inputs, %d outputs\n", API(world_size)(), nin,
           nout);
    for (int i = 0; i < nin; ++i)
      printf("input %d %s %s rank %d carried %d\n", i, API(input_name)(i),
             API(input_dtype)(i), API(input_rank)(i), API(input_is_state)(i));
    for (int i = 0; i < nout; ++i)
      printf("output %d %s %s rank %d\n", i, API(output_name)(i),
             API(output_dtype)(i), API(output_rank)(i));
    if (API(input_name)(nin + 5) == NULL)
      printf("bad index: %s\n", API(last_error)());
  }
  void **in = calloc(nin, sizeof *in), **out = calloc(nout, sizeof *out);
  const void **inputs = calloc(nin, sizeof *inputs);
  for (int i = 0; i < nin; ++i) {
    long long n = elements(API(input_shape)(i), API(input_rank)(i));
    double *v = malloc((n ? n : 1) * sizeof *v);
    for (long long k = 0; k < n; ++k)
      v[k] = k / 1000.0 + rank;
    in[i] = v;
  }
  for (int i = 0; i < nout; ++i) {
    long long n = elements(API(output_shape)(i), API(output_rank)(i));
    out[i] = calloc(n ? n : 1, 8);
  }
  /* The first step needs every input. */
  if (API(step)(inputs, out) == 0) {
    fprintf(stderr, "a step with NULL inputs succeeded\n");
    return 1;
  }
  if (rank == 0)
    printf("NULL input: %s\n", API(last_error)());
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < nin; ++i)
      inputs[i] = s > 0 && API(input_is_state)(i) ? NULL : in[i];
    if (API(step)(inputs, out) != 0) {
      fprintf(stderr, "step %d: %s\n", s, API(last_error)());
      return 1;
    }
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/rank%d", argv[1], rank);
  mkdir(argv[1], 0777);
  mkdir(path, 0777);
  for (int i = 0; i < nout; ++i) {
    snprintf(path, sizeof path, "%s/rank%d/%s.bin", argv[1], rank,
             API(output_name)(i));
    FILE *f = fopen(path, "wb");
    long long n = elements(API(output_shape)(i), API(output_rank)(i));
    fwrite(out[i], 8, n, f);
    fclose(f);
  }
  if (rank == 0)
    printf("%lld steps done\n", (long long)API(steps_done)());
  if (API(finalize)() != 0) {
    fprintf(stderr, "finalize: %s\n", API(last_error)());
    return 1;
  }
#ifdef APP_OWNS_MPI
  /* MPI is still the application's: up, and usable on MPI_COMM_WORLD. */
  int finalized = 1, sum = 0, one = 1;
  MPI_Finalized(&finalized);
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("after finalize: MPI finalized %d, %d ranks answered\n", finalized,
           sum);
  MPI_Finalize();
#endif
  return 0;
}
