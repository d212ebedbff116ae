// Helpers shared by the reports tests: scratch directories, files, child processes, a
// predictor with a small in-memory GPU catalogue, and Kineto trace JSON written in code.
#pragma once

#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "pm2lat/predictor.h"

namespace pm2lat::test {

// A fresh empty directory under the system temp dir, unique per call; removed when the test
// that made it passes, kept when it fails.
std::filesystem::path scratch_dir(const std::string& name);

void write_text(const std::filesystem::path& file, const std::string& text);
void write_gzip(const std::filesystem::path& file, const std::string& text);
std::string read_text(const std::filesystem::path& file);

struct ProcessResult {
  bool signaled = false;
  int code = 0;  // exit code, or signal number when signaled
  std::string out;
  std::string err;
};

// Runs argv (no shell) with the current environment plus `env` ("NAME=value"), capturing
// stdout and stderr.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::vector<std::string>& env = {});

// H100-SXM, A100-SXM and L4 with their public specs and the aliases traces use; no
// profiles, so every prediction is the roofline fallback (or spec-scaled nothing).
Predictor catalogue_predictor();
// The same catalogue as a devices.json in `dir` (for the command line).
void write_catalogue(const std::filesystem::path& dir);

// Kineto trace JSON built event by event.
class TraceJson {
 public:
  explicit TraceJson(std::string device = "NVIDIA H100 80GB HBM3");
  // A CPU op on thread 1 from ts to ts + dur, with "Input Dims"/"Input type"/"Concrete Inputs".
  TraceJson& op(const std::string& name, double ts, double dur, const std::string& dims_json,
                const std::string& types_json, const std::string& concrete_json = "",
                const std::string& strides_json = "", const std::string& cat = "cpu_op");
  // A launch call at `ts` on thread 1 and its kernel on the GPU.
  TraceJson& kernel(const std::string& name, double launch_ts, double kernel_ts, double dur,
                    std::array<unsigned, 3> grid = {1, 1, 1},
                    std::array<unsigned, 3> block = {128, 1, 1}, int stream = 7,
                    const std::string& launch_api = "cudaLaunchKernel",
                    const std::string& extra_args = "");
  std::string str() const;

 private:
  std::string device_;
  std::vector<std::string> events_;
  long long next_correlation_ = 100;
};

// A synthetic trace in the Kineto format, written for the tests: one BERT-base encoder layer's
// forward pass in BF16 on an H100 (8 x 512 tokens; GEMMs with their addmm operators,
// FlashAttention, layer norm, GELU, residual add), every kernel linked to its operator with
// input shapes. Kernel names and launch geometry are the ones PyTorch uses; the durations are
// invented round numbers, not measurements.
std::string transformer_layer_trace();
inline constexpr int kTransformerLayerTraceKernels = 9;

// NeuSight's model-run layout (index.csv and <device>/<run>.csv) written in a fresh scratch
// directory named `name`: a two-layer toy training run measured on a V100 with its operator
// file (a linear layer, a GELU, a view), the same run measured on a T4 end to end only, and a
// T4 batch the V100 did not run. Invented round numbers, not measurements.
std::filesystem::path write_toy_model_runs(const std::string& name);

}  // namespace pm2lat::test
