// Work a memory-bound kernel implies when nothing recorded what it processes (a runtime launch
// outside any library call, a trace recorded without shapes): ATen's elementwise kernels cover
// blocks x threads x elements per thread over the tensors of their std::array<char*, N>;
// multi-tensor-apply kernels walk one 65536-element chunk of each list per block; the
// persistent softmax kernels one row of their stated power-of-two length per warp; CUB's radix
// sort passes and scans one tile of their named policy per block (cub_tile_work.h) (upper
// bounds: the last block may be partly idle, a row shorter). And the helpers of a GEMM (split-K
// reduction, GEMV-like kernels) move what the GEMM's shape says.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_launch.h"
#include "pm2lat/op_context.h"

namespace pm2lat {

struct LaunchWork {
  OpKind kind = OpKind::kElementwise;
  VectorShape vec;
};

// `kernel_name` mangled, demangled or as Kineto writes it. `tensor_lists` (multi-tensor
// kernels: the lists the operator passed, when the name does not say) and `op_name` (an
// in-place operator ends in '_') refine the estimate when the caller knows them. nullopt when
// the kernel is not one whose launch geometry is understood.
std::optional<LaunchWork> launch_work(std::string_view kernel_name, const KernelClass& cls,
                                      const Dim3& grid, const Dim3& block,
                                      std::size_t tensor_lists = 0, std::string_view op_name = {});

// A split-K reduction sums the partial results of at least this many slices of the K loop.
inline constexpr std::int32_t kFewestSplitKSlices = 2;

// Bytes a GEMV-like or split-K helper kernel of GEMM `g` moves: operands and output for a
// GEMV; for a split-K reduction, the output and the FP32 partial sums of each of the
// `g.algo_split_k` slices the GEMM kernel ran (kFewestSplitKSlices when not known).
VectorShape gemm_helper_work(const GemmShape& g, KernelFamily family);

// Elements an ATen elementwise kernel's launch covers (blocks x threads x elements per
// thread), 0 for other kernels. Big tensors are processed by several such launches (32-bit
// indexing), each covering a part of the operator's tensors.
double elementwise_launch_elements(std::string_view kernel_name, const Dim3& grid,
                                   const Dim3& block);

}  // namespace pm2lat
