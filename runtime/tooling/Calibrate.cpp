//===- Calibrate.cpp - rankc-calibrate: what this machine's messages cost -===//
//
// Run under mpiexec by `rankc calibrate` (lib/Driver/Calibrate.cpp), once
// per world size. It times what compiled schedules do, with the calls the
// runtime makes (runtime/mpi/Messages.cpp): MPI_Iallreduce of f32 sums
// then MPI_Wait (a gradient bucket), and Isend/Irecv between ranks 0 and 1
// (a halo message, as half a ping-pong). A third measurement says whether
// a reduction advances while the ranks compute without calling MPI (MPICH
// progresses nonblocking collectives only inside MPI calls unless
// MPIR_CVAR_ASYNC_PROGRESS is set): a reduction started, a computation of
// about its length, then the wait; the fraction of the reduction hidden
// is what the cost model may count as overlap; and again with MPI calls
// in the computation, as a schedule's later reductions start. Last, a loop of f32
// multiply-adds and a copy give the rates the model estimates unprofiled
// computation with.
//
// Every time is the median of repetitions after warm-up, the slowest
// rank's. Rank 0 prints one JSON object per line:
//   {"op": "allreduce"|"p2p", "ranks": W, "bytes": B, "seconds": T}
//   {"op": "overlap", "ranks": W, "bytes": B, "calls": K, "fraction": F}
//   {"op": "flops"|"copy", "ranks": W, "per_second": R}
//
//   rankc-calibrate [--max-bytes B] [--min-bytes B] [--seconds S]
//
//===----------------------------------------------------------------------===//

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// The slowest rank's value.
double slowest(double t) {
  double m = t;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

/// Seconds one call of `op` takes on the slowest rank: as OSU's
/// benchmarks time it, calls back to back after a barrier, the total over
/// their number (one call is too short for the clock and the barrier's
/// skew); the median of 5 such runs within about `budget` seconds.
template <typename F> double timeLoop(F op, double budget) {
  op(); // warm-up
  MPI_Barrier(MPI_COMM_WORLD);
  double s = MPI_Wtime();
  op();
  double one = slowest(MPI_Wtime() - s);
  int reps = std::clamp(int(budget / 5 / std::max(one, 1e-7)), 1, 1000);
  std::vector<double> runs;
  for (int trial = 0; trial < 5; ++trial) {
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int r = 0; r < reps; ++r)
      op();
    runs.push_back(slowest((MPI_Wtime() - start) / reps));
  }
  return median(runs);
}

volatile float sink;

/// f32 multiply-adds for about `seconds` (n iterations over a small array
/// that stays in cache); returns the work done, in flops.
double compute(std::vector<float> &x, int64_t iterations) {
  float a = 1.0000001f, b = 1e-7f;
  for (int64_t it = 0; it < iterations; ++it)
    for (float &v : x)
      v = v * a + b;
  sink = x[0];
  return 2.0 * double(x.size()) * double(iterations);
}

} // namespace

