// `pm2lat eval kernels`: predicts every row of a NeuSight-format kernel table on its own GPU
// (from shapes, kernel name and launch geometry, never from its latency) and summarises the
// error per device x op x kernel family, per device and overall.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/measured_guard.h"
#include "pm2lat/predictor.h"
#include "pm2lat/reports/eval/band_rows.h"
#include "pm2lat/reports/eval/error_stats.h"

namespace pm2lat::reports {

struct KernelEvalGroup {
  std::string device, op, family;
  ErrorSummary error;
  double measured_us = 0, predicted_us = 0;  // sums: the group's whole-time error and ratio
};

struct KernelEvalDevice {
  std::string device;
  ErrorSummary error;
  double measured_us = 0, predicted_us = 0;
  ErrorSummary gemm;
  bool spec_scaled = false;  // the device has no profile: predictions were scaled
};

// One device and op's rows of one collection of the table: its `split` column, which in
// NeuSight's table tells the random shapes timed to fit a model (`train`) from the shapes of its
// evaluation models (`test`), timed apart (predictor/ACCURACY.md, "Two collections in one kernel
// table"). Empty for a table without the column.
struct KernelEvalCollection {
  std::string device, op, collection;
  ErrorSummary error;
  double measured_us = 0, predicted_us = 0;
  double median_ratio = 0;  // of predicted over measured: the collection's bias, signed
};

struct KernelEvalResult {
  std::vector<KernelEvalGroup> groups;
  std::vector<KernelEvalCollection> collections;  // by device, op, collection
  std::vector<KernelEvalDevice> devices;
  ErrorSummary overall;
  std::size_t unknown_devices = 0;  // rows whose GPU is not in the catalogue
};

// Kernel-level family label used in the tables: the GEMM naming scheme for GEMM kernels
// ("legacy_cublas", "xmma", "cutlass2", ...), the kernel family otherwise.
std::string family_label(const KernelClass& cls);

// `band_rows`: when set, every scored prediction is also written there (band_rows.h).
KernelEvalResult eval_kernels(Predictor& predictor,
                              const std::vector<calibrate::MeasuredCall>& calls,
                              BandRows* band_rows = nullptr);

void print_kernel_eval(std::ostream& out, const KernelEvalResult& r);
// The rows by collection (`pm2lat eval kernels --by-collection`).
void print_kernel_eval_collections(std::ostream& out, const KernelEvalResult& r);
nlohmann::json kernel_eval_json(const KernelEvalResult& r);

}  // namespace pm2lat::reports

namespace pm2lat::reports {

// Cross-GPU scoring (`pm2lat eval kernels --source A --target B`): every shape measured on
// both A and B is presented as the runtime would see it on A (A's kernel name, grid, block,
// shape) and predicted on B with B's profile; B's row is only the ground truth. With the
// measurement guard (measured_guard.h), A's row is also the runtime's measurement on A: the
// model predicts the shape on A too, and when that disagrees with A's measured time the
// forecast for B is anchored to it.
struct CrossGroup {
  std::string source, target, op;
  ErrorSummary error;        // the forecasts as made (guarded when the guard is on)
  ErrorSummary model_only;   // the same rows, the model's forecasts without the guard
  std::size_t anchored = 0;  // forecasts the guard anchored
};

struct CrossEvalResult {
  std::string group_name = "op";     // what CrossGroup::op holds: "op" or "dtype"
  std::vector<CrossGroup> pairs;     // per (source, target, op)
  std::vector<CrossGroup> totals;    // per (source, target), op = "all"
  std::vector<CrossGroup> by_group;  // per op over every pair, source = target = "all"
  ErrorSummary overall;
  ErrorSummary gemm;     // GEMM rows over all pairs
  bool guarded = false;  // forecasts went through the measurement guard
};

// How cross-GPU rows are grouped besides (source, target): by the table's operator, or by
// the GEMM's operand type with its scaling ("bf16", "fp8", "fp8_block", "nvfp4").
enum class CrossGrouping { kByOp, kByGemmType };

// `source` / `target`: GPU names as in the table or the catalogue; "all" = every GPU in the
// table (pairs of distinct GPUs). `graph_replay`: the table timed calls in replayed CUDA
// graphs (AIConfigurator), and predictions are made in that timing. `guard`: the policy of the
// measurement guard; none = the model's forecasts only.
CrossEvalResult eval_kernels_cross(Predictor& predictor,
                                   const std::vector<calibrate::MeasuredCall>& calls,
                                   const std::string& source, const std::string& target,
                                   bool graph_replay = false,
                                   CrossGrouping grouping = CrossGrouping::kByOp,
                                   const std::optional<GuardPolicy>& guard = std::nullopt,
                                   BandRows* band_rows = nullptr);

void print_cross_eval(std::ostream& out, const CrossEvalResult& r);
// Per (source, target): n, anchored, mean and p95 with the guard and without it, and how many
// pairs meet the guard's criterion (p95 lower, mean not raised).
void print_guard_comparison(std::ostream& os, const CrossEvalResult& r);
bool guard_lowers_p95(const CrossGroup& g) noexcept;
bool guard_raises_mean(const CrossGroup& g) noexcept;
nlohmann::json cross_eval_json(const CrossEvalResult& r);

// The source x target matrix of MAPE (GEMM rows only when `gemm_only`), for closing notes.
void print_cross_matrix(std::ostream& out, const CrossEvalResult& r);

}  // namespace pm2lat::reports
