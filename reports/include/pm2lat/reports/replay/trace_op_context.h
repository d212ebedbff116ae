// What the operator around a traced kernel says about the kernel's work: the OpContext
// (GEMM/conv/attention shape, bytes of memory-bound work, collective payload) the predictor
// models it with. The crux of replay accuracy.
//
// The kernel's class decides which reading of the operator applies: a GEMM kernel inside
// aten::addmm gets the GEMM, the bias-copy kernel inside the same call gets the output's
// bytes, a GEMM-named kernel inside a cuDNN convolution gets the convolution's implicit
// GEMM. Wrappers are looked through (aten::linear > aten::addmm). Kernels whose operator
// recorded no shapes get estimates from launch geometry where ATen's kernels make that
// possible (source "geometry"), else an op with a name and kind only. Work the launch cannot
// have done (more bytes than its threads move, physical_bounds.h) is not charged: the launch
// geometry stands in.
#pragma once

#include <cstdint>
#include <vector>

#include "pm2lat/kernel_class.h"
#include "pm2lat/op_context.h"
#include "pm2lat/reports/replay/kineto_trace.h"

namespace pm2lat::reports {

// Threads launched by all kernels whose innermost operator is each op (indexed like
// trace.ops). A library operator no rule knows launches several kernels (scans, sorts,
// gathers); each is charged the operator's work in proportion to its threads.
// Requires link_kernels_to_ops(trace).
std::vector<double> launched_threads_per_op(const KinetoTrace& trace);

// Requires link_kernels_to_ops(trace). `int_args` receives the integer scalar arguments of a
// Triton kernel's launch (xnumel, rnumel) when the trace recorded them. `op_threads`
// (launched_threads_per_op) shares a library operator's work among its kernels; without it,
// each kernel is charged the whole operator.
OpContext op_context_for_kernel(const KinetoTrace& trace, const TraceKernel& kernel,
                                const KernelClass& cls,
                                std::vector<std::int64_t>* int_args = nullptr,
                                const std::vector<double>* op_threads = nullptr);

// A split-K reduction kernel of GEMM operator `op` (kind GEMM) reads the partial results of
// the `slices` the operator's GEMM kernel ran (its launch's split; 0 or 1: not known, the
// fewest a reduction sums is charged).
void charge_split_k_slices(OpContext& op, std::int32_t slices, KernelFamily family);

}  // namespace pm2lat::reports
