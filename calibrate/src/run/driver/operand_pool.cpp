#include "driver/operand_pool.h"

#include <fmt/core.h>

#include <algorithm>
#include <vector>

#include "pm2lat/calibrate/run/measurement_backend.h"
#include "pm2lat/calibrate/run/random_operands.h"

namespace pm2lat::calibrate::run::driver {
namespace {

constexpr std::size_t kPatternBytes = std::size_t{16} << 20;  // copied over the area
constexpr double kGrowth = 1.25;                              // fewer reallocations

// Types whose random values can stand for one another's storage.
DType value_class(DType t) { return t == DType::kTf32 ? DType::kFp32 : t; }

}  // namespace

OperandPool::~OperandPool() {
  if (in_ != 0) api_.mem_free(in_);
  if (out_ != 0) api_.mem_free(out_);
}

void OperandPool::require(std::size_t in_bytes, std::size_t out_bytes, DType values) {
  auto grow = [&](CUdeviceptr& p, std::size_t& have, std::size_t want, const char* what) {
    if (want <= have) return false;
    if (p != 0) api_.mem_free(p);
    p = 0;
    have = 0;
    const std::size_t bytes =
        aligned(static_cast<std::size_t>(static_cast<double>(want) * kGrowth));
    const CUresult r = api_.mem_alloc(&p, bytes);
    if (r != CUDA_SUCCESS) {
      throw BackendError(fmt::format("cannot allocate {:.1f} GiB for the {} operands: {}",
                                     static_cast<double>(bytes) / (1 << 30), what,
                                     api_.error_name(r)));
    }
    have = bytes;
    return true;
  };
  const bool new_inputs = grow(in_, in_bytes_, in_bytes, "input");
  grow(out_, out_bytes_, out_bytes, "output");
  if (new_inputs || value_class(values) != filled_) fill(value_class(values));
}

void OperandPool::fill(DType values) {
  std::vector<unsigned char>& pattern = patterns_[values];
  if (pattern.size() < std::min(kPatternBytes, in_bytes_)) {
    pattern = random_operand_bytes(values, std::min(kPatternBytes, in_bytes_), 0x706d326c6174ull);
  }
  for (std::size_t off = 0; off < in_bytes_; off += pattern.size()) {
    const std::size_t n = std::min(pattern.size(), in_bytes_ - off);
    api_.check(api_.memcpy_htod(in_ + off, pattern.data(), n), "filling the operands");
  }
  filled_ = values;
}

}  // namespace pm2lat::calibrate::run::driver
