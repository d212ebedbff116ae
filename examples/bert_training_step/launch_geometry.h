// The grid and block each PyTorch launcher computes for the kernels of aten_kernels.h, from
// the launchers' sources (constants named after theirs).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "step_device.h"

namespace bert_step::geometry {

inline unsigned ceil_div(std::int64_t a, std::int64_t b) { return unsigned((a + b - 1) / b); }

// CUDALoops.cuh: 128 threads (num_threads()), 4 elements each (thread_work_size()).
inline constexpr int kElementwiseThreads = 128;
inline constexpr int kElementwiseBlockWork = 4 * kElementwiseThreads;
inline Dim elementwise_grid(std::int64_t elements) {
  return {ceil_div(elements, kElementwiseBlockWork)};
}
inline Dim elementwise_block() { return {kElementwiseThreads}; }

// Dropout.cu: 256-thread blocks, at most as many as fill every SM.
inline constexpr int kDropoutThreads = 256;
inline Dim dropout_grid(std::int64_t elements, int sm_count, int max_threads_per_sm) {
  const std::int64_t resident = std::int64_t(sm_count) * (max_threads_per_sm / kDropoutThreads);
  return {unsigned(std::min<std::int64_t>(ceil_div(elements, kDropoutThreads), resident))};
}

// Indexing.cu (indexSelectLargeIndex): 128-thread blocks, at most 8 per SM.
inline Dim index_select_grid(std::int64_t elements, int sm_count) {
  return {unsigned(std::min<std::int64_t>(ceil_div(elements, 128), std::int64_t(sm_count) * 8))};
}
inline Dim index_select_block(std::int64_t elements) {
  return {unsigned(std::min<std::int64_t>(elements, 128))};
}

// layer_norm_kernel.cu: one block of (warp, num_threads() / warp) per row forward; one block
// of num_threads() per row for the input gradient; (32, 32) blocks over 32 columns each for
// the weight and bias gradients when rows and columns are multiples of 32.
inline constexpr int kLayerNormThreads = 128;
inline Dim layer_norm_block() { return {32, kLayerNormThreads / 32}; }
inline Dim layer_norm_grad_gamma_beta_grid(std::int64_t cols) { return {ceil_div(cols, 32)}; }

// ReduceSumProdKernel.cu through Reduce.cuh: a column sum over the tokens of [tokens, cols]
// runs reduce_kernel<128, 4> on (32, 4) blocks, 128 columns by 16 row slices (the layout the
// A100 trace of HolisticTraceAnalysis records for such sums, e.g. [1024, 768] on (6, 16)).
inline Dim bias_grad_grid(std::int64_t cols) { return {ceil_div(cols, 128), 16}; }
inline Dim bias_grad_block() { return {32, 4}; }

// SoftMax.cu (SoftMax_getBlockSize): ILP = 16 bytes / 2 = 8 BF16 elements, half of
// min(classes / ILP, 1024) threads rounded to a power of two: 512 over 30522 classes.
inline Dim log_softmax_block(std::int64_t classes) {
  const std::int64_t ilp = 8, max_threads = 1024;
  const std::int64_t limit = std::max<std::int64_t>(1, std::min(classes / ilp, max_threads) / 2);
  unsigned block = 1;
  while (block < limit) block *= 2;
  return {std::max(block, 32u)};
}

// Loss.cu: the reduced 2-D NLL loss runs one block of NLLLOSS_THREADS = 32.
inline Dim nll_loss_grid() { return {1}; }
inline Dim nll_loss_block() { return {32}; }

// flash_fwd_launch_template.h / flash_bwd_launch_template.h: one block per 128-query (or
// 128-key) tile per (batch, head); 4 warps forward, 8 backward.
inline Dim flash_grid(std::int64_t seq, std::int64_t batch, std::int64_t heads) {
  return {ceil_div(seq, 128), unsigned(batch), unsigned(heads)};
}
inline Dim flash_forward_block() { return {128}; }
inline Dim flash_backward_block() { return {256}; }

// MultiTensorApply.cuh (multi_tensor_apply_for_fused_optimizer<4>): 65536-element chunks, one
// 512-thread block each; a launch takes at most 320 chunks of at most 36 tensors.
inline constexpr std::int64_t kChunk = 65536;
inline constexpr int kMaxBlocks = 320;
inline constexpr int kMaxTensors = 36;
inline Dim multi_tensor_block() { return {512}; }
// The grid of every launch for tensors of these sizes.
inline std::vector<unsigned> multi_tensor_grids(const std::vector<std::int64_t>& numels) {
  std::vector<unsigned> grids;
  int tensors = 0, blocks = 0;
  for (std::size_t t = 0; t < numels.size(); ++t) {
    ++tensors;
    const std::int64_t chunks = ceil_div(numels[t], kChunk);
    for (std::int64_t c = 0; c < chunks; ++c) {
      ++blocks;
      const bool last_chunk = c == chunks - 1;
      const bool tensors_full = tensors == kMaxTensors && last_chunk;
      const bool last = t + 1 == numels.size() && last_chunk;
      if (tensors_full || blocks == kMaxBlocks || last) {
        grids.push_back(unsigned(blocks));
        blocks = 0;
        tensors = last_chunk ? 0 : 1;  // a tensor cut mid-way continues in the next launch
      }
    }
  }
  return grids;
}

}  // namespace bert_step::geometry
