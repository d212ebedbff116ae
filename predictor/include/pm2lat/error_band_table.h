// The expected error of a prediction: the 80th percentile of out-of-sample APE of the
// predictions like it (same family, model, flag group, same-GPU or cross-GPU, time basis,
// short or long predicted time), estimated by scripts/build-error-bands.sh and shipped as
// calibrate/profiles/error_bands.json. Loaded once; every cell of the (family, model, flag
// group, scope, basis, duration) index is resolved at load through the table's fallback
// levels, so a lookup is one array read.
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

// Whether the predicted time is short: a kernel of a few microseconds is mostly its fixed
// cost (launch, ramp-up, drain: 1.4-3 us in the A100 and H100 traces) and its reading is whole
// microseconds in some traces, so it errs by a larger share than a long one of the same
// family and model. The band of a long prediction is not widened by the short ones.
enum class BandDuration : std::uint8_t { kShort = 0, kLong = 1 };
// Below this predicted time a prediction is short. Chosen on the traces' leave-one-out band
// coverage among 5, 10 and 20 us (predictor/MODELS.md, "Error bands"): 10 us puts six of
// the eight traces inside 70-90 %, 5 and 20 us four.
inline constexpr double kShortPredictionUs = 10.0;
inline BandDuration band_duration(double predicted_us) noexcept {
  return predicted_us < kShortPredictionUs ? BandDuration::kShort : BandDuration::kLong;
}
std::string_view to_string(BandDuration d) noexcept;

// The key of one prediction in the band table.
struct BandKey {
  KernelFamily family = KernelFamily::kUnknown;
  ModelKind model = ModelKind::kNone;
  BandFlagGroup flags = BandFlagGroup::kNone;
  BandScope scope = BandScope::kSameGpu;
  TimeBasis basis = TimeBasis::kKernel;
  BandDuration duration = BandDuration::kLong;
};

// One fallback level of a table: which of a key's fields (in BandKey's order: family, model,
// flags, scope, basis, duration) its groups keep; the others are pooled. The order of the
// levels is set where the table is estimated (scripts/build-error-bands.py, LEVELS) and
// carried in the file, so the predictor follows the table it reads.
using BandLevel = std::array<bool, 6>;

// One group of the table file: "*" in a field (kAny here) pools every value of it. A table
// without the duration field pools both durations in every group.
struct BandGroup {
  static constexpr int kAny = -1;
  int family = kAny, model = kAny, flags = kAny, scope = kAny, basis = kAny, duration = kAny;
  double band_pct = 0;  // the quantile of out-of-sample APE, in percent
  std::size_t n = 0;    // predictions it rests on
};

class ErrorBandTable {
 public:
  // The most fallback levels a table may have (a level's index is held in a byte).
  static constexpr std::size_t kMaxLevels = 64;
  // level() of a key no level answered.
  static constexpr std::size_t kNoLevel = 255;

  ErrorBandTable() = default;  // empty: every band is NaN
  // Throws ProfileError naming the file and field on a malformed table.
  static ErrorBandTable load(const std::filesystem::path& file);
  // The same from groups and levels already read (tests, merged tables). `levels` is the
  // fallback order, finest first: a group with fewer than the table's min_count predictions
  // is not in the file, so the next level that has the key's group answers. A cross-GPU band
  // is at least the same key's same-GPU band.
  static ErrorBandTable from_groups(const std::vector<BandGroup>& groups, double quantile,
                                    const std::vector<BandLevel>& levels);

  bool empty() const noexcept { return empty_; }
  double quantile() const noexcept { return quantile_; }

  // The band of one prediction in percent of the prediction, NaN when the table is empty.
  float band_pct(const BandKey& k) const noexcept { return cells_[index(k)]; }
  float band_pct(KernelFamily family, const Prediction& p, bool same_gpu) const noexcept {
    return band_pct({family, p.model, band_flag_group(p.flags),
                     same_gpu ? BandScope::kSameGpu : BandScope::kCrossGpu, p.basis,
                     band_duration(p.us)});
  }
  // Which level answered a key (0 = finest; kNoLevel when none): for tests and reports.
  std::size_t level(const BandKey& k) const noexcept { return levels_[index(k)]; }
  // The fallback levels the table was resolved with, finest first.
  const std::vector<BandLevel>& levels() const noexcept { return level_order_; }

 private:
  static constexpr std::size_t kModels = static_cast<std::size_t>(ModelKind::kMeasuredTable) + 1;
  static constexpr std::size_t kScopes = 2;
  static constexpr std::size_t kBases = 2;
  static constexpr std::size_t kDurations = 2;
  // The cell index's dimensions, outermost first, in BandKey's field order: index() composes a
  // cell from a key with them, and from_groups() takes each cell apart with them.
  static constexpr std::array<std::size_t, 6> kDimensions{
      kKernelFamilyCount, kModels, kBandFlagGroupCount, kScopes, kBases, kDurations};
  static constexpr std::size_t kCells = [] {
    std::size_t n = 1;
    for (const std::size_t d : kDimensions) n *= d;
    return n;
  }();
  // Cells one scope apart (the same key, same-GPU and cross-GPU): the dimensions inside it.
  static constexpr std::size_t kScopeStride = kBases * kDurations;

  static std::size_t index(const BandKey& k) noexcept {
    const std::array<std::size_t, kDimensions.size()> values{
        static_cast<std::size_t>(k.family), static_cast<std::size_t>(k.model),
        static_cast<std::size_t>(k.flags),  static_cast<std::size_t>(k.scope),
        static_cast<std::size_t>(k.basis),  static_cast<std::size_t>(k.duration)};
    std::size_t cell = 0;
    for (std::size_t d = 0; d < kDimensions.size(); ++d)
      cell = cell * kDimensions[d] + std::min(values[d], kDimensions[d] - 1);
    return cell;
  }

  bool empty_ = true;
  double quantile_ = std::nan("");
  std::vector<BandLevel> level_order_;
  std::array<float, kCells> cells_ = filled(std::nanf(""));
  std::array<std::uint8_t, kCells> levels_ = filled_levels();

  static std::array<float, kCells> filled(float v) {
    std::array<float, kCells> a{};
    a.fill(v);
    return a;
  }
  static std::array<std::uint8_t, kCells> filled_levels() {
    std::array<std::uint8_t, kCells> a{};
    a.fill(static_cast<std::uint8_t>(kNoLevel));
    return a;
  }
};

}  // namespace pm2lat
