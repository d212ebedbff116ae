// Every kernel name in the public measurements (PM2LAT_DATA_DIR) classifies, and every GEMM
// name decodes to the tile it states: the names of the NeuSight kernel table (main and extra
// kernels of each call) and of the profiler traces' per-kernel tables. Skipped without the
// measurements.
#include <gtest/gtest.h>

#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "pm2lat/calibrate/csv_table.h"
#include "pm2lat/classifier.h"
#include "pm2lat/test/measurement_data.h"

namespace pm2lat::calibrate {
namespace {

constexpr const char* kNeusightKernelTable = "neusight/kernels.csv.gz";
constexpr const char* kTraces = "traces";
constexpr const char* kTraceKernelsSuffix = ".kernels.csv.gz";

void add_column(const CsvTable& t, const std::string& column, char separator,
                std::set<std::string>& names) {
  const std::optional<std::size_t> c = t.column(column);
  ASSERT_TRUE(c.has_value()) << t.source() << ": no column " << column;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const std::string& cell = t.row(i)[*c];
    std::size_t start = 0;
    while (start <= cell.size()) {
      const std::size_t end = separator ? cell.find(separator, start) : std::string::npos;
      const std::string name = cell.substr(start, end == std::string::npos ? end : end - start);
      if (!name.empty()) names.insert(name);
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
}

// Every distinct name, or nullopt when the measurements are not there.
std::optional<std::vector<std::string>> measured_kernel_names() {
  const auto neusight = test::measurement_file(kNeusightKernelTable);
  const auto traces = test::measurement_file(kTraces);
  if (!neusight || !traces) return std::nullopt;
  std::set<std::string> names;
  const CsvTable kernels = CsvTable::read(*neusight);
  add_column(kernels, "kernel_name", '\0', names);
  add_column(kernels, "extra_kernels", ';', names);
  for (const auto& e : std::filesystem::directory_iterator(*traces)) {
    const std::string file = e.path().filename().string();
    if (file.size() > std::string(kTraceKernelsSuffix).size() &&
        file.ends_with(kTraceKernelsSuffix))
      add_column(CsvTable::read(e.path()), "kernel_name", '\0', names);
  }
  return std::vector<std::string>(names.begin(), names.end());
}

const std::optional<std::vector<std::string>>& names_once() {
  static const auto names = measured_kernel_names();
  return names;
}

// What is missing when names_once() found nothing.
std::string missing() {
  return test::missing_measurements(
      test::measurement_file(kNeusightKernelTable) ? kTraces : kNeusightKernelTable);
}

// The tile a GEMM name states, read with regexes independent of the decoder.
struct StatedTile {
  int m = 0, n = 0, k = 0;
};

std::optional<StatedTile> stated_tile(const std::string& name) {
  std::smatch m;
  static const std::regex xmma(R"(tilesize(\d+)x(\d+)x(\d+))");
  static const std::regex nvjet(R"(nvjet_(?:sm\d+_)?[a-zA-Z0-9]+_(\d+)x(\d+)_(\d+)x(\d+))");
  static const std::regex cutlass(
      R"(cutlass_(?:\d+_)?[a-z0-9_]*?(?:gemm|fprop|dgrad|wgrad)[a-z0-9_]*?_(\d+)x(\d+)_(\d+)x(\d+)_)");
  static const std::regex cutlass_no_k(
      R"(cutlass_(?:\d+_)?[a-z0-9_]*?gemm[a-z0-9_]*?_(\d+)x(\d+)_(?:nn|nt|tn|tt)_)");
  static const std::regex legacy(
      R"(^(?:maxwell|pascal|volta|turing|ampere)_[a-z0-9_]*?[shi]\d*gemm[a-z0-9_]*?_(\d+)x(\d+)_)");
  static const std::regex old_sgemm(R"(^sgemm_(\d+)x(\d+)x(\d+)_)");
  if (std::regex_search(name, m, xmma) || std::regex_search(name, m, old_sgemm))
    return StatedTile{std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3])};
  if (std::regex_search(name, m, nvjet) || std::regex_search(name, m, cutlass))
    return StatedTile{std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3])};
  if (std::regex_search(name, m, cutlass_no_k) || std::regex_search(name, m, legacy))
    return StatedTile{std::stoi(m[1]), std::stoi(m[2]), 0};
  return std::nullopt;
}

TEST(MeasuredKernelNames, EveryNameClassifies) {
  const auto& names = names_once();
  if (!names) GTEST_SKIP() << missing();
  ASSERT_GT(names->size(), 400u) << "the tables name 461 distinct kernels";
  int unknown = 0;
  for (const auto& name : *names) {
    const KernelClass c = classify_kernel(name);
    if (c.family == KernelFamily::kUnknown) {
      ++unknown;
      ADD_FAILURE() << "unclassified: " << name.substr(0, 200);
    }
  }
  EXPECT_EQ(unknown, 0);
}

TEST(MeasuredKernelNames, EveryGemmNameDecodesToTheTileItStates) {
  const auto& names = names_once();
  if (!names) GTEST_SKIP() << missing();
  int checked = 0;
  for (const auto& name : *names) {
    const auto stated = stated_tile(name);
    if (!stated || name.find("gcgemm") != std::string::npos) continue;
    const KernelClass c = classify_kernel(name);
    // A convolution's split-K reduction carries its main kernel's name and tile.
    if (c.family == KernelFamily::kSplitKReduce &&
        name.find("execute_split_k_kernel") != std::string::npos)
      continue;
    ASSERT_TRUE(c.family == KernelFamily::kGemm || c.family == KernelFamily::kConv) << name;
    EXPECT_EQ(c.gemm.tile_m, stated->m) << name;
    EXPECT_EQ(c.gemm.tile_n, stated->n) << name;
    if (stated->k != 0) {
      EXPECT_EQ(c.gemm.tile_k, stated->k) << name;
    }
    ++checked;
  }
  EXPECT_GT(checked, 120);
}

}  // namespace
}  // namespace pm2lat::calibrate
