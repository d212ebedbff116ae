// One measurement of an on-GPU calibration: what to run, how to time it, and what it is
// expected to cost. Tasks are plain values with a stable id, so that a journal of finished
// measurements can be matched against a plan rebuilt after an interruption.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pm2lat/dtype.h"

namespace pm2lat::calibrate::run {

enum class TaskKind : std::uint8_t {
  kLaunch = 0,      // launch overhead: empty kernels, alone and back to back
  kGemm,            // a GEMM shape with the algorithm cuBLASLt's heuristic picks
  kGemmCandidates,  // the same shape with each of the heuristic's next candidates
  kGemmFill,        // a kernel configuration found by kGemm, forced on more sizes
  kMemory,          // a memory-bound kernel of ours over one size
};

std::string_view to_string(TaskKind k) noexcept;
std::optional<TaskKind> parse_task_kind(std::string_view s) noexcept;

// Operand layout in the row-major (PyTorch) view, named after the operator that uses it.
enum class GemmLayout : std::uint8_t {
  kLinear = 0,  // y = x W^T: B stored transposed (nn.Linear forward)
  kMatmul,      // C = A B, neither transposed (batched: bmm)
  kWeightGrad,  // dW = dY^T X: A stored transposed (nn.Linear weight gradient)
};

std::string_view to_string(GemmLayout l) noexcept;
std::optional<GemmLayout> parse_gemm_layout(std::string_view s) noexcept;

// The operator key a GEMM measurement is recorded under in the profile ("linear", "matmul",
// "weight_grad", "bmm"): the predictor reads the layout from it.
std::string gemm_op_key(GemmLayout layout, std::int64_t batch);

enum class MemoryPattern : std::uint8_t {
  kCopy = 0,     // out = in, 16-byte vectors
  kAdd,          // out = a + b, 16-byte vectors
  kSoftmaxRows,  // one block per row: max, exp-sum, normalise
};

std::string_view to_string(MemoryPattern p) noexcept;
// The operator key of a pattern in the profile ("copy", "add", "softmax").
std::string_view memory_op_key(MemoryPattern p) noexcept;

struct GemmProblem {
  DType dtype = DType::kBf16;  // what --dtypes names: fp32 (strict), tf32, bf16, fp16, fp8_e4m3
  GemmLayout layout = GemmLayout::kLinear;
  std::int64_t batch = 1, m = 0, n = 0, k = 0;

  double flops() const noexcept;
  // A, B and C once, at the operand size (fp8 writes bf16).
  double bytes() const noexcept;
};

struct MemoryProblem {
  MemoryPattern pattern = MemoryPattern::kCopy;
  DType dtype = DType::kFp32;
  std::int64_t rows = 1, cols = 0;

  // Global-memory traffic of one launch: what the kernel reads and writes.
  double bytes_read() const noexcept;
  double bytes_written() const noexcept;
};

// How a task is timed: `rotation_sets` operand sets (so that no launch finds its inputs in
// L2), `launches` back-to-back launches captured in a graph per repetition, `warmup`
// repetitions discarded, the median of `reps` kept.
struct TimingPolicy {
  std::int32_t launches = 1;
  std::int32_t warmup = 2;
  std::int32_t reps = 10;
  std::int32_t rotation_sets = 1;
};

struct MeasurementTask {
  std::string id;  // stable key, e.g. "gemm/bf16/linear/1x4096x4096x1024"
  TaskKind kind = TaskKind::kGemm;
  GemmProblem gemm;      // kGemm, kGemmCandidates, kGemmFill
  MemoryProblem memory;  // kMemory
  // kGemmFill: the kGemm task whose chosen algorithm this task runs, and the kernel
  // configuration that algorithm ran there.
  std::string anchor;
  std::string config;
  std::int32_t candidates = 0;  // kGemmCandidates: how many heuristic results to request
  TimingPolicy timing;
  double estimated_us = 0;  // wall time the task is expected to take
};

// Ids, built the same way by the planner and by the fill planner.
std::string gemm_task_id(TaskKind kind, const GemmProblem& p);
std::string memory_task_id(const MemoryProblem& p);

}  // namespace pm2lat::calibrate::run
