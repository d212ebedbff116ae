#include "pm2lat/models/conv_model.h"

#include <algorithm>
#include <cmath>

#include "classify/name_parts.h"
#include "pm2lat/text.h"

namespace pm2lat {
namespace {

double tiles(const GemmShape& g, double tm, double tn) {
  return std::ceil(static_cast<double>(g.m) / tm) * std::ceil(static_cast<double>(g.n) / tn) *
         static_cast<double>(std::max<std::int64_t>(1, g.batch));
}

// cuDNN's Winograd F(4x4, 3x3) transforms 6x6 input tiles of 4x4 output tiles: its
// non-fused algorithm runs one GEMM per point of the transformed tile, batched over the
// launch's z dimension.
constexpr std::uint32_t kWinogradTransformPoints = 36;
constexpr std::int64_t kWinogradOutputTile = 4;

// CUTLASS's analytic and optimized implicit-GEMM iterators (the kernel name states which:
// "..fprop_optimized_..", "..dgrad_analytic_..") walk the filter taps one at a time and each
// tap's channels in steps of the tile's K, so a tap whose channels do not fill the step still
// costs a whole step: R * S * ceil(C / tile K) for the forward pass, R * S * ceil(K / tile K)
// for a unit-stride data gradient (cutlass/conv/conv2d_problem_size.h,
// implicit_gemm_k_iterations). A ViT's patch embedding (16x16 taps of a 3-channel image padded
// to 8, tile K 32) runs 256 steps where the flattened reduction takes 64. CUTLASS's few- and
// fixed-channels iterators flatten the reduction; so does the model for the other passes and
// for other libraries' kernels, whose loops their names do not state. 0: not such a kernel.
double cutlass_tap_k_iters(std::string_view config, const ConvShape& conv, ConvPass pass,
                           double split, double tile_k) noexcept {
  const bool forward = pass == ConvPass::kForward &&
                       (contains(config, "fprop_optimized") || contains(config, "fprop_analytic"));
  const bool data_grad =
      pass == ConvPass::kDataGrad && conv.stride_h == 1 && conv.stride_w == 1 &&
      (contains(config, "dgrad_optimized") || contains(config, "dgrad_analytic"));
  if (!forward && !data_grad) return 0;
  const double groups = static_cast<double>(std::max<std::int64_t>(1, conv.groups));
  const double per_tap = static_cast<double>(std::max<std::int64_t>(
                             1, forward ? conv.in_channels : conv.out_channels)) /
                         groups;
  const double taps = static_cast<double>(std::max<std::int64_t>(1, conv.kernel_h)) *
                      static_cast<double>(std::max<std::int64_t>(1, conv.kernel_w));
  return taps * std::ceil(std::ceil(per_tap / split) / tile_k);
}

}  // namespace

ConvAlgorithm conv_algorithm(std::string_view config, const ConvShape& conv, ConvPass pass,
                             const Dim3& grid) noexcept {
  if (pass != ConvPass::kForward || conv.kernel_h != 3 || conv.kernel_w != 3 ||
      conv.stride_h != 1 || conv.stride_w != 1 || conv.dilation_h != 1 || conv.dilation_w != 1)
    return ConvAlgorithm::kImplicitGemm;
  if (contains(config, "winograd")) return ConvAlgorithm::kWinogradFused;
  if (grid.z == kWinogradTransformPoints) return ConvAlgorithm::kWinogradBatchedGemm;
  return ConvAlgorithm::kImplicitGemm;
}

Dim3 winograd_batched_gemm_grid(const GemmConfigFit& config, const ConvShape& conv) noexcept {
  auto tiles = [](std::int64_t n, std::int64_t t) {
    return (std::max<std::int64_t>(1, n) + t - 1) / t;
  };
  const std::int64_t transformed = std::max<std::int64_t>(1, conv.batch) *
                                   tiles(conv.out_h(), kWinogradOutputTile) *
                                   tiles(conv.out_w(), kWinogradOutputTile);
  return {grid_x_for(static_cast<double>(tiles(transformed, std::max(1, config.tile_m)))),
          grid_yz_for(static_cast<double>(tiles(conv.out_channels, std::max(1, config.tile_n)))),
          kWinogradTransformPoints};
}

std::string_view to_string(ConvPass p) noexcept {
  switch (p) {
    case ConvPass::kDataGrad: return "dgrad";
    case ConvPass::kWeightGrad: return "wgrad";
    default: return "fprop";
  }
}

GemmShape conv_implicit_gemm(const ConvShape& conv, ConvPass pass) noexcept {
  const ConvShape& c = conv;
  const std::int64_t g = std::max<std::int64_t>(1, c.groups);
  const std::int64_t npq =
      c.batch * std::max<std::int64_t>(1, c.out_h()) * std::max<std::int64_t>(1, c.out_w());
  const std::int64_t nhw = c.batch * c.in_h * c.in_w;
  const std::int64_t crs = c.in_channels / g * c.kernel_h * c.kernel_w;
  const std::int64_t krs = c.out_channels / g * c.kernel_h * c.kernel_w;
  GemmShape s;
  s.batch = g;
  s.a = s.b = s.c = c.dtype;
  switch (pass) {
    case ConvPass::kDataGrad: s.m = nhw, s.n = c.in_channels / g, s.k = krs; break;
    case ConvPass::kWeightGrad: s.m = c.out_channels / g, s.n = crs, s.k = npq; break;
    default: s.m = npq, s.n = c.out_channels / g, s.k = crs; break;
  }
  s.m = std::max<std::int64_t>(1, s.m);
  s.n = std::max<std::int64_t>(1, s.n);
  s.k = std::max<std::int64_t>(1, s.k);
  return s;
}

double conv_outputs(const ConvShape& conv, ConvPass pass) noexcept {
  const GemmShape g = conv_implicit_gemm(conv, pass);
  return static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.batch);
}

