// The alpha-beta fit on synthetic timings and the bucket chooser on
// profiles whose best split is known (issue 41).
#include "rankc/Analysis/CostModel.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace rankc;

TEST(AlphaBetaFit, RecoversAKnownLine) {
  std::vector<Timing> pts;
  for (double b = 1024; b <= (1 << 26); b *= 4)
    pts.push_back({b, 20e-6 + b / 10e9});
  AlphaBetaFit fit = fitAlphaBeta(pts);
  ASSERT_EQ(fit.pieces.size(), 1u);
  EXPECT_NEAR(fit.pieces[0].alpha, 20e-6, 1e-9);
  EXPECT_NEAR(fit.pieces[0].beta, 1 / 10e9, 1e-15);
  EXPECT_LT(fit.maxRelativeError, 1e-9);
}

TEST(AlphaBetaFit, NoiseStaysWithinItsSize) {
  std::vector<Timing> pts;
  int k = 0;
  for (double b = 1024; b <= (1 << 26); b *= 2, ++k)
    pts.push_back({b, (5e-6 + b / 4e9) * (k % 2 ? 1.03 : 0.97)});
  AlphaBetaFit fit = fitAlphaBeta(pts);
  EXPECT_NEAR(fit.seconds(1 << 20), 5e-6 + (1 << 20) / 4e9, 0.05 * fit.seconds(1 << 20));
  EXPECT_LT(fit.maxRelativeError, 0.07);
}

TEST(AlphaBetaFit, TwoRegimesGiveTwoPieces) {
  // Eager protocol below 64 KiB, rendezvous (another latency and
  // bandwidth) above: one line is off by far more than two.
  std::vector<Timing> pts;
  for (double b = 1024; b <= (1 << 26); b *= 2)
    pts.push_back({b, b < 65536 ? 2e-6 + b / 2e9 : 40e-6 + b / 8e9});
  AlphaBetaFit fit = fitAlphaBeta(pts);
  ASSERT_EQ(fit.pieces.size(), 2u);
  EXPECT_NEAR(fit.pieces[1].alpha, 40e-6, 1e-9);
  EXPECT_NEAR(fit.pieces[1].beta, 1 / 8e9, 1e-15);
  EXPECT_NEAR(fit.pieces[0].alpha, 2e-6, 1e-10);
  EXPECT_GT(fit.pieces[1].fromBytes, 32768);
  EXPECT_LT(fit.pieces[1].fromBytes, 65536);
  EXPECT_LT(fit.maxRelativeError, 1e-6);
}

namespace {
AlphaBetaFit line(double alpha, double beta) {
  AlphaBetaFit f;
  f.pieces = {{0, alpha, beta}};
  return f;
}
} // namespace

TEST(ChooseBuckets, AllAtOnceIsOneBucket) {
  // Every gradient ready at the same time: any split only adds latency.
  std::vector<ReadyGradient> g(6, {1 << 20, 1.0});
  BucketChoice c = chooseBuckets(g, line(1e-3, 1e-9));
  EXPECT_EQ(c.firstOfBucket, std::vector<unsigned>({0}));
  EXPECT_NEAR(c.finishSeconds, 1.0 + 1e-3 + 6 * (1 << 20) * 1e-9, 1e-12);
}

TEST(ChooseBuckets, SpreadOutAndCheapLatencyIsOnePerGradient) {
  // Gradients far apart, latency negligible: each reduced as it is ready,
  // all hidden but the last.
  std::vector<ReadyGradient> g;
  for (int i = 0; i < 5; ++i)
    g.push_back({1000, 1.0 * i});
  BucketChoice c = chooseBuckets(g, line(1e-9, 1e-6));
  EXPECT_EQ(c.firstOfBucket, std::vector<unsigned>({0, 1, 2, 3, 4}));
  EXPECT_NEAR(c.finishSeconds, 4.0 + 1e-9 + 1e-3, 1e-12);
}

TEST(ChooseBuckets, BetweenTheTwo) {
  // Two bursts of gradients: one bucket per burst beats both extremes.
  std::vector<ReadyGradient> g = {{100, 0.0}, {100, 0.0}, {100, 0.0},
                                  {100, 5.0}, {100, 5.0}, {100, 5.0}};
  AlphaBetaFit cost = line(1.0, 1e-3);
  BucketChoice c = chooseBuckets(g, cost);
  EXPECT_EQ(c.firstOfBucket, std::vector<unsigned>({0, 3}));
  EXPECT_NEAR(c.finishSeconds, 5.0 + 1.0 + 0.3, 1e-12);
  EXPECT_GT(bucketsFinish(g, {0}, cost), c.finishSeconds);
  EXPECT_GT(bucketsFinish(g, {0, 1, 2, 3, 4, 5}, cost), c.finishSeconds);
}

TEST(ChooseBuckets, NeverWorseThanAnyFixedSplit) {
  // Exhaustive over the 2^(n-1) splits of a small irregular profile.
  std::vector<ReadyGradient> g = {{4096, 0.1}, {1 << 20, 0.15}, {512, 0.4},
                                  {1 << 16, 0.41}, {1 << 22, 0.9}, {64, 1.3},
                                  {1 << 18, 1.31}};
  AlphaBetaFit cost = line(2e-3, 5e-9);
  BucketChoice c = chooseBuckets(g, cost);
  unsigned n = g.size();
  for (unsigned mask = 0; mask < (1u << (n - 1)); ++mask) {
    std::vector<unsigned> split = {0};
    for (unsigned i = 1; i < n; ++i)
      if (mask & (1u << (i - 1)))
        split.push_back(i);
    EXPECT_LE(c.finishSeconds, bucketsFinish(g, split, cost) + 1e-15);
  }
  EXPECT_NEAR(bucketsFinish(g, c.firstOfBucket, cost), c.finishSeconds, 1e-15);
}
