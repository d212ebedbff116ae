// The expected error of a prediction: the 80th percentile of out-of-sample APE of the
// predictions like it (same family, model, flag group, same-GPU or cross-GPU, time basis),
// estimated by scripts/build-error-bands.sh and shipped as calibrate/profiles/error_bands.json.
// Loaded once; every cell of the (family, model, flag group, scope, basis) index is resolved
// at load through the fallback order below, so a lookup is one array read.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/prediction.h"

namespace pm2lat {

// Its file name in a profile directory (beside devices.json): Predictor::from_directory loads it.
inline constexpr const char* kErrorBandsFile = "error_bands.json";

// The one flag that says most about how far a prediction can be trusted; a prediction with
// several takes the first in this order (the order of band_flag_group()).
enum class BandFlagGroup : std::uint8_t {
  kNone = 0,
  kFallback,
  kAnchored,
  kShapeRejected,
  kNoShape,
  kClamped,
  kExtrapolated,
  kSpecScaled,
  kDtypeSubstituted,
  kCommunication,
};
inline constexpr std::size_t kBandFlagGroupCount =
    static_cast<std::size_t>(BandFlagGroup::kCommunication) + 1;

BandFlagGroup band_flag_group(std::uint32_t flags) noexcept;
std::string_view to_string(BandFlagGroup g) noexcept;
// kNone for an unknown name; `known` says whether it was one.
BandFlagGroup parse_band_flag_group(std::string_view s, bool* known = nullptr) noexcept;

// Whether the prediction is for the GPU the kernel ran on or for another one.
enum class BandScope : std::uint8_t { kSameGpu = 0, kCrossGpu = 1 };
std::string_view to_string(BandScope s) noexcept;

// The key of one prediction in the band table.
struct BandKey {
  KernelFamily family = KernelFamily::kUnknown;
  ModelKind model = ModelKind::kNone;
  BandFlagGroup flags = BandFlagGroup::kNone;
  BandScope scope = BandScope::kSameGpu;
  TimeBasis basis = TimeBasis::kKernel;
};

// One group of the table file: "*" in a field (kAny here) pools every value of it.
struct BandGroup {
  static constexpr int kAny = -1;
  int family = kAny, model = kAny, flags = kAny, scope = kAny, basis = kAny;
  double band_pct = 0;  // the quantile of out-of-sample APE, in percent
  std::size_t n = 0;    // predictions it rests on
};

class ErrorBandTable {
 public:
  // The fallback order, finest first: a group with fewer than the table's min_count
  // predictions is not in the file, so the next level answers. The last level pools all.
  // A cross-GPU band is at least the same key's same-GPU band (from_groups).
  static constexpr std::size_t kLevels = 8;

  ErrorBandTable() = default;  // empty: every band is NaN
  // Throws ProfileError naming the file and field on a malformed table.
  static ErrorBandTable load(const std::filesystem::path& file);
  // The same from groups already read (tests, merged tables).
  static ErrorBandTable from_groups(const std::vector<BandGroup>& groups, double quantile);

  bool empty() const noexcept { return empty_; }
  double quantile() const noexcept { return quantile_; }

  // The band of one prediction in percent of the prediction, NaN when the table is empty.
  float band_pct(const BandKey& k) const noexcept {
    return cells_[index(k.family, k.model, k.flags, k.scope, k.basis)];
  }
  float band_pct(KernelFamily family, const Prediction& p, bool same_gpu) const noexcept {
    return band_pct({family, p.model, band_flag_group(p.flags),
                     same_gpu ? BandScope::kSameGpu : BandScope::kCrossGpu, p.basis});
  }
  // Which level answered a key (0 = finest; kLevels when none): for tests and reports.
  std::size_t level(const BandKey& k) const noexcept {
    return levels_[index(k.family, k.model, k.flags, k.scope, k.basis)];
  }

 private:
  static constexpr std::size_t kModels = static_cast<std::size_t>(ModelKind::kMeasuredTable) + 1;
  static constexpr std::size_t kScopes = 2;
  static constexpr std::size_t kBases = 2;
  static constexpr std::size_t kCells =
      kKernelFamilyCount * kModels * kBandFlagGroupCount * kScopes * kBases;

  static std::size_t index(KernelFamily f, ModelKind m, BandFlagGroup g, BandScope s,
                           TimeBasis b) noexcept {
    const auto fi = std::min<std::size_t>(static_cast<std::size_t>(f), kKernelFamilyCount - 1);
    const auto mi = std::min<std::size_t>(static_cast<std::size_t>(m), kModels - 1);
    const auto gi = std::min<std::size_t>(static_cast<std::size_t>(g), kBandFlagGroupCount - 1);
    return (((fi * kModels + mi) * kBandFlagGroupCount + gi) * kScopes +
            static_cast<std::size_t>(s) % kScopes) *
               kBases +
           static_cast<std::size_t>(b) % kBases;
  }

  bool empty_ = true;
  double quantile_ = std::nan("");
  std::array<float, kCells> cells_ = filled(std::nanf(""));
  std::array<std::uint8_t, kCells> levels_ = filled_levels();

  static std::array<float, kCells> filled(float v) {
    std::array<float, kCells> a{};
    a.fill(v);
    return a;
  }
  static std::array<std::uint8_t, kCells> filled_levels() {
    std::array<std::uint8_t, kCells> a{};
    a.fill(static_cast<std::uint8_t>(kLevels));
    return a;
  }
};

}  // namespace pm2lat
