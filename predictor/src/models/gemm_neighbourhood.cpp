#include "pm2lat/models/gemm_neighbourhood.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

#include "octaves.h"

namespace pm2lat {
namespace {

using namespace gemm_neighbourhood;

// The leading dimensions of C[m,n] = A[m,k] B[k,n]'s inputs as stored: A as [m,k] (k) or,
// transposed, [k,m] (m); B as [k,n] (n) or, transposed (nn.Linear's weight), [n,k] (k).
struct LeadingDimensions {
  std::int64_t a, b;
};
LeadingDimensions leading_dimensions(std::int64_t m, std::int64_t n, std::int64_t k, bool trans_a,
                                     bool trans_b) {
  return {trans_a ? m : k, trans_b ? k : n};
}

}  // namespace

GemmShapeKey gemm_shape_key(std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k) {
  return {octaves(static_cast<double>(batch)), octaves(static_cast<double>(m)),
          octaves(static_cast<double>(n)), octaves(static_cast<double>(k))};
}

bool operands_vector_aligned(std::int64_t m, std::int64_t n, std::int64_t k, bool trans_a,
                             bool trans_b, DType dtype) {
  const double bytes = dtype_bytes(dtype);
  const auto per_vector =
      static_cast<std::int64_t>(std::max(1.0, kVectorBytes / std::max(1.0, bytes)));
  const LeadingDimensions ld = leading_dimensions(m, n, k, trans_a, trans_b);
  return ld.a % per_vector == 0 && ld.b % per_vector == 0;
}

double operand_alignment_bytes(std::int64_t m, std::int64_t n, std::int64_t k, bool trans_a,
                               bool trans_b, DType dtype) {
  const double bytes = dtype_bytes(dtype);
  // The largest power of two dividing a row's bytes (a sub-byte type's row in whole bytes).
  auto aligned = [bytes](std::int64_t ld) {
    const auto row = static_cast<std::uint64_t>(std::max(1.0, static_cast<double>(ld) * bytes));
    return std::min(kVectorBytes, static_cast<double>(row & (~row + 1)));
  };
  const LeadingDimensions ld = leading_dimensions(m, n, k, trans_a, trans_b);
  return std::min({aligned(ld.a), aligned(ld.b), aligned(n)});
}

SelectorAlignment selector_alignment(std::span<const SelectorSample> samples) {
  if (samples.empty()) return SelectorAlignment::kVectors;
  const bool one_alignment = std::ranges::all_of(samples, [&](const SelectorSample& s) {
    return s.alignment_bytes == samples.front().alignment_bytes;
  });
  if (one_alignment) return SelectorAlignment::kVectors;
  // Per cell of near shapes, per alignment, per configuration: how many samples.
  using Cell = std::array<long, 5>;
  std::map<Cell, std::map<double, std::map<std::int32_t, double>>> cells;
  for (const SelectorSample& s : samples) {
    const Cell cell{std::lround(s.shape[0]), std::lround(s.shape[1]), std::lround(s.shape[2]),
                    std::lround(s.shape[3]), s.transposed_weight ? 1L : 0L};
    cells[cell][s.alignment_bytes][s.config] += 1;
  }
  // Pairs of one alignment and pairs of two, and of each how many run different configurations.
  double same = 0, same_differ = 0, across = 0, across_differ = 0;
  auto pairs = [](double n) { return n * (n - 1) / 2; };
  for (const auto& [cell, by_alignment] : cells) {
    for (auto a = by_alignment.begin(); a != by_alignment.end(); ++a) {
      double n_a = 0, alike = 0;
      for (const auto& [config, n] : a->second) {
        n_a += n;
        alike += pairs(n);
      }
      same += pairs(n_a);
      same_differ += pairs(n_a) - alike;
      for (auto b = std::next(a); b != by_alignment.end(); ++b) {
        double n_b = 0, shared = 0;
        for (const auto& [config, n] : b->second) {
          n_b += n;
          const auto it = a->second.find(config);
          if (it != a->second.end()) shared += n * it->second;
        }
        across += n_a * n_b;
        across_differ += n_a * n_b - shared;
      }
    }
  }
  if (across < kMinAlignmentPairs || same < kMinAlignmentPairs) return SelectorAlignment::kVectors;
  return across_differ / across - same_differ / same > kAlignmentChoiceExcess
             ? SelectorAlignment::kGraded
             : SelectorAlignment::kVectors;
}

GemmSelectorKey gemm_selector_key(const GemmShapeKey& shape, std::int64_t m, std::int64_t n,
                                  std::int64_t k, bool trans_a, bool trans_b, DType dtype,
                                  SelectorAlignment alignment) {
  double apart = 0;
  if (alignment == SelectorAlignment::kGraded) {
    apart = kAlignmentHalvingPenalty *
            std::log2(kVectorBytes / operand_alignment_bytes(m, n, k, trans_a, trans_b, dtype));
  } else if (!operands_vector_aligned(m, n, k, trans_a, trans_b, dtype)) {
    apart = kAlignmentPenalty;
  }
  return {shape[0], shape[1], shape[2], shape[3], trans_b ? kLayoutPenalty : 0.0, apart};
}

GemmResidualKey gemm_residual_key(const GemmShapeKey& shape, const GemmConfigFit& c,
                                  const DeviceSpec& spec, double blocks) {
  const double slots =
      static_cast<double>(std::max(1, spec.sm_count)) * std::max(1, c.blocks_per_sm);
  const double waves = std::ceil(std::max(1.0, blocks) / slots);
  return {shape[0], shape[1], shape[2], shape[3], kWaveCoordinateWeight * std::log2(waves)};
}

}  // namespace pm2lat
