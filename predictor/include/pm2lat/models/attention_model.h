// Fused attention (FlashAttention-style kernels): each CTA owns a tile of query rows of one
// (batch, head) and walks the key/value blocks its mask lets it see, one main-loop
// iteration per block. Per kernel configuration and GPU, five calibrated coefficients:
//
//   kernel_us = c0 + c_iter * makespan + c_cta * waves + c_qo * qo_bytes / bw + c_kv * kv_bytes /
//   bw
//
//   makespan = max(iterations / slots, longest CTA's iterations)   (the SMs' busiest share)
//   waves    = ceil(ctas / slots),  slots = sm_count * ctas_per_sm
//   qo_bytes = Q read + O written,  kv_bytes = K and V read once (in the KV-cache type)
//
// Causal masks (bottom-right aligned, as FlashAttention does for seqlen_q != seqlen_kv) and
// sliding windows shorten the walk of each CTA; grouped-query attention may pack the query
// heads sharing a KV head into one CTA's rows (PackGQA), which changes the CTA count. The
// configuration is what the kernel template fixes: implementation, head dimension, KV type,
// local (windowed) or not; its tile, CTAs per SM and packing are chosen by calibration.
#pragma once

#include <cstdint>

#include "pm2lat/device_spec.h"
#include "pm2lat/models/attention_kernel.h"
#include "pm2lat/op_context.h"
#include "pm2lat/profile.h"

namespace pm2lat {

// How query heads sharing a KV head are laid out over CTAs.
enum class GqaPacking : std::int32_t {
  kNone = 0,         // one CTA row block per query head
  kAlways = 1,       // the group's heads share a CTA's rows
  kSingleQuery = 2,  // packed only for one-token queries (decode-style swap)
};

// The CTA tile an implementation uses for a head dimension on a GPU when the kernel name
// does not say (defaults of the libraries' launch heuristics).
struct AttentionTile {
  std::int32_t m = 128;
  std::int32_t n = 64;
};
AttentionTile default_attention_tile(AttentionVariant variant, std::int32_t head_dim,
                                     int compute_capability) noexcept;

// The work of one forward launch as the model counts it. Backward kernels walk the same
// blocks transposed (a CTA per key block); the model counts them with the roles swapped.
struct AttentionWork {
  double ctas = 0;            // CTAs over batch x (packed) heads x row blocks
  double iterations = 0;      // main-loop iterations summed over CTAs
  double max_iterations = 0;  // of the busiest CTA
  double qo_bytes = 0;
  double kv_bytes = 0;
};

AttentionWork attention_work(const AttentionShape& shape, std::int32_t tile_m, std::int32_t tile_n,
                             GqaPacking packing) noexcept;

// Bytes of K and V over `positions` tokens of every sequence and KV head, in the KV-cache
// element type (the activations' when unstated, BF16 when neither is).
double attention_kv_bytes(const AttentionShape& shape, std::int64_t positions) noexcept;

// The regressors c0 .. c_kv multiply, for one launch on one GPU.
struct AttentionFeatures {
  double makespan = 0;
  double waves = 0;
  double qo = 0;  // µs at peak bandwidth
  double kv = 0;
};

AttentionFeatures attention_features(const AttentionWork& work, std::int32_t ctas_per_sm,
                                     const DeviceSpec& spec) noexcept;

double attention_kernel_us(const AttentionConfigFit& fit, const AttentionFeatures& f) noexcept;

}  // namespace pm2lat
