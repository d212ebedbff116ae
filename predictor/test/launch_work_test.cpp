// The work ATen's generic kernels imply by their launch (models/launch_work.h).
#include <gtest/gtest.h>

#include "pm2lat/classifier.h"
#include "pm2lat/models/launch_work.h"

namespace pm2lat {
namespace {

// at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>,
// std::array<char*, 3ul>>, as the driver names it and as a Kineto trace writes it.
constexpr const char* kMangledAdd =
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIN3c108BFloat16EEESt5"
    "arrayIPcLm3EEEEviT0_T1_";
constexpr const char* kDemangledAdd =
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
    "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, "
    "3ul>)";

TEST(LaunchWork, AnElementwiseLaunchCoversBlocksTimesThreadsTimesFourElementsOfEachTensor) {
  const KernelClass cls = classify_kernel(kDemangledAdd);
  ASSERT_EQ(cls.dtype, DType::kBf16);
  const auto w = launch_work(kDemangledAdd, cls, Dim3{6144, 1, 1}, Dim3{128, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->kind, OpKind::kElementwise);
  const double elements = 6144.0 * 128 * 4;
  EXPECT_DOUBLE_EQ(w->vec.bytes_written, elements * 2);   // one output
  EXPECT_DOUBLE_EQ(w->vec.bytes_read, 2 * elements * 2);  // two inputs
  EXPECT_EQ(w->vec.rows, 6144);
  EXPECT_DOUBLE_EQ(elementwise_launch_elements(kDemangledAdd, Dim3{6144, 1, 1}, Dim3{128, 1, 1}),
                   elements);
}

TEST(LaunchWork, TheMangledNameReadsTheSameAsTheDemangledOne) {
  const KernelClass cls = classify_kernel(kMangledAdd);
  const auto mangled = launch_work(kMangledAdd, cls, Dim3{100, 1, 1}, Dim3{128, 1, 1});
  const auto demangled = launch_work(kDemangledAdd, cls, Dim3{100, 1, 1}, Dim3{128, 1, 1});
  ASSERT_TRUE(mangled && demangled);
  EXPECT_DOUBLE_EQ(mangled->vec.bytes(), demangled->vec.bytes());
  EXPECT_GT(mangled->vec.bytes(), 0);
}

TEST(LaunchWork, KernelsWhoseGeometrySaysNothingHaveNone) {
  const char* layer_norm =
      "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, "
      "float, float const*, float const*, float const*, float*, float*, float*)";
  EXPECT_FALSE(launch_work(layer_norm, classify_kernel(layer_norm), Dim3{64, 1, 1}, Dim3{32, 4, 1})
                   .has_value());
  EXPECT_FALSE(launch_work("my_kernel", classify_kernel("my_kernel"), Dim3{}, Dim3{}).has_value());
}

}  // namespace
}  // namespace pm2lat
