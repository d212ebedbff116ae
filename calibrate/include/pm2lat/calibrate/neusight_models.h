// The NeuSight model-run format: an index of whole-model runs (measured end-to-end latency,
// NeuSight's own prediction and error) and, per run, a per-operator file of one traced
// transformer layer whose rows repeat `repeat` times in the real model.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pm2lat::calibrate {

// Dimensions of one tensor ("2x512x1024"); empty for a Python scalar ("1").
using TensorDims = std::vector<std::int64_t>;

struct ModelOpRow {
  std::int32_t index = 0;
  std::string name;
  std::string op_kind;   // linear, addmm, matmul, bmm, softmax, layernorm, add, view, size ...
  std::string op_class;  // gemm, elementwise, softmax, layernorm, embedding, reduction, memory,
                         // cast, view, host, io
  std::int64_t repeat = 1;
  std::vector<std::optional<TensorDims>> inputs;  // nullopt = not a tensor (scalar / value)
  std::optional<TensorDims> output;
  std::string dtype;  // output dtype ("fp32", "int64", "bool", "" = not a tensor)
  // NeuSight's GEMM (N = reduction) and vector shapes, when the row has them.
  std::int64_t B = 0, M = 0, N = 0, K = 0, H = 0;
  // NeuSight's decomposition of the backward and of the gradient accumulation
  // ("MEM:30522x1024;...", "VECadd:1x31254528"): the only place a file states parameter
  // shapes that are not operator inputs (embedding tables).
  std::string neusight_bw_ops, neusight_acc_ops;
  // Measured latencies (diagnosis only: never inputs to predictions).
  double fw_us = 0, bw_us = 0, acc_us = 0;
};

struct ModelRun {
  std::string device, model, mode, option;
  std::int64_t seqlen = 0, batch = 0, num_layer = 0;
  double measured_e2e_ms = 0;
  // The benchmark times a training step's forward and backward separately (e2e = sum).
  std::optional<double> measured_fw_ms, measured_bw_ms;
  std::optional<double> neusight_pred_ms, neusight_err_pct;
  std::string ops_file;         // relative to the index; empty when the run has none
  std::vector<ModelOpRow> ops;  // filled by load_model_runs when the file exists
  bool training() const { return mode == "train"; }
};

struct ModelRunsReadStats {
  std::size_t runs = 0, with_ops = 0, missing_ops_file = 0;
};

// Reads DIR/index.csv and every per-operator file it names that exists under DIR.
// Throws TableError for a missing/garbled index or a garbled operator file.
std::vector<ModelRun> load_model_runs(const std::filesystem::path& dir,
                                      ModelRunsReadStats* stats = nullptr);

// "2x512x1024" -> {2, 512, 1024}; "1" -> nullopt (a Python value); "" -> nullopt.
std::optional<TensorDims> parse_dims_text(const std::string& text);

}  // namespace pm2lat::calibrate
