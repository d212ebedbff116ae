// The AIConfigurator GEMM table format: one framework linear call y[m,n] = x[m,k] W[n,k]^T
// per row, timed inside a CUDA graph (device time, no host dispatch), with no kernel name.
// Rows of plain types (BF16) become kernel records of a nominal configuration per dtype (see
// kernel_class on MeasuredCall): the profile then calibrates "what the library picks" for that
// type. Rows of low-precision types with scale factors ("fp8", "fp8_block", "nvfp4") become
// calls of their backend ("vllm:CutlassFP8ScaledMMLinearKernel": framework and kernel_source),
// each backend calibrated on its own (models/scaled_gemm_model.h).
#pragma once

#include <string>
#include <vector>

#include "pm2lat/calibrate/csv_table.h"
#include "pm2lat/calibrate/neusight_table.h"

namespace pm2lat::calibrate {

// Name and class of the nominal configuration standing for the library's choice.
std::string nominal_gemm_config_name(DType dtype);
KernelClass nominal_gemm_class(DType dtype);

// The dtype a row's math runs in: `tc_dtype` when present ("bf16", "fp8", "fp4", "int8"),
// else `dtype`. Unknown spellings give kUnknown (the row is skipped).
DType aiconfigurator_dtype(const std::string& dtype, const std::string& tc_dtype);

// The class of a low-precision backend's calls: the framework's linear call as a whole.
KernelClass scaled_gemm_call_class(const std::string& backend, DType dtype, GemmScaling scaling);

// The type-and-shape key of a row ("gemm|fp8_block|m|n|k"), the same on every system: rows
// with equal keys are the same call measured on different GPUs.
std::string aiconfigurator_shape_key(const CsvTable& table, std::size_t row);

// The key a train/test split hashes: the shape alone, so that a held-out (m, n, k) is held out
// in every type and on every GPU. (Spelled "gemm|bf16|m|n|k" for every type: the key the
// BF16 table has always been split by.)
std::string aiconfigurator_split_key(const CsvTable& table, std::size_t row);

struct AiconfiguratorReadStats {
  std::size_t rows = 0, skipped = 0;
};

// Throws TableError when a required column is missing.
std::vector<MeasuredCall> read_aiconfigurator_gemm(const CsvTable& table,
                                                   AiconfiguratorReadStats* stats = nullptr);

}  // namespace pm2lat::calibrate
