// The coordinates GEMM shapes are compared by: how near a shape is to a calibrated one when
// the GEMM predictor chooses the configuration cuBLAS would run (the selector) and when it
// carries calibrated residuals to a shape (the residual interpolation). Octaves of each
// dimension, plus penalties that keep apart what cuBLAS runs differently for the same shape.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "pm2lat/device_spec.h"
#include "pm2lat/dtype.h"
#include "pm2lat/profile.h"

namespace pm2lat {

namespace gemm_neighbourhood {
// Configurations (cuBLAS kernels, scaled-GEMM backends) are chosen by a distance-weighted
// vote among this many nearest calibrated shapes: one odd point must not send a shape to a
// configuration calibrated far from it.
constexpr std::size_t kSelectorVotes = 8;
// Distance penalty, in octaves, for choosing a configuration of another operand layout.
constexpr double kLayoutPenalty = 3.0;
// Distance penalty, in octaves, for choosing a configuration calibrated with the other operand
// alignment (operands_vector_aligned). The public tables show the split: on the P4,
// sgemm_128x128x8_NT_vec ran only where the reduction dimension is a multiple of 4 floats
// and sgemm_128x128x8_NT elsewhere; cuBLAS's heuristics take alignment as an input. Values
// of 1-3 choose the same configurations on the NeuSight cross-GPU split.
constexpr double kAlignmentPenalty = 2.0;
// On a GPU whose library chooses by it (selector_alignment), the distance penalty, in octaves,
// per halving of the bytes every operand's rows stay aligned to (operand_alignment_bytes):
// 4-byte rows stay two octaves from 16-byte ones, as under kAlignmentPenalty, and 8-byte rows
// are one octave from either.
constexpr double kAlignmentHalvingPenalty = 1.0;
// A GPU chooses by alignment when near calibrated shapes (the same octave of batch, m, n and
// k, the same layout) of different alignments run different configurations this much more
// often (a share of the pairs) than near shapes of one alignment. NeuSight's FP32 tables: the
// P4 0.15 (its model-like shapes ran sgemm_128x128x8_NT where the reduction's rows are 8-byte
// aligned and NT_vec where they are 16-byte aligned; its random shapes, timed apart with
// another library, ran maxwell_sgemm kernels at a fourth of the speed at every alignment:
// predictor/ACCURACY.md, "Two collections in one kernel table"); the A100-PCIE-40GB 0.04, the
// P100, T4 and V100 0.00-0.01. The A100-SXM4-40GB traces' TF32 kernels 0.95 (360 pairs: each
// program's shapes, its own kernels).
constexpr double kAlignmentChoiceExcess = 0.10;
// Pairs of near shapes of different alignments a table must hold to tell (the A100-PCIE-80GB's,
// H100's and L4's hold 46: their shapes are model-like, of one alignment).
constexpr double kMinAlignmentPairs = 100;
// Width of the vector loads vectorised GEMM kernels use (LDG.128).
constexpr double kVectorBytes = 16.0;
// Weight of the wave count in the residual neighbourhood: shapes on either side of a wave
// boundary (m = 1024 vs 1025 with 128-row tiles) differ by a whole wave and must not pass
// their residuals to each other, however close they are in log-shape.
constexpr double kWaveCoordinateWeight = 2.0;
}  // namespace gemm_neighbourhood

// log2 of batch, m, n, k (each at least 1).
using GemmShapeKey = std::array<double, 4>;
// The shape, the operand layout and the operand alignment: what the selector votes over.
using GemmSelectorKey = std::array<double, 6>;
// The shape and the number of waves the configuration runs it in: what residuals travel by.
using GemmResidualKey = std::array<double, 5>;

GemmShapeKey gemm_shape_key(std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k);

// Whether every operand of C[m,n] = A[m,k] B[k,n] has a leading dimension that is a whole
// number of 16-byte vectors: A is stored [m,k] (leading dimension k) or, transposed, [k,m];
// B is stored [k,n] or, transposed (nn.Linear's weight), [n,k].
bool operands_vector_aligned(std::int64_t m, std::int64_t n, std::int64_t k, bool trans_a,
                             bool trans_b, DType dtype);

// The bytes every operand's leading dimension stays aligned to, up to one vector (kVectorBytes):
// A and B (stored as operands_vector_aligned says) and C [m,n]. cuBLASLt states each
// algorithm's minimum alignment of A, B, C and D in bytes (4, 8, 16;
// CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_*_BYTES).
double operand_alignment_bytes(std::int64_t m, std::int64_t n, std::int64_t k, bool trans_a,
                               bool trans_b, DType dtype);

// How a GPU's selector tells operands' alignments apart.
enum class SelectorAlignment : std::uint8_t {
  kVectors,  // whole 16-byte vectors or not (A and B): kAlignmentPenalty
  kGraded,   // the bytes A, B and C stay aligned to: kAlignmentHalvingPenalty a halving
};

// One calibrated shape as the choice between those two sees it.
struct SelectorSample {
  GemmShapeKey shape;
  bool transposed_weight = false;
  double alignment_bytes = 0;  // operand_alignment_bytes
  std::int32_t config = -1;
};
// kGraded where the table shows its library choosing by alignment (kAlignmentChoiceExcess over
// at least kMinAlignmentPairs pairs), else kVectors.
SelectorAlignment selector_alignment(std::span<const SelectorSample> samples);

// Calls that multiply by a weight stored transposed (nn.Linear) and plain (batched) products
// run different kernels for the same shape, and so do operands of other alignments: both are
// kept apart when choosing a configuration.
GemmSelectorKey gemm_selector_key(const GemmShapeKey& shape, std::int64_t m, std::int64_t n,
                                  std::int64_t k, bool trans_a, bool trans_b, DType dtype,
                                  SelectorAlignment alignment = SelectorAlignment::kVectors);

// The shape run by configuration `c` on `spec` as `blocks` blocks.
GemmResidualKey gemm_residual_key(const GemmShapeKey& shape, const GemmConfigFit& c,
                                  const DeviceSpec& spec, double blocks);

}  // namespace pm2lat
