// A PyTorch profiler (Kineto) trace reduced to what replay needs: the GPU kernels with their
// launch geometry and CUPTI durations, the runtime/driver calls that launched them, and the
// CPU operators (with recorded input shapes) those calls ran inside.
//
// Accepted input: the Chrome-trace JSON Kineto writes ({"traceEvents": [...],
// "deviceProperties": [...], "distributedInfo": {...}}) or a bare event array, in every
// spelling seen across PyTorch versions (category "kernel"/"Kernel", "cpu_op"/"Operator",
// "cuda_runtime"/"Runtime", "Input Dims"/"Input dims", ...). Other events are dropped while
// parsing so traces with millions of Python events stay cheap.
#pragma once

#include <cstdint>
#include <deque>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pm2lat/kernel_launch.h"
#include "pm2lat/reports/gpu_transfers.h"

namespace pm2lat::reports {

class ProgressBar;

// Distinct strings (kernel and operator names repeat thousands of times) stored once.
class StringTable {
 public:
  std::uint32_t intern(std::string_view s);
  const std::string& operator[](std::uint32_t id) const { return strings_[id]; }
  std::size_t size() const noexcept { return strings_.size(); }

 private:
  std::deque<std::string> strings_;  // stable addresses for the views in index_
  std::unordered_map<std::string_view, std::uint32_t> index_;
};

struct TraceDevice {
  int id = 0;
  std::string name;  // as the trace says: "NVIDIA H100 80GB HBM3"
  int sm_count = 0;
  int cc_major = 0;
  int cc_minor = 0;
};

// One input of an operator as Kineto records it ("Input Dims", "Input type",
// "Input Strides", "Concrete Inputs" at the same position).
struct OpInput {
  std::string type;  // "float", "c10::BFloat16", "Scalar", "TensorList", "" ...
  // One shape for a tensor, one per element for a recorded tensor list, none for scalars.
  std::vector<std::vector<std::int64_t>> shapes;
  std::vector<std::int64_t> strides;  // of a single tensor, when recorded
  std::string concrete;               // "Concrete Inputs" value ("" when not recorded)
};

// Collective parameters PyTorch attaches to record_param_comms ops and NCCL kernels.
struct CollectiveArgs {
  std::string name;  // "allreduce", "all_to_all", ...
  std::int64_t in_elements = -1;
  std::int64_t out_elements = -1;
  std::string dtype;  // "Float", "BFloat16", ...
  std::int32_t group_size = 0;

  bool present() const noexcept { return in_elements >= 0 || out_elements >= 0; }
};

// A CPU operator or user annotation (a time range on one thread).
struct TraceOp {
  std::uint32_t name = 0;   // into KinetoTrace::strings
  bool annotation = false;  // user_annotation (record_function, "nccl:all_reduce") vs operator
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  double ts_us = 0;
  double dur_us = 0;
  std::int32_t parent = -1;  // enclosing op on the same thread (filled by link_kernels_to_ops)
  std::vector<OpInput> inputs;
  CollectiveArgs collective;
};

// A runtime/driver call that launched GPU work (cudaLaunchKernel, cuLaunchKernelEx,
// cudaGraphLaunch, ...), keyed by its correlation id.
struct TraceLaunch {
  std::uint32_t name = 0;
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  double ts_us = 0;
};

struct TraceKernel {
  std::uint32_t name = 0;
  double ts_us = 0;
  double dur_us = 0;
  std::int32_t device = 0;
  std::int64_t stream = 0;
  std::int64_t correlation = -1;
  Dim3 grid;
  Dim3 block;
  std::uint32_t registers = 0;
  std::uint32_t shared_mem = 0;
  CollectiveArgs collective;
  // Filled by link_kernels_to_ops: innermost enclosing op of the launch call (-1: none) and
  // whether the kernel was a CUDA-graph node (its launch call says nothing about shapes).
  std::int32_t op = -1;
  bool launched = false;
  bool graph_launch = false;
};

struct KinetoTrace {
  std::string source;  // file name, for messages
  StringTable strings;
  std::vector<TraceDevice> devices;
  std::int32_t rank = -1;  // distributedInfo.rank, -1 when absent
  std::int32_t world_size = 0;
  std::vector<TraceKernel> kernels;  // sorted by start time
  std::vector<TraceOp> ops;
  std::unordered_map<std::int64_t, TraceLaunch> launches;  // by correlation id
  bool whole_us_timestamps = false;  // every kernel start is an integer (old traces)
  // Kernel events with no start time or no usable duration (missing, negative or not finite):
  // not replayed, and counted so that the replay says so instead of losing them silently.
  std::size_t skipped_kernels = 0;
  GpuTransfers transfers;  // gpu_memcpy and gpu_memset events: not kernels

  // The device a kernel ran on (by id), nullptr if deviceProperties did not list it.
  const TraceDevice* device(std::int32_t id) const noexcept;
};

// Parses trace JSON text. Throws InputError naming `source` for anything that is not a
// usable trace: invalid or truncated JSON, no trace events, no GPU kernels.
KinetoTrace parse_kineto_trace(std::string_view json_text, const std::string& source,
                               ProgressBar* progress = nullptr);

// Reads (plain or gzip) and parses a trace file.
KinetoTrace read_kineto_trace(const std::filesystem::path& file, ProgressBar* progress = nullptr);

}  // namespace pm2lat::reports
