#include "pm2lat/models/attention_model.h"

#include <algorithm>
#include <cmath>

namespace pm2lat {
namespace {

// Above this many row blocks per (batch, head) the per-block walk is summed over strata
// (midpoint rule): the walk length is piecewise linear in the block index, so the error is
// a fraction of one iteration per stratum, and the cost stays bounded for 1M-row prefills.
constexpr std::int64_t kExactBlocks = 32;
constexpr std::int64_t kStrata = 16;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

// The key range [start, end) a row block sees, in keys.
struct KeyRange {
  std::int64_t start = 0;
  std::int64_t end = 0;
};

struct Walk {
  std::int64_t rows = 0;   // rows per (batch, KV group): seqlen_q x packed heads
  std::int64_t group = 1;  // query heads sharing one CTA's rows
  std::int64_t tile_m = 1, tile_n = 1;
  std::int64_t seqlen_kv = 0, offset = 0, window = 0;
  bool causal = false;

  KeyRange range(std::int64_t block) const {
    const std::int64_t r0 = block * tile_m;
    const std::int64_t r1 = std::min(rows, r0 + tile_m) - 1;
    const std::int64_t q0 = r0 / group, q1 = r1 / group;
    KeyRange k;
    k.end = seqlen_kv;
    if (causal) k.end = std::clamp<std::int64_t>(q1 + offset + 1, 0, seqlen_kv);
    if (window > 0) {
      k.start = std::max<std::int64_t>(0, q0 + offset - window + 1);
      if (!causal) k.end = std::min(seqlen_kv, q1 + offset + window);
    }
    return k;
  }
  std::int64_t iterations(std::int64_t block) const {
    const KeyRange k = range(block);
    if (k.end <= k.start) return 0;
    return ceil_div(k.end, tile_n) - k.start / tile_n;
  }
};

}  // namespace

AttentionTile default_attention_tile(AttentionVariant variant, std::int32_t head_dim,
                                     int compute_capability) noexcept {
  const int cc = compute_capability;
  // GPUs with 100 KB of shared memory per SM (sm86/87/89/120) get the smaller FA2 tiles.
  const bool small_smem = cc == 86 || cc == 87 || cc == 89 || cc >= 120;
  switch (variant) {
    case AttentionVariant::kFlash2:
      if (head_dim <= 64) return {128, 128};
      if (head_dim <= 128) return small_smem ? AttentionTile{64, 64} : AttentionTile{128, 64};
      if (head_dim <= 192) return {128, 64};
      return small_smem ? AttentionTile{64, 64} : AttentionTile{128, 64};
    case AttentionVariant::kFlash3:
      if (head_dim <= 64) return {192, 128};
      if (head_dim <= 128) return {128, 128};
      if (head_dim <= 192) return {128, 96};
      return {128, 80};
    case AttentionVariant::kFlash4:
    case AttentionVariant::kTrtllmPrefill: return {128, 128};
    case AttentionVariant::kMemEfficient:
      return head_dim <= 64 ? AttentionTile{64, 64} : AttentionTile{32, 128};
    case AttentionVariant::kFlashInferDecode:
    case AttentionVariant::kTrtllmDecode:
    case AttentionVariant::kPaged: return {16, 64};
    case AttentionVariant::kTriton: return {16, 32};
    case AttentionVariant::kCudnn:
    case AttentionVariant::kFlashInferPrefill:
    case AttentionVariant::kUnknown:
    default: return head_dim <= 128 ? AttentionTile{128, 64} : AttentionTile{128, 32};
  }
}

AttentionWork attention_work(const AttentionShape& s, std::int32_t tile_m, std::int32_t tile_n,
                             GqaPacking packing) noexcept {
  AttentionWork w;
  if (!s.valid()) return w;
  const std::int64_t kv_heads = s.kv_heads > 0 ? s.kv_heads : s.heads;
  std::int64_t group = 1;
  const bool pack =
      packing == GqaPacking::kAlways || (packing == GqaPacking::kSingleQuery && s.seqlen_q == 1);
  if (pack && kv_heads > 0 && s.heads % kv_heads == 0) group = s.heads / kv_heads;
  Walk walk;
  walk.group = group;
  walk.rows = s.seqlen_q * group;
  walk.tile_m = std::max<std::int32_t>(1, tile_m);
  walk.tile_n = std::max<std::int32_t>(1, tile_n);
  walk.seqlen_kv = s.seqlen_kv;
  walk.offset = std::max<std::int64_t>(0, s.seqlen_kv - s.seqlen_q);  // bottom-right aligned mask
  walk.window = std::max<std::int64_t>(0, s.window);
  walk.causal = s.causal;
  const std::int64_t blocks = ceil_div(walk.rows, walk.tile_m);
  const std::int64_t head_groups = s.heads / group;  // whole groups of packed query heads
  const double groups = static_cast<double>(s.batch) * static_cast<double>(head_groups);

  double per_group = 0;
  if (!s.causal && walk.window == 0) {
    per_group = static_cast<double>(blocks) * static_cast<double>(walk.iterations(0));
  } else if (blocks <= kExactBlocks) {
    for (std::int64_t i = 0; i < blocks; ++i) per_group += static_cast<double>(walk.iterations(i));
  } else {
    for (std::int64_t k = 0; k < kStrata; ++k) {
      const std::int64_t lo = blocks * k / kStrata, hi = blocks * (k + 1) / kStrata;
      if (hi <= lo) continue;
      // The stratum's centre lies between two blocks when it has an even count: average them.
      const double mid = 0.5 * static_cast<double>(walk.iterations((lo + hi - 1) / 2) +
                                                   walk.iterations((lo + hi) / 2));
      per_group += static_cast<double>(hi - lo) * mid;
    }
  }
  w.ctas = groups * static_cast<double>(blocks);
  w.iterations = groups * per_group;
  w.max_iterations = static_cast<double>(std::max(walk.iterations(0), walk.iterations(blocks - 1)));
  const double eb = dtype_bytes(s.dtype == DType::kUnknown ? DType::kBf16 : s.dtype);
  const double d = static_cast<double>(s.head_dim), b = static_cast<double>(s.batch);
  w.qo_bytes = 2.0 * b * static_cast<double>(s.seqlen_q) * static_cast<double>(s.heads) * d * eb;
  w.kv_bytes = attention_kv_bytes(s, s.seqlen_kv);
  return w;
}

double attention_kv_bytes(const AttentionShape& s, std::int64_t positions) noexcept {
  const double eb = dtype_bytes(s.dtype == DType::kUnknown ? DType::kBf16 : s.dtype);
  const double kv_eb = s.kv_dtype == DType::kUnknown ? eb : dtype_bytes(s.kv_dtype);
  const std::int64_t kv_heads = s.kv_heads > 0 ? s.kv_heads : s.heads;
  return 2.0 * static_cast<double>(s.batch) * static_cast<double>(positions) *
         static_cast<double>(kv_heads) * static_cast<double>(s.head_dim) * kv_eb;
}

AttentionFeatures attention_features(const AttentionWork& w, std::int32_t ctas_per_sm,
                                     const DeviceSpec& spec) noexcept {
  const double slots = static_cast<double>(std::max(1, spec.sm_count)) *
                       static_cast<double>(std::max(1, ctas_per_sm));
  AttentionFeatures f;
  f.makespan = std::max(w.iterations / slots, w.max_iterations);
  f.waves = std::ceil(w.ctas / slots);
  const double bw = std::max(1.0, spec.bytes_per_us());
  f.qo = w.qo_bytes / bw;
  f.kv = w.kv_bytes / bw;
  return f;
}

double attention_kernel_us(const AttentionConfigFit& fit, const AttentionFeatures& f) noexcept {
  const AttentionConfigFit& c = fit;
  return std::max(0.5,
                  c.c0 + c.c_iter * f.makespan + c.c_cta * f.waves + c.c_qo * f.qo + c.c_kv * f.kv);
}

}  // namespace pm2lat
