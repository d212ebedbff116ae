// A tensor-core tile kernel whose operands' rows are not 16-byte aligned loads them in narrower
// accesses than the 16-byte vectors (cp.async, TMA) its aligned siblings use: CUTLASS names
// say so as `align<N>`, N elements per access (a 3137-wide BF16 row: align1, 2 bytes). Such a
// kernel is slower than an aligned configuration of the same tiles, and where no calibration
// timed the narrow kernel itself an aligned one stands in for it (a configuration chosen for
// the shape, or the target's own for a GPU that never ran it). The shape forces the narrow
// access on every GPU: a row of odd length is unaligned whatever library runs it.
#pragma once

#include "pm2lat/dtype.h"
#include "pm2lat/kernel_class.h"
#include "pm2lat/models/gemm_neighbourhood.h"

namespace pm2lat {

// The widest global access of an operand: the vector the selector's alignment test counts in.
inline constexpr int kVectorAccessBytes = static_cast<int>(gemm_neighbourhood::kVectorBytes);

// The time one more access per 16-byte vector adds, as a fraction of the aligned kernel's time.
// Measured on profiler traces, predicted (aligned stand-in) over measured, geometric means of
// kernels whose configuration was chosen: 0.60 for 234 TF32 `align1` kernels (4-byte accesses:
// four per vector) on an A100 (HolisticTraceAnalysis's trace_diff control trace), which gives
// 1 + 3a = 1 / 0.60, a = 0.22. Checked on what it was not taken from: it says 1 / (1 + 7a) =
// 0.39 for 24 BF16 `align1` kernels (2-byte accesses) on an H100 (TraceLens's TimeSformer
// trace), measured 0.36; taken from that trace instead (a = 0.25) it says 0.57 for the A100's,
// measured 0.60; for one BF16 `align2` kernel (4-byte accesses) on an H100 (TraceLens's
// BERT-small trace) 0.60, measured 0.58. Aligned configurations chosen the same way: 0.83-1.11
// in every trace.
inline constexpr double kNarrowAccessCost = 0.22;

// Bytes per operand access of a tensor-core kernel the name of which states its alignment in
// elements of `element` (the kernel's operand type where the name states one);
// kVectorAccessBytes when it does not state one, or for a SIMT kernel (which loads element by
// element whatever its alignment, and is timed that way).
int operand_access_bytes(const GemmConfig& kernel, DType element) noexcept;

// How much slower a kernel loading operands `ran_bytes` at a time is than a stand-in loading
// them `stand_in_bytes` at a time: 1 when the stand-in's accesses are no wider.
double narrow_access_slowdown(int ran_bytes, int stand_in_bytes) noexcept;

}  // namespace pm2lat