ConvShape kernel_channels(const ConvShape& conv, const KernelClass& cls) noexcept {
  const std::int64_t align = cls.gemm.align;
  if (!cls.gemm.tensor_core || align <= 1) return conv;
  const std::int64_t groups = std::max<std::int64_t>(1, conv.groups);
  // Never fewer channels than stated (a record with fewer channels than groups is malformed).
  auto padded = [&](std::int64_t channels) {
    const std::int64_t per_group = (channels / groups + align - 1) / align * align;
    return std::max(channels, per_group * groups);
  };
  ConvShape c = conv;
  c.in_channels = padded(conv.in_channels);
  c.out_channels = padded(conv.out_channels);
  return c;
}

ConvPass conv_pass(const KernelClass& cls, const OpContext& op, const Dim3& grid) noexcept {
  try {
    const std::string l = ascii_lower(cls.config);
    if (contains(l, "dgrad")) return ConvPass::kDataGrad;
    if (contains(l, "wgrad")) return ConvPass::kWeightGrad;
    if (contains(l, "fprop")) return ConvPass::kForward;
    if (op.name.find("backward") == std::string::npos || !op.conv.valid())
      return ConvPass::kForward;
    // A gradient kernel that does not say which: the one whose tiles match the launch.
    const double tm = std::max(1, cls.gemm.tile_m > 0 ? cls.gemm.tile_m : 128);
    const double tn = std::max(1, cls.gemm.tile_n > 0 ? cls.gemm.tile_n : 64);
    const double blocks = static_cast<double>(std::max<std::uint64_t>(1, grid.volume()));
    auto mismatch = [&](ConvPass p) {
      const GemmShape s = conv_implicit_gemm(op.conv, p);
      return std::min(std::fabs(std::log(tiles(s, tm, tn) / blocks)),
                      std::fabs(std::log(tiles(s, tn, tm) / blocks)));
    };
    return mismatch(ConvPass::kDataGrad) <= mismatch(ConvPass::kWeightGrad) ? ConvPass::kDataGrad
                                                                            : ConvPass::kWeightGrad;
  } catch (...) {
    return ConvPass::kForward;
  }
}

DType conv_math_type(const KernelClass& cls, DType dtype) noexcept {
  if (dtype == DType::kBf16 || dtype == DType::kFp16 || cls.gemm.a == DType::kBf16 ||
      cls.gemm.a == DType::kFp16)
    return dtype == DType::kFp16 || cls.gemm.a == DType::kFp16 ? DType::kFp16 : DType::kBf16;
  if (cls.gemm.tensor_core || cls.gemm.a == DType::kTf32 || contains(cls.config, "tf32") ||
      contains(cls.config, "s1688"))
    return DType::kTf32;
  return DType::kFp32;
}

