// `pm2lat eval kernels`: predicts every row of a NeuSight-format kernel table on its own GPU
// (from shapes, kernel name and launch geometry, never from its latency) and summarises the
// error per device x op x kernel family, per device and overall.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/predictor.h"
#include "pm2lat/reports/error_stats.h"

namespace pm2lat::reports {

struct KernelEvalGroup {
  std::string device, op, family;
  ErrorSummary error;
};

struct KernelEvalDevice {
  std::string device;
  ErrorSummary error;
  ErrorSummary gemm;
  bool spec_scaled = false;  // the device has no profile: predictions were scaled
};

struct KernelEvalResult {
  std::vector<KernelEvalGroup> groups;
  std::vector<KernelEvalDevice> devices;
  ErrorSummary overall;
  std::size_t unknown_devices = 0;  // rows whose GPU is not in the catalogue
};

// Kernel-level family label used in the tables: the GEMM naming scheme for GEMM kernels
// ("legacy_cublas", "xmma", "cutlass2", ...), the kernel family otherwise.
std::string family_label(const KernelClass& cls);

KernelEvalResult eval_kernels(Predictor& predictor, const std::vector<calibrate::MeasuredCall>& calls);

void print_kernel_eval(std::ostream& out, const KernelEvalResult& r);
nlohmann::json kernel_eval_json(const KernelEvalResult& r);

}  // namespace pm2lat::reports
