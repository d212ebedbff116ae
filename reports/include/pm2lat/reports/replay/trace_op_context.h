// What the operator around a traced kernel says about the kernel's work: the OpContext
// (GEMM/conv/attention shape, bytes of memory-bound work, collective payload) the predictor
// models it with. The crux of replay accuracy.
//
// The kernel's class decides which reading of the operator applies: a GEMM kernel inside
// aten::addmm gets the GEMM, the bias-copy kernel inside the same call gets the output's
// bytes, a GEMM-named kernel inside a cuDNN convolution gets the convolution's implicit
// GEMM. Wrappers are looked through (aten::linear > aten::addmm). Kernels whose operator
// recorded no shapes get estimates from launch geometry where ATen's kernels make that
// possible (source "geometry"), else an op with a name and kind only.
#pragma once

#include "pm2lat/kernel_class.h"
#include "pm2lat/op_context.h"
#include "pm2lat/reports/replay/kineto_trace.h"

namespace pm2lat::reports {

// Requires link_kernels_to_ops(trace). `int_args` receives the integer scalar arguments of a
// Triton kernel's launch (xnumel, rnumel) when the trace recorded them.
OpContext op_context_for_kernel(const KinetoTrace& trace, const TraceKernel& kernel,
                                const KernelClass& cls,
                                std::vector<std::int64_t>* int_args = nullptr);

}  // namespace pm2lat::reports
