#include "pm2lat/models/gemm_neighbourhood.h"

#include <algorithm>
#include <cmath>

#include "octaves.h"

namespace pm2lat {
namespace {

using namespace gemm_neighbourhood;

}  // namespace

GemmShapeKey gemm_shape_key(std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k) {
  return {octaves(static_cast<double>(batch)), octaves(static_cast<double>(m)),
          octaves(static_cast<double>(n)), octaves(static_cast<double>(k))};
}

bool operands_vector_aligned(std::int64_t m, std::int64_t n, std::int64_t k, bool trans_a,
                             bool trans_b, DType dtype) {
  const double bytes = dtype_bytes(dtype == DType::kTf32 ? DType::kFp32 : dtype);
  const auto per_vector =
      static_cast<std::int64_t>(std::max(1.0, kVectorBytes / std::max(1.0, bytes)));
  const std::int64_t lda = trans_a ? m : k;
  const std::int64_t ldb = trans_b ? k : n;
  return lda % per_vector == 0 && ldb % per_vector == 0;
}

GemmSelectorKey gemm_selector_key(const GemmShapeKey& shape, std::int64_t m, std::int64_t n,
                                  std::int64_t k, bool trans_a, bool trans_b, DType dtype) {
  const bool aligned = operands_vector_aligned(m, n, k, trans_a, trans_b, dtype);
  return {shape[0],
          shape[1],
          shape[2],
          shape[3],
          trans_b ? kLayoutPenalty : 0.0,
          aligned ? 0.0 : kAlignmentPenalty};
}

GemmResidualKey gemm_residual_key(const GemmShapeKey& shape, const GemmConfigFit& c,
                                  const DeviceSpec& spec, double blocks) {
  const double slots =
      static_cast<double>(std::max(1, spec.sm_count)) * std::max(1, c.blocks_per_sm);
  const double waves = std::ceil(std::max(1.0, blocks) / slots);
  return {shape[0], shape[1], shape[2], shape[3], kWaveCoordinateWeight * std::log2(waves)};
}

}  // namespace pm2lat
