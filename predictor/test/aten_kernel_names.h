// Kernel names as PyTorch's ATen launches them, for tests that price a real kernel by name.
#pragma once

namespace pm2lat::test {

// torch.relu on fp32 (ATen's clamp_min kernel, vectorised by 4).
inline constexpr const char* kAtenReluKernel =
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous "
    "namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
    "at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::"
    "operator()() const::{lambda(float)#1}, std::array<char*, 2ul> >(int, at::native::"
    "(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, "
    "c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() "
    "const::{lambda()#7}::operator()() const::{lambda(float)#1}, std::array<char*, 2ul>)";

}  // namespace pm2lat::test
