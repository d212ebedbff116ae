// The kernels of a run (one or more ranks, live or replayed) with their predictions, in the
// compact column form every report reads: one row per kernel, one prediction column per
// target GPU. A records file is the interchange format; this is the working form (a few
// dozen bytes per kernel, so millions of kernels fit).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pm2lat/kernel_class.h"
#include "pm2lat/prediction.h"
#include "pm2lat/record_jsonl.h"
#include "pm2lat/reports/replay/kineto_trace.h"

namespace pm2lat::reports {

// One rank (process) of the run: where its kernels came from.
struct RankInfo {
  std::int32_t rank = 0;
  std::string gpu;     // canonical catalogue name of the GPU it ran on ("" = unknown)
  std::string source;  // records file or trace
  std::string host;
  std::string command;
  bool spec_scaled = false;  // its own GPU has no profile: own-GPU predictions are scaled
  // How finely its measured times were read, in µs: 1 for a trace whose timestamps are whole
  // microseconds (a duration is then known to ±1 µs), 0 for CUPTI's nanoseconds.
  double timer_resolution_us = 0;
};

struct KernelRow {
  std::uint32_t name = 0;  // into RunTable::names
  KernelFamily family = KernelFamily::kUnknown;
  std::int32_t rank_index = 0;  // into RunTable::ranks
  std::uint64_t stream = 0;
  std::uint64_t ts_ns = 0;
  double measured_us = std::nan("");  // NaN when not measured
  bool measured() const noexcept { return !std::isnan(measured_us); }
};

class RunTable {
 public:
  // Prediction columns; adding a target later leaves earlier rows without a value.
  std::size_t add_target(std::string_view canonical_name);
  std::size_t add_rank(RankInfo info);

  // Appends a kernel; its predictions are set with set_prediction().
  std::size_t add_kernel(std::string_view name, KernelFamily family, std::size_t rank_index,
                         std::uint64_t stream, std::uint64_t ts_ns,
                         std::optional<double> measured_us);
  void set_prediction(std::size_t row, std::size_t target, const Prediction& p);

  const std::vector<std::string>& targets() const noexcept { return targets_; }
  // A target predicted without a profile of its own (spec-scaled from another GPU's).
  void set_spec_scaled(std::size_t target, bool scaled);
  bool spec_scaled(std::size_t target) const noexcept;
  const std::vector<RankInfo>& ranks() const noexcept { return ranks_; }
  std::vector<RankInfo>& ranks() noexcept { return ranks_; }
  const std::vector<KernelRow>& kernels() const noexcept { return kernels_; }
  const std::string& name(std::uint32_t id) const { return names_[id]; }
  std::size_t size() const noexcept { return kernels_.size(); }

  // NaN when the target has no prediction for the row.
  double predicted_us(std::size_t row, std::size_t target) const;
  std::uint32_t flags(std::size_t row, std::size_t target) const;
  ModelKind model(std::size_t row, std::size_t target) const;
  // The prediction's expected error in percent (Prediction::band_pct); NaN when none.
  double band_pct(std::size_t row, std::size_t target) const;
  // Column of the GPU a row ran on, or npos when that GPU is not a target.
  std::size_t own_target(std::size_t row) const;
  std::size_t target_index(std::string_view name) const;  // npos when absent

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  void reserve(std::size_t rows);

 private:
  struct Cell {
    float us = std::nanf("");
    std::uint16_t flags = 0;
    ModelKind model = ModelKind::kNone;
    float band_pct = std::nanf("");
  };
  Cell& cell(std::size_t row, std::size_t target);
  const Cell* cell_or_null(std::size_t row, std::size_t target) const;

  std::vector<std::string> targets_;
  std::vector<bool> target_spec_scaled_;
  std::vector<RankInfo> ranks_;
  std::vector<std::size_t> rank_own_target_;  // per rank
  StringTable names_;
  std::vector<KernelRow> kernels_;
  std::size_t stride_ = 0;  // cells per row (grows by re-layout when targets are added)
  std::vector<Cell> cells_;
};

}  // namespace pm2lat::reports