/// The MPI calls in the second overlap measurement's computation.
constexpr int kCalls = 8;

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  int64_t maxBytes = int64_t(64) << 20, minBytes = 1024;
  double budget = 0.2; // seconds per size and operation
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--max-bytes")
      maxBytes = std::atoll(argv[i + 1]);
    else if (flag == "--min-bytes")
      minBytes = std::atoll(argv[i + 1]);
    else if (flag == "--seconds")
      budget = std::atof(argv[i + 1]);
  }
  minBytes = std::max<int64_t>(4, minBytes);
  std::vector<float> in(maxBytes / 4, 1.0f), out(maxBytes / 4);
  std::vector<float> work(4096, 1.0f);

  // The compute rate first: the overlap measurement sizes its work by it.
  double flopsRate = 0;
  {
    int64_t iterations = 64;
    double t = 0;
    while (t < 0.05 && iterations < (int64_t(1) << 30)) {
      iterations *= 2;
      double start = MPI_Wtime();
      compute(work, iterations);
      t = MPI_Wtime() - start;
    }
    std::vector<double> rates;
    for (int r = 0; r < 5; ++r) {
      double start = MPI_Wtime();
      double flops = compute(work, iterations);
      rates.push_back(flops / (MPI_Wtime() - start));
    }
    flopsRate = median(rates);
    double worst = flopsRate;
    MPI_Allreduce(&flopsRate, &worst, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    flopsRate = worst;
    std::vector<double> copies;
    for (int r = 0; r < 5; ++r) {
      double start = MPI_Wtime();
      std::memcpy(out.data(), in.data(), maxBytes);
      copies.push_back(double(maxBytes) / (MPI_Wtime() - start));
    }
    double copyRate = median(copies), worstCopy = copyRate;
    MPI_Allreduce(&copyRate, &worstCopy, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0) {
      std::printf("{\"op\": \"flops\", \"ranks\": %d, \"per_second\": %.6g}\n",
                  world, flopsRate);
      std::printf("{\"op\": \"copy\", \"ranks\": %d, \"per_second\": %.6g}\n",
                  world, worstCopy);
    }
  }

  // The first messages pay for setting up shared memory and connections:
  // not what a step's messages cost.
  for (int r = 0; r < 3; ++r)
    MPI_Allreduce(MPI_IN_PLACE, out.data(), int(maxBytes / 4), MPI_FLOAT,
                  MPI_SUM, MPI_COMM_WORLD);
  for (int64_t bytes = minBytes; bytes <= maxBytes; bytes *= 4) {
    int count = int(bytes / 4);
    // Allreduce, as a bucket's: started, then waited for.
    auto allreduce = [&] {
      MPI_Request req;
      MPI_Iallreduce(in.data(), out.data(), count, MPI_FLOAT, MPI_SUM,
                     MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    };
    double reduce = timeLoop(allreduce, budget);
    if (rank == 0)
      std::printf("{\"op\": \"allreduce\", \"ranks\": %d, \"bytes\": %lld, "
                  "\"seconds\": %.6g}\n",
                  world, (long long)bytes, reduce);

    // Overlap: the reduction started, about its length of computation,
    // then the wait. Hidden = (reduce + work - total) / reduce, the time
    // the wait saved. Measured twice: with no MPI call in the computation,
    // and with the computation cut into kCalls pieces and an MPI call (a
    // test of the request) between them, as a schedule's later buckets
    // start their reductions between parts: in MPICH (no asynchronous
    // progress) a reduction advances only inside MPI calls.
    int64_t iterations = std::max<int64_t>(
        1, int64_t(reduce * flopsRate / (2.0 * double(work.size()))));
    for (int calls : {0, kCalls}) {
      std::vector<double> hidden;
      int64_t pieces = calls + 1;
      for (int r = 0; r < 7; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        double s = MPI_Wtime();
        MPI_Request req;
        MPI_Iallreduce(in.data(), out.data(), count, MPI_FLOAT, MPI_SUM,
                       MPI_COMM_WORLD, &req);
        double w0 = MPI_Wtime();
        for (int64_t k = 0; k < pieces; ++k) {
          compute(work, std::max<int64_t>(1, iterations / pieces));
          if (k + 1 < pieces) {
            int done = 0;
            MPI_Test(&req, &done, MPI_STATUS_IGNORE);
          }
        }
        double worked = MPI_Wtime() - w0;
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        double total = MPI_Wtime() - s;
        double h = std::clamp((reduce + worked - total) / reduce, 0.0, 1.0);
        double least = h;
        MPI_Allreduce(&h, &least, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
        hidden.push_back(least);
      }
      if (rank == 0)
        std::printf("{\"op\": \"overlap\", \"ranks\": %d, \"bytes\": %lld, "
                    "\"calls\": %d, \"fraction\": %.4f}\n",
                    world, (long long)bytes, calls, median(hidden));
    }

    // Point to point between ranks 0 and 1: half a ping-pong.
    if (world >= 2) {
      auto pingPong = [&] {
        MPI_Request req;
        if (rank == 0) {
          MPI_Isend(in.data(), int(bytes), MPI_BYTE, 1, 7, MPI_COMM_WORLD, &req);
          MPI_Wait(&req, MPI_STATUS_IGNORE);
          MPI_Irecv(out.data(), int(bytes), MPI_BYTE, 1, 8, MPI_COMM_WORLD, &req);
          MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
          MPI_Irecv(out.data(), int(bytes), MPI_BYTE, 0, 7, MPI_COMM_WORLD, &req);
          MPI_Wait(&req, MPI_STATUS_IGNORE);
          MPI_Isend(in.data(), int(bytes), MPI_BYTE, 0, 8, MPI_COMM_WORLD, &req);
          MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
      };
      double half = timeLoop(pingPong, budget) / 2;
      if (rank == 0)
        std::printf("{\"op\": \"p2p\", \"ranks\": %d, \"bytes\": %lld, "
                    "\"seconds\": %.6g}\n",
                    world, (long long)bytes, half);
    }
    std::fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
