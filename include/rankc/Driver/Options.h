//===- Options.h - the command line of `rankc` ------------------*- C++ -*-===//
//
// shared/spec/cli.md as a struct: parseCommandLine checks every flag and
// every combination before any work, so that a wrong command line is exit 2
// with its reason and the usage.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_DRIVER_OPTIONS_H
#define RANKC_DRIVER_OPTIONS_H

#include <cstdint>
#include <optional>
#include <string>

namespace rankc {

struct DriverOptions {
  std::string command, input, output;
  std::string target = "cpu", emit = "exe";
  std::optional<std::string> cudaChip, precision, cpu;
  std::optional<double> bucketCapMb, firstBucketCapMb;
  std::optional<int64_t> threads;
  std::optional<std::string> bucketOrder;
  bool autoBuckets = false; ///< --bucket-cap-mb auto (with --machine)
  std::string machine;      ///< --machine MACHINE.json (rankc calibrate's)
  std::string profile;      ///< --profile STATS.json (launch --stats)
  std::string runtimeDir, depfile, cacheDir;
  bool printOutputs = false;
  bool timing = false;
  bool bulkSynchronous = false;
  bool verbose = false;
};

/// The usage text `--help` prints and every command-line error ends with.
extern const char *const kUsage;

enum class CommandLine { Run, Help, Error };
/// Fills `o` from argv; on Error, `error` says why (without "error: ").
CommandLine parseCommandLine(int argc, char **argv, DriverOptions &o,
                             std::string &error);

} // namespace rankc

#endif // RANKC_DRIVER_OPTIONS_H
