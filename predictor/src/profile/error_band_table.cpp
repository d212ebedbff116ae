#include "pm2lat/error_band_table.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <vector>

#include "profile/json_fields.h"

namespace pm2lat {
namespace {

constexpr std::array<std::string_view, kBandFlagGroupCount> kFlagGroupNames{
    "none",    "fallback",     "anchored",    "shape_rejected",    "no_shape",
    "clamped", "extrapolated", "spec_scaled", "dtype_substituted", "communication"};

constexpr std::string_view kAny = "*";

// A level's fields as the table names them, in BandKey's (and BandLevel's) order.
constexpr std::array<std::string_view, std::tuple_size_v<BandLevel>> kFieldNames{
    "family", "model", "flags", "scope", "basis", "duration"};

using GroupKey = std::array<int, 6>;
static_assert(std::tuple_size_v<GroupKey> == std::tuple_size_v<BandLevel>);
static_assert(ErrorBandTable::kMaxLevels < ErrorBandTable::kNoLevel);

// An enum field of a group: "*" pools, anything else must be one of the names.
template <typename Parse, typename Name>
int read_enum(const json_fields::Reader& g, const char* key, Parse parse, Name name) {
  const json_fields::Reader f = g.child(key);
  const std::string s = f.string();
  if (s == kAny) return BandGroup::kAny;
  const auto v = parse(s);
  if (name(v) != s) f.fail("'" + s + "' is not a known value");
  return static_cast<int>(v);
}

// The table's fallback levels: each a list of the fields it keeps. The last must keep none,
// so that every prediction has a band while the table has any group.
std::vector<BandLevel> read_levels(const json_fields::Reader& list) {
  if (list.size() == 0 || list.size() > ErrorBandTable::kMaxLevels) {
    list.fail("has " + std::to_string(list.size()) + " levels, expected 1 to " +
              std::to_string(ErrorBandTable::kMaxLevels));
  }
  std::vector<BandLevel> levels(list.size());
  for (std::size_t l = 0; l < list.size(); ++l) {
    const json_fields::Reader fields = list.at(l);
    BandLevel& keeps = levels[l];
    keeps.fill(false);
    for (std::size_t f = 0; f < fields.size(); ++f) {
      const json_fields::Reader field = fields.at(f);
      const std::string name = field.string();
      const auto* it = std::find(kFieldNames.begin(), kFieldNames.end(), name);
      if (it == kFieldNames.end()) field.fail("'" + name + "' is not a field of a group");
      const auto i = static_cast<std::size_t>(it - kFieldNames.begin());
      if (keeps[i]) field.fail("'" + name + "' is named twice");
      keeps[i] = true;
    }
  }
  if (std::ranges::any_of(levels.back(), [](bool kept) { return kept; })) {
    list.at(list.size() - 1)
        .fail("must keep no field, so that no prediction is left without a band");
  }
  return levels;
}

}  // namespace

BandFlagGroup band_flag_group(std::uint32_t flags) noexcept {
  using namespace prediction_flags;
  if (flags & kCommunication) return BandFlagGroup::kCommunication;
  if (flags & kFallback) return BandFlagGroup::kFallback;
  if (flags & kAnchored) return BandFlagGroup::kAnchored;
  if (flags & kShapeRejected) return BandFlagGroup::kShapeRejected;
  if (flags & kNoShape) return BandFlagGroup::kNoShape;
  if (flags & kClamped) return BandFlagGroup::kClamped;
  if (flags & kExtrapolated) return BandFlagGroup::kExtrapolated;
  if (flags & kSpecScaled) return BandFlagGroup::kSpecScaled;
  if (flags & kDtypeSubstituted) return BandFlagGroup::kDtypeSubstituted;
  return BandFlagGroup::kNone;
}

std::string_view to_string(BandFlagGroup g) noexcept {
  const auto i = static_cast<std::size_t>(g);
  return i < kFlagGroupNames.size() ? kFlagGroupNames[i] : "none";
}

BandFlagGroup parse_band_flag_group(std::string_view s, bool* known) noexcept {
  for (std::size_t i = 0; i < kFlagGroupNames.size(); ++i) {
    if (kFlagGroupNames[i] == s) {
      if (known != nullptr) *known = true;
      return static_cast<BandFlagGroup>(i);
    }
  }
  if (known != nullptr) *known = false;
  return BandFlagGroup::kNone;
}

std::string_view to_string(BandScope s) noexcept {
  return s == BandScope::kCrossGpu ? "cross_gpu" : "same_gpu";
}

std::string_view to_string(BandDuration d) noexcept {
  return d == BandDuration::kShort ? "short" : "long";
}

ErrorBandTable ErrorBandTable::from_groups(const std::vector<BandGroup>& groups, double quantile,
                                           const std::vector<BandLevel>& levels) {
  std::map<GroupKey, const BandGroup*> by_key;
  for (const BandGroup& g : groups)
    by_key[{g.family, g.model, g.flags, g.scope, g.basis, g.duration}] = &g;
  ErrorBandTable t;
  t.quantile_ = quantile;
  t.empty_ = groups.empty();
  t.level_order_ = levels;
  for (std::size_t cell = 0; cell < kCells; ++cell) {
    // The key of the cell, from its index (index() read backwards).
    std::size_t rest = cell;
    GroupKey full{};
    for (std::size_t i = full.size(); i-- > 0;) {
      full[i] = static_cast<int>(rest % kDimensions[i]);
      rest /= kDimensions[i];
    }
    for (std::size_t level = 0; level < std::min(levels.size(), kMaxLevels); ++level) {
      GroupKey k = full;
      for (std::size_t i = 0; i < k.size(); ++i) {
        if (!levels[level][i]) k[i] = BandGroup::kAny;
      }
      const auto it = by_key.find(k);
      if (it == by_key.end()) continue;
      t.cells_[cell] = static_cast<float>(it->second->band_pct);
      t.levels_[cell] = static_cast<std::uint8_t>(level);
      break;
    }
  }
  // A forecast for another GPU is never surer than the same prediction for the GPU the kernel
  // ran on: it carries every error of that one plus the transfer's. The measured cross-GPU
  // groups are the tables' (call times of kernels every GPU calibrated), so a cross-GPU
  // kernel-time prediction otherwise falls to their pooled level (7.8 %) even where its
  // same-GPU band (a shapeless reduction: 206 %) says how little is known.
  for (std::size_t cell = 0; cell < kCells; ++cell) {
    if (cell / kScopeStride % kScopes != static_cast<std::size_t>(BandScope::kCrossGpu)) continue;
    const std::size_t same = cell - kScopeStride;  // the same key with scope same_gpu
    if (t.cells_[same] > t.cells_[cell]) t.cells_[cell] = t.cells_[same];
  }
  return t;
}

ErrorBandTable ErrorBandTable::load(const std::filesystem::path& file) {
  const auto root_json = json_fields::parse_file(file);
  const json_fields::Reader root(root_json, file.string(), "");
  json_fields::check_schema(root, "pm2lat.error_bands", 2);
  const double quantile = root.child("quantile").number();
  if (!(quantile > 0 && quantile < 1)) root.child("quantile").fail("must lie between 0 and 1");
  // The flag-group order the table was estimated with must be the one this build groups by.
  const json_fields::Reader order = root.child("flag_groups");
  if (order.size() != kBandFlagGroupCount) {
    order.fail("has " + std::to_string(order.size()) + " entries, this build has " +
               std::to_string(kBandFlagGroupCount));
  }
  for (std::size_t i = 0; i < kBandFlagGroupCount; ++i) {
    if (order.at(i).string() != kFlagGroupNames[i])
      order.at(i).fail("expected '" + std::string(kFlagGroupNames[i]) + "'");
  }
  const std::vector<BandLevel> levels = read_levels(root.child("levels"));
  const json_fields::Reader list = root.child("groups");
  std::vector<BandGroup> groups;
  groups.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json_fields::Reader g = list.at(i);
    BandGroup b;
    b.family = read_enum(
        g, "family", [](std::string_view s) { return parse_kernel_family(s); },
        [](KernelFamily v) { return to_string(v); });
    b.model = read_enum(
        g, "model", [](std::string_view s) { return parse_model_kind(s); },
        [](ModelKind v) { return to_string(v); });
    b.flags = read_enum(
        g, "flags", [](std::string_view s) { return parse_band_flag_group(s); },
        [](BandFlagGroup v) { return to_string(v); });
    b.scope = read_enum(
        g, "scope",
        [](std::string_view s) {
          return s == "cross_gpu" ? BandScope::kCrossGpu : BandScope::kSameGpu;
        },
        [](BandScope v) { return to_string(v); });
    b.basis = read_enum(
        g, "basis",
        [](std::string_view s) { return s == "call" ? TimeBasis::kCall : TimeBasis::kKernel; },
        [](TimeBasis v) { return to_string(v); });
    // Tables estimated before predictions were told apart by duration pool both.
    if (g.has("duration")) {
      b.duration = read_enum(
          g, "duration",
          [](std::string_view s) {
            return s == "short" ? BandDuration::kShort : BandDuration::kLong;
          },
          [](BandDuration v) { return to_string(v); });
    }
    b.band_pct = g.child("band_pct").non_negative();
    const auto n = g.child("n").integer();
    if (n <= 0) g.child("n").fail("must be positive");
    b.n = static_cast<std::size_t>(n);
    groups.push_back(b);
  }
  return from_groups(groups, quantile, levels);
}

}  // namespace pm2lat
