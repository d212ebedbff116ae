// The AIConfigurator GEMM table format: one framework linear call y[m,n] = x[m,k] W[n,k]^T
// per row, timed inside a CUDA graph (device time, no host dispatch), with no kernel name.
// Rows become kernel records of a nominal configuration per dtype (see kernel_class on
// MeasuredCall): the profile then calibrates "what the library picks" for that type.
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

// The dtype-and-shape key of a row ("bf16|m|n|k"), the same on every system.
std::string aiconfigurator_shape_key(const CsvTable& table, std::size_t row);

struct AiconfiguratorReadStats {
  std::size_t rows = 0, skipped = 0;
};

// Throws TableError when a required column is missing.
std::vector<MeasuredCall> read_aiconfigurator_gemm(const CsvTable& table,
                                                   AiconfiguratorReadStats* stats = nullptr);

}  // namespace pm2lat::calibrate
