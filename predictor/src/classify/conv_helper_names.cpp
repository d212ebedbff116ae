// cuDNN's kernels that classify as convolution by name but are not its implicit GEMM: set-up
// kernels (offset tables, workspace initialisation) and transforms (layouts, Winograd
// data/filter/output). Decoded once per kernel name by the classifier (KernelClass::conv_helper),
// not on every prediction: these substring tests were a fifth of a convolution's prediction.
#include <algorithm>
#include <string_view>

#include "classify/name_parts.h"
#include "pm2lat/classifier.h"

namespace pm2lat {

bool names_conv_setup_kernel(std::string_view name) noexcept {
  static constexpr std::string_view kSetUpWords[] = {
      "init_device_workspace", "computeOffsets", "computeBOffsets", "computeWgrad", "precompute",
      "reduce_wgrad",          "zero_init"};
  return std::ranges::any_of(kSetUpWords, [&](std::string_view w) { return contains(name, w); });
}

bool names_conv_helper_kernel(std::string_view config) noexcept {
  if (names_conv_setup_kernel(config)) return true;
  for (std::string_view h :
       {"generateWinogradTiles", "generatewinogradtiles", "computeoffsets", "nchwToNhwc",
        "nhwcToNchw", "flip_filter", "im2col", "col2im", "execute_split_k_kernel"}) {
    if (contains(config, h)) return true;
  }
  // Fused Winograd kernels do the math.
  if (!contains(config, "winograd") || contains(config, "scudnn")) return false;
  return contains(config, "Data") || contains(config, "Filter") || contains(config, "Output") ||
         contains(config, "data") || contains(config, "filter") || contains(config, "output");
}

}  // namespace pm2lat
