// Steps the compiled heat stencil from C++: u0 from a formula, then the
// field carried inside the library from step to step; prints the total
// heat (an allreduce across the ranks) after the last step.
//   mpiexec -n 4 heat_stepper STEPS
#include "rankc_all.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace {
int check(int status, const char *what) {
  if (status != 0) {
    std::fprintf(stderr, "heat_stepper: %s: %s\n", what, rankc_all_last_error());
    std::exit(1);
  }
  return status;
}

size_t elements(int i, bool input) {
  const int64_t *shape = input ? rankc_all_input_shape(i) : rankc_all_output_shape(i);
  int rank = input ? rankc_all_input_rank(i) : rankc_all_output_rank(i);
  size_t n = 1;
  for (int d = 0; d < rank; ++d)
    n *= shape[d];
  return n;
}
} // namespace

int main(int argc, char **argv) {
  int steps = argc > 1 ? std::atoi(argv[1]) : 10;
  check(rankc_all_init(), "init");
  int rank = rankc_all_rank();
  // One f64 input (u0, carried as state) and f64 outputs (u, total).
  std::vector<double> u0(elements(0, true));
  for (size_t k = 0; k < u0.size(); ++k)
    u0[k] = (k % 7) * 0.25 + rank;
  std::vector<std::vector<double>> outputs(rankc_all_num_outputs());
  std::vector<void *> out;
  for (size_t i = 0; i < outputs.size(); ++i) {
    outputs[i].resize(elements(i, false));
    out.push_back(outputs[i].data());
  }
  for (int s = 0; s < steps; ++s) {
    const void *in[] = {s == 0 ? u0.data() : nullptr}; // then: carried
    check(rankc_all_step(in, out.data()), "step");
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    if (rank == 0 && std::string_view(rankc_all_output_name(i)) == "total")
      std::printf("%d steps, total heat %.17g\n", steps, outputs[i][0]);
  check(rankc_all_finalize(), "finalize");
  return 0;
}
