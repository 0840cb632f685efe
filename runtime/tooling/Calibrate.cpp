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
// is what the cost model may count as overlap. Last, a loop of f32
// multiply-adds and a copy give the rates the model estimates unprofiled
// computation with.
//
// Every time is the median of repetitions after warm-up, the slowest
// rank's. Rank 0 prints one JSON object per line:
//   {"op": "allreduce"|"p2p"|"overlap", "ranks": W, "bytes": B, "seconds": T}
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

/// Repetitions for a measurement of about `each` seconds within a budget.
int repsFor(double each, double budget) {
  int reps = each > 0 ? int(budget / each) : 50;
  return std::clamp(reps, 5, 50);
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

  for (int64_t bytes = minBytes; bytes <= maxBytes; bytes *= 4) {
    int count = int(bytes / 4);
    // Allreduce, as a bucket's: started, then waited for.
    auto allreduce = [&] {
      MPI_Request req;
      MPI_Iallreduce(in.data(), out.data(), count, MPI_FLOAT, MPI_SUM,
                     MPI_COMM_WORLD, &req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    };
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    allreduce(); // warm-up, and the estimate of one
    double one = slowest(MPI_Wtime() - start);
    int reps = repsFor(one, budget);
    std::vector<double> times;
    for (int r = 0; r < reps; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      double s = MPI_Wtime();
      allreduce();
      times.push_back(slowest(MPI_Wtime() - s));
    }
    double reduce = median(times);
    if (rank == 0)
      std::printf("{\"op\": \"allreduce\", \"ranks\": %d, \"bytes\": %lld, "
                  "\"seconds\": %.6g}\n",
                  world, (long long)bytes, reduce);

    // Overlap: the reduction started, about its length of computation
    // without MPI calls, then the wait. Hidden = (reduce + work - total) /
    // reduce, the time the wait saved.
    int64_t iterations = std::max<int64_t>(
        1, int64_t(reduce * flopsRate / (2.0 * double(work.size()))));
    std::vector<double> hidden;
    for (int r = 0; r < std::min(reps, 11); ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      double s = MPI_Wtime();
      MPI_Request req;
      MPI_Iallreduce(in.data(), out.data(), count, MPI_FLOAT, MPI_SUM,
                     MPI_COMM_WORLD, &req);
      double w0 = MPI_Wtime();
      compute(work, iterations);
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
                  "\"fraction\": %.4f}\n",
                  world, (long long)bytes, median(hidden));

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
      MPI_Barrier(MPI_COMM_WORLD);
      pingPong();
      std::vector<double> p2p;
      for (int r = 0; r < reps; ++r) {
        MPI_Barrier(MPI_COMM_WORLD);
        double s = MPI_Wtime();
        pingPong();
        p2p.push_back(slowest(MPI_Wtime() - s) / 2);
      }
      if (rank == 0)
        std::printf("{\"op\": \"p2p\", \"ranks\": %d, \"bytes\": %lld, "
                    "\"seconds\": %.6g}\n",
                    world, (long long)bytes, median(p2p));
    }
    std::fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
