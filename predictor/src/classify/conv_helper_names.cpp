// cuDNN's kernels that classify as convolution by name but are not its implicit GEMM: set-up
// kernels (offset tables, workspace initialisation) and transforms (layouts, Winograd
// data/filter/output). Decoded once per kernel name by the classifier (KernelClass::conv_helper),
// not on every prediction: these substring tests were a fifth of a convolution's prediction.
#include <algorithm>
#include <string_view>

#include "pm2lat/classifier.h"

namespace pm2lat {
namespace {

bool has(std::string_view s, std::string_view n) { return s.find(n) != std::string_view::npos; }

}  // namespace

bool names_conv_setup_kernel(std::string_view name) noexcept {
  static constexpr std::string_view kSetUpWords[] = {
      "init_device_workspace", "computeOffsets", "computeBOffsets", "computeWgrad", "precompute",
      "reduce_wgrad",          "zero_init"};
  return std::ranges::any_of(kSetUpWords, [&](std::string_view w) { return has(name, w); });
}

bool names_conv_helper_kernel(std::string_view config) noexcept {
  const std::string_view n = config;
  if (names_conv_setup_kernel(n)) return true;
  for (std::string_view h :
       {"generateWinogradTiles", "generatewinogradtiles", "computeoffsets", "nchwToNhwc",
        "nhwcToNchw", "flip_filter", "im2col", "execute_split_k_kernel"}) {
    if (has(n, h)) return true;
  }
  if (!has(n, "winograd") || has(n, "scudnn")) return false;  // fused Winograd kernels do the math
  return has(n, "Data") || has(n, "Filter") || has(n, "Output") || has(n, "data") ||
         has(n, "filter") || has(n, "output");
}

}  // namespace pm2lat
