// Device memory for operands: one input area filled with random values of the dtype being
// measured (refilled when the dtype changes), one output area, grown on demand. Carving every
// task's operand sets out of long-lived areas keeps allocation and filling out of the
// per-task cost.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <map>
#include <vector>

#include "driver/cuda_driver_api.h"
#include "pm2lat/dtype.h"

namespace pm2lat::calibrate::run::driver {

class OperandPool {
 public:
  explicit OperandPool(const CudaDriverApi& api) : api_(api) {}
  ~OperandPool();
  OperandPool(const OperandPool&) = delete;
  OperandPool& operator=(const OperandPool&) = delete;

  // Makes the input area at least `in_bytes` of random `values`, the output area at least
  // `out_bytes`. Throws BackendError when the device runs out of memory.
  void require(std::size_t in_bytes, std::size_t out_bytes, DType values);

  CUdeviceptr inputs() const { return in_; }
  CUdeviceptr outputs() const { return out_; }
  std::size_t allocated_bytes() const { return in_bytes_ + out_bytes_; }

 private:
  void fill(DType values);

  const CudaDriverApi& api_;
  CUdeviceptr in_ = 0, out_ = 0;
  std::size_t in_bytes_ = 0, out_bytes_ = 0;
  DType filled_ = DType::kUnknown;
  std::map<DType, std::vector<unsigned char>> patterns_;  // generated once per value type
};

// 256-byte aligned offsets, what cuBLASLt's fastest kernels want.
inline std::size_t aligned(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

}  // namespace pm2lat::calibrate::run::driver