GemmConfigFit conv_kernel_config(const KernelClass& cls, DType dtype) noexcept {
  GemmConfigFit c;
  c.config = cls.config;
  const DType math = conv_math_type(cls, dtype);
  const bool tc = math != DType::kFp32;
  c.dtype = dtype == DType::kUnknown ? DType::kFp32 : dtype;
  c.tile_m = cls.gemm.tile_m > 0 ? cls.gemm.tile_m : 128;
  c.tile_n = cls.gemm.tile_n > 0 ? cls.gemm.tile_n : (tc ? 128 : 64);
  c.tile_k = cls.gemm.tile_k > 0 ? cls.gemm.tile_k : (tc ? 32 : 8);
  c.blocks_per_sm = 1;
  return c;
}

double conv_tile_step_us(const GemmConfigFit& c, DType math, const DeviceSpec& spec) noexcept {
  const double per_sm =
      spec.peak_flop_per_us(math) / static_cast<double>(std::max(1, spec.sm_count));
  const double flops = 2.0 * std::max(1, c.tile_m) * std::max(1, c.tile_n) * std::max(1, c.tile_k);
  return per_sm > 0 ? flops / per_sm : 1.0;
}

bool is_conv_helper_kernel(const KernelRecord& r, const KernelClass& cls) noexcept {
  if (r.op.kind != OpKind::kConv && r.op.vec.bytes() > 0) return true;
  return cls.conv_helper;
}

GemmWork conv_work(const GemmConfigFit& config, const ConvShape& conv, ConvPass pass,
                   const Dim3& grid, double element_bytes) noexcept {
  return conv_work(config, conv, pass, grid, element_bytes,
                   conv_algorithm(config.config, conv, pass, grid));
}

GemmWork conv_work(const GemmConfigFit& config, const ConvShape& conv, ConvPass pass,
                   const Dim3& grid, double element_bytes, ConvAlgorithm algorithm) noexcept {
  const GemmConfigFit& c = config;
  const double eb = element_bytes;
  const GemmShape g = conv_implicit_gemm(conv, pass);
  const double tm = std::max(1, c.tile_m), tn = std::max(1, c.tile_n);
  const double tiles_mn = std::min(tiles(g, tm, tn), tiles(g, tn, tm));
  const double grid_blocks = static_cast<double>(grid.volume());
  // Persistent kernels (sm90 xmma, CUTLASS 3) launch about one CTA per SM and loop over the
  // tiles: a grid smaller than the output tiles says nothing about the work.
  const double blocks = grid_blocks > 1 && grid_blocks >= tiles_mn ? grid_blocks : tiles_mn;
  const double split = std::max(1.0, std::floor(blocks / std::max(1.0, tiles_mn) + 0.25));
  const double groups = static_cast<double>(std::max<std::int64_t>(1, conv.groups));
  GemmWork w;
  if (algorithm != ConvAlgorithm::kImplicitGemm) {
    // Each block of the grid loops over its group's input channels: the taps are folded into
    // the transforms.
    w = gemm_work(c, g, grid_blocks >= 1 ? grid_blocks : tiles_mn, 1, eb);
    w.k_iters = std::max(
        1.0, std::ceil(static_cast<double>(conv.in_channels) / groups / std::max(1, c.tile_k)));
  } else {
    w = gemm_work(c, g, blocks, 1, eb);
    const double tile_k = std::max(1, c.tile_k);
    const double tap_walk = cutlass_tap_k_iters(c.config, conv, pass, split, tile_k);
    w.k_iters = std::max(
        1.0, tap_walk > 0 ? tap_walk : std::ceil(static_cast<double>(g.k) / split / tile_k));
  }
  const double input = static_cast<double>(conv.batch) * static_cast<double>(conv.in_channels) *
                       static_cast<double>(conv.in_h) * static_cast<double>(conv.in_w);
  const double filter = static_cast<double>(conv.out_channels) *
                        static_cast<double>(conv.in_channels) / groups *
                        static_cast<double>(conv.kernel_h) * static_cast<double>(conv.kernel_w);
  const double output = static_cast<double>(conv.batch) * static_cast<double>(conv.out_channels) *
                        static_cast<double>(std::max<std::int64_t>(1, conv.out_h())) *
                        static_cast<double>(std::max<std::int64_t>(1, conv.out_w()));
  w.bytes = eb * (input + filter + output);
  return w;
}

std::string conv_class_name(DType math) { return "conv:" + std::string(to_string(math)); }

std::string conv_geometry_fit_name(const std::string& name) { return name + "#geometry"; }

}  // namespace pm2lat
