// Where tests find the public GPU measurements (NeuSight and AIConfigurator tables, profiler
// traces): the directory the CMake cache variable PM2LAT_DATA_DIR names (calibrate/DATA.md
// says what it holds and where it comes from). The repository does not carry them, so a test
// that needs them skips without them and says which variable to set:
//
//   const auto table = test::measurement_file("neusight/kernels.csv.gz");
//   if (!table) GTEST_SKIP() << test::missing_measurements("neusight/kernels.csv.gz");
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace pm2lat::test {

inline std::filesystem::path measurement_dir() { return PM2LAT_DATA_DIR; }

// `relative` (a file or a directory) inside the measurement directory, nullopt when absent.
inline std::optional<std::filesystem::path> measurement_file(const std::string& relative) {
  std::filesystem::path p = measurement_dir() / relative;
  std::error_code ec;
  if (!std::filesystem::exists(p, ec)) return std::nullopt;
  return p;
}

// Why a test skipped: what it needs and how to provide it.
inline std::string missing_measurements(const std::string& relative) {
  return "needs the public measurements: " + (measurement_dir() / relative).string() +
         " is missing (set PM2LAT_DATA_DIR to the data directory; see calibrate/DATA.md)";
}

}  // namespace pm2lat::test
