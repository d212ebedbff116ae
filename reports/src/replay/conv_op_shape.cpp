// Convolution shapes from PyTorch's convolution operators (forward and backward), and the
// implicit GEMM cuDNN computes them as.
#include <algorithm>
#include <cmath>
#include <string>

#include "op_inputs.h"
#include "op_shape_rules.h"
#include "pm2lat/models/conv_model.h"

namespace pm2lat::reports::trace_rules {
namespace {

// Where each operator keeps its arguments. -1 = not an argument of that operator.
struct ConvSignature {
  std::string_view name;
  int input, weight, stride, padding, dilation, groups;
};

constexpr ConvSignature kConvSignatures[] = {
    // cudnn_convolution(self, weight, padding, stride, dilation, groups, benchmark, deterministic,
    // allow_tf32)
    {"cudnn_convolution", 0, 1, 3, 2, 4, 5},
    // cudnn_convolution_relu(self, weight, bias, stride, padding, dilation, groups)
    {"cudnn_convolution_relu", 0, 1, 3, 4, 5, 6},
    // cudnn_convolution_add_relu(self, weight, z, alpha, bias, stride, padding, dilation, groups)
    {"cudnn_convolution_add_relu", 0, 1, 5, 6, 7, 8},
    // cudnn_convolution_transpose(self, weight, padding, output_padding, stride, dilation, groups,
    // ...)
    {"cudnn_convolution_transpose", 0, 1, 4, 2, 5, 6},
    // convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
    // groups)
    {"convolution", 0, 1, 3, 4, 5, 8},
    {"_convolution", 0, 1, 3, 4, 5, 8},
    // conv2d/conv1d/conv3d(input, weight, bias, stride, padding, dilation, groups)
    {"conv2d", 0, 1, 3, 4, 5, 6},
    {"conv1d", 0, 1, 3, 4, 5, 6},
    {"conv3d", 0, 1, 3, 4, 5, 6},
    // _conv_depthwise2d(self, weight, kernel_size, bias, stride, padding, dilation)
    {"_conv_depthwise2d", 0, 1, 4, 5, 6, -1},
    // convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
    //                      transposed, output_padding, groups, output_mask)
    {"convolution_backward", 1, 2, 4, 5, 6, 9},
    {"cudnn_convolution_backward", 0, 2, 4, 3, 5, 6},
};

const ConvSignature* conv_signature(std::string_view aten) {
  for (const auto& s : kConvSignatures) {
    if (s.name == aten) return &s;
  }
  return nullptr;
}

// A spatial parameter list ("[2, 2]", a single value, or absent) for dimension `i` of `n`.
std::int64_t spatial(const std::vector<std::int64_t>& v, std::size_t i, std::int64_t fallback) {
  if (v.empty()) return fallback;
  return v.size() == 1 ? v[0] : (i < v.size() ? v[i] : fallback);
}

}  // namespace

bool is_conv_op(std::string_view aten) { return conv_signature(aten) != nullptr; }

std::optional<ConvShape> conv_shape(const TraceOp& op, std::string_view aten) {
  const ConvSignature* sig = conv_signature(aten);
  if (sig == nullptr) return std::nullopt;
  const auto in = trace_inputs::tensor_at(op, static_cast<std::size_t>(sig->input));
  const auto w = trace_inputs::tensor_at(op, static_cast<std::size_t>(sig->weight));
  if (!in || !w || in->rank() < 3 || in->rank() != w->rank()) return std::nullopt;
  auto ints = [&](int idx) {
    return idx < 0 ? std::vector<std::int64_t>{}
                   : trace_inputs::concrete_ints(op, static_cast<std::size_t>(idx));
  };
  const auto stride = ints(sig->stride), padding = ints(sig->padding),
             dilation = ints(sig->dilation);
  ConvShape c;
  c.batch = in->dim(0);
  c.in_channels = in->dim(1);
  c.out_channels = w->dim(0);
  c.dtype = in->dtype;
  if (sig->groups >= 0)
    c.groups = std::max<std::int64_t>(
        1, trace_inputs::concrete_int(op, static_cast<std::size_t>(sig->groups)).value_or(1));
  if (c.groups == 1 && w->dim(1) > 0 && c.in_channels % w->dim(1) == 0 &&
      c.in_channels / w->dim(1) > 1) {
    c.groups = c.in_channels / w->dim(1);  // groups not recorded: the weight says it
  }
  const std::size_t spatial_dims = in->rank() - 2;
  auto out_len = [](std::int64_t len, std::int64_t k, std::int64_t st, std::int64_t pad,
                    std::int64_t dil) {
    return st > 0 ? (len + 2 * pad - dil * (k - 1) - 1) / st + 1 : 0;
  };
  if (spatial_dims == 1) {
    // ConvShape is two-dimensional: a 1-D convolution has height 1.
    c.in_h = 1;
    c.kernel_h = 1;
    c.in_w = in->dim(2);
    c.kernel_w = w->dim(2);
    c.stride_w = spatial(stride, 0, 1);
    c.pad_w = spatial(padding, 0, 0);
    c.dilation_w = spatial(dilation, 0, 1);
  } else if (spatial_dims == 2) {
    c.in_h = in->dim(2);
    c.in_w = in->dim(3);
    c.kernel_h = w->dim(2);
    c.kernel_w = w->dim(3);
    c.stride_h = spatial(stride, 0, 1);
    c.stride_w = spatial(stride, 1, 1);
    c.pad_h = spatial(padding, 0, 0);
    c.pad_w = spatial(padding, 1, 0);
    c.dilation_h = spatial(dilation, 0, 1);
    c.dilation_w = spatial(dilation, 1, 1);
  } else {
    // 3-D: depth and height fold into one dimension whose output length is OD*OH and whose
    // filter is KD*KH taps, so FLOPs and output size stay exact.
    std::int64_t out_dh = 1, taps = 1;
    for (std::size_t i = 0; i + 1 < spatial_dims; ++i) {
      const std::int64_t k = w->dim(2 + i);
      out_dh *= out_len(in->dim(2 + i), k, spatial(stride, i, 1), spatial(padding, i, 0),
                        spatial(dilation, i, 1));
      taps *= k;
    }
    const std::size_t last = spatial_dims - 1;
    c.kernel_h = taps;
    c.in_h = out_dh + taps - 1;
    c.in_w = in->dim(in->rank() - 1);
    c.kernel_w = w->dim(w->rank() - 1);
    c.stride_w = spatial(stride, last, 1);
    c.pad_w = spatial(padding, last, 0);
    c.dilation_w = spatial(dilation, last, 1);
  }
  if (!c.valid()) return std::nullopt;
  return c;
}

GemmShape implicit_gemm(const ConvShape& c, std::string_view aten, const KernelClass& cls,
                        const Dim3& grid) {
  if (aten.find("backward") == std::string_view::npos)
    return conv_implicit_gemm(c, ConvPass::kForward);
  const GemmShape dgrad = conv_implicit_gemm(c, ConvPass::kDataGrad);
  const GemmShape wgrad = conv_implicit_gemm(c, ConvPass::kWeightGrad);
  if (cls.config.find("dgrad") != std::string::npos) return dgrad;
  if (cls.config.find("wgrad") != std::string::npos) return wgrad;
  // Which backward GEMM: the one whose output tiles match the launch (either tile
  // orientation, since names do not say which output dimension the tile's first side runs on).
  const double tm = std::max(1, cls.gemm.tile_m), tn = std::max(1, cls.gemm.tile_n);
  const double blocks = static_cast<double>(grid.x) * static_cast<double>(grid.y);
  auto mismatch = [&](const GemmShape& s) {
    const double a =
        std::ceil(static_cast<double>(s.m) / tm) * std::ceil(static_cast<double>(s.n) / tn);
    const double b =
        std::ceil(static_cast<double>(s.m) / tn) * std::ceil(static_cast<double>(s.n) / tm);
    return std::min(std::fabs(std::log(a / blocks)), std::fabs(std::log(b / blocks)));
  };
  return mismatch(dgrad) <= mismatch(wgrad) ? dgrad : wgrad;
}

}  // namespace pm2lat::reports::trace_rules
