// The NeuSight kernel-table format (one PyTorch operator call per row: kernel name, launch
// geometry, shape, latency timed with CUDA events around the call) turned into kernel
// records. NeuSight's GEMM convention has N as the reduction dimension; records use the
// usual one (m, n = output, k = reduction).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "pm2lat/calibrate/csv_table.h"
#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_record.h"

namespace pm2lat::calibrate {

struct MeasuredCall {
  std::string device;   // as the table names it ("H100-SXM-80GB", "T4", ...)
  std::string op;       // "bmm", "linear", "add", "ln", "softmax", "conv", ...
  std::string split;    // the table's own split column ("train", "test"), may be empty
  KernelRecord record;  // launch + op context + measured_us (TimeBasis::kCall)
  std::vector<std::string> extra_kernels;
  std::string shape_key;  // op and shape, identical for the same shape on every GPU
  // Set when the table does not name the kernel: the nominal configuration that stands for
  // the library's own choice (profiles then calibrate that configuration).
  std::optional<KernelClass> kernel_class;
};

struct NeusightReadStats {
  std::size_t rows = 0;
  std::size_t skipped_no_latency = 0;
  std::size_t skipped_bad_shape = 0;
  std::size_t skipped_unknown_op = 0;
};

// Throws TableError when a required column is missing.
std::vector<MeasuredCall> read_neusight_kernels(const CsvTable& table,
                                                NeusightReadStats* stats = nullptr);

// Bytes an elementwise / normalisation op moves over a [rows, cols] fp32 tensor, and the op
// kind it is. Returns false for ops the table format does not define.
bool neusight_vector_op(const std::string& op, std::int64_t rows, std::int64_t cols,
                        double element_bytes, OpContext& out);

// The operator-and-shape key of a row ("bmm|B|M|N|K", "add|B|H", "conv|..."), computed from
// the raw fields so that every row has one, even rows the reader skips.
std::string neusight_shape_key(const CsvTable& table, std::size_t row);

// Deterministic split by shape: true for about `fraction` of distinct shape keys.
bool in_holdout(const std::string& shape_key, double fraction, unsigned seed = 0);

}  // namespace pm2lat::calibrate
