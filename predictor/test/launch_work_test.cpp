// The work ATen's generic kernels imply by their launch (models/launch_work.h).
#include <gtest/gtest.h>

#include <cmath>

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

TEST(LaunchWork, APersistentSoftmaxLaunchCoversItsWarpsRowsOfItsStatedLength) {
  // softmax over the last dimension of [512, 1000] in FP32: rows padded to 2^10, one per warp
  // of 32 threads, blocks of 4 warps (the launch a trace records for it: grid 128, (32, 4)).
  const char* forward =
      "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, "
      "false>(float*, float const*, int, int, int, bool const*, int, bool)";
  const auto f = launch_work(forward, classify_kernel(forward), Dim3{128, 1, 1}, Dim3{32, 4, 1});
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->kind, OpKind::kSoftmax);
  EXPECT_EQ(f->vec.rows, 512);
  EXPECT_EQ(f->vec.cols, 1024);
  EXPECT_DOUBLE_EQ(f->vec.bytes_read, 512.0 * 1024 * 4);
  EXPECT_DOUBLE_EQ(f->vec.bytes_written, 512.0 * 1024 * 4);

  // Rows of 8 BF16 elements: warps of 8 threads, two rows each ([3136 x 12 x 8, 8]: grid
  // 9408 of (8, 16)); the backward pass reads the gradient and the output.
  const char* backward =
      "void (anonymous namespace)::softmax_warp_backward<c10::BFloat16, c10::BFloat16, float, 3, "
      "false, false>(c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, int, int, int, "
      "bool const*)";
  const auto b = launch_work(backward, classify_kernel(backward), Dim3{9408, 1, 1}, Dim3{8, 16, 1});
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->vec.rows, 3136 * 12 * 8);
  EXPECT_EQ(b->vec.cols, 8);
  EXPECT_DOUBLE_EQ(b->vec.bytes_read, 2.0 * 3136 * 12 * 8 * 8 * 2);
  EXPECT_DOUBLE_EQ(b->vec.bytes_written, 3136.0 * 12 * 8 * 8 * 2);

  // A masked forward pass also reads its one-byte mask; a row length past the persistent
  // kernels' 2^11 is not one of theirs.
  const char* masked =
      "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, true>("
      "float*, float const*, int, int, int, bool const*, int, bool)";
  EXPECT_DOUBLE_EQ(
      launch_work(masked, classify_kernel(masked), Dim3{128, 1, 1}, Dim3{32, 4, 1})->vec.bytes_read,
      512.0 * 1024 * 5);
  const char* too_long = "softmax_warp_forward<float, float, float, 12, false, false>";
  EXPECT_FALSE(
      launch_work(too_long, classify_kernel(too_long), Dim3{1, 1, 1}, Dim3{32, 4, 1}).has_value());
}

// CUB's radix sort, one digit pass of 64-bit keys with 32-bit values (an embedding
// backward's sort of indices), as PyTorch's CUB instantiates it for an A100.
constexpr const char* kOnesweep =
    "void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<long, int, "
    "int>::Policy800, false, long, int, int, int>(int*, int*, int*, int const*, long*, long "
    "const*, int*, int const*, int, int, int)";

TEST(LaunchWork, ARadixSortPassReadsAndScattersOneTileOfKeysAndValuesPerBlock) {
  // Policy800: 21 items per thread for 4-byte types, 10 for the 8-byte keys (RegBoundScaling);
  // blocks of 384 threads.
  const auto w =
      launch_work(kOnesweep, classify_kernel(kOnesweep), Dim3{4117, 1, 1}, Dim3{384, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->kind, OpKind::kReduction);
  EXPECT_EQ(w->vec.rows, 4117);
  EXPECT_EQ(w->vec.cols, 384 * 10);
  EXPECT_DOUBLE_EQ(w->vec.bytes_read, 4117.0 * 384 * 10 * (8 + 4));
  EXPECT_DOUBLE_EQ(w->vec.bytes_written, w->vec.bytes_read);

  // 4-byte keys with values and 64-bit offsets run 17 items; keys alone (cub::NullType
  // values) move only the keys. Grids of 100 blocks of 384 threads.
  const auto pass = [](const char* name) {
    return launch_work(name, classify_kernel(name), Dim3{100, 1, 1}, Dim3{384, 1, 1});
  };
  const auto wide_offsets = pass(
      "void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<int, int, "
      "long>::Policy800, false, int, int, long, int>(long*, long*, long*, long const*, int*, int "
      "const*, int*, int const*, long, int, int)");
  ASSERT_TRUE(wide_offsets.has_value());
  EXPECT_EQ(wide_offsets->vec.cols, 384 * 17);
  const auto keys_only = pass(
      "void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<float, cub::NullType, "
      "int>::Policy800, false, float, cub::NullType, int, int>(int*, int*, int*, int const*, "
      "float*, float const*, cub::NullType*, cub::NullType const*, int, int, int)");
  ASSERT_TRUE(keys_only.has_value());
  EXPECT_DOUBLE_EQ(keys_only->vec.bytes_read, 100.0 * 384 * 21 * 4);
}

TEST(LaunchWork, AScanReadsAndWritesOneTileOfItsNamedPolicyPerBlock) {
  const char* scan =
      "void cub::DeviceScanKernel<cub::AgentScanPolicy<128, 15, int, (cub::BlockLoadAlgorithm)3, "
      "(cub::CacheLoadModifier)0, (cub::BlockStoreAlgorithm)3, (cub::BlockScanAlgorithm)2, "
      "cub::MemBoundScaling<128, 15, int> >, int*, int*, cub::ScanTileState<int, true>, "
      "cub::Sum, cub::NullType, int>(int*, int*, cub::ScanTileState<int, true>, int, cub::Sum, "
      "cub::NullType, int)";
  const auto w = launch_work(scan, classify_kernel(scan), Dim3{8233, 1, 1}, Dim3{128, 1, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->vec.cols, 128 * 15);
  EXPECT_DOUBLE_EQ(w->vec.bytes_read, 8233.0 * 128 * 15 * 4);
  EXPECT_DOUBLE_EQ(w->vec.bytes_written, w->vec.bytes_read);
}

TEST(LaunchWork, ACubKernelOfAPolicyNotReadHasNone) {
  // Hopper's and Blackwell's onesweep tunings differ per key, value and offset size and per
  // CCCL release: not guessed.
  const char* sm100 =
      "void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<long, int, "
      "int>::Policy1000, false, long, int, int, int>(int*, int*, int*, int const*, long*, long "
      "const*, int*, int const*, int, int, int)";
  EXPECT_FALSE(
      launch_work(sm100, classify_kernel(sm100), Dim3{4117, 1, 1}, Dim3{384, 1, 1}).has_value());
  // The histogram pass loops over the keys with a grid sized to the GPU: its launch says
  // nothing of how many.
  const char* histogram =
      "void cub::DeviceRadixSortHistogramKernel<cub::DeviceRadixSortPolicy<long, int, "
      "int>::Policy800, false, long, int>(int*, long const*, int, int, int)";
  EXPECT_FALSE(launch_work(histogram, classify_kernel(histogram), Dim3{864, 1, 1}, Dim3{128, 1, 1})
                   .has_value());
}

TEST(LaunchWork, NumbersNoKernelStatesReadAsNone) {
  // A name's integers past any count a kernel states (here 31 digits) read as none, without
  // overflowing (found by the classifier fuzzer; UBSan fails this test otherwise).
  const char* made_up = "elementwise_kernel<1111111111111111111111111111111, 2>";
  const auto w = launch_work(made_up, classify_kernel(made_up), Dim3{4096, 2, 1}, Dim3{32, 4, 1});
  ASSERT_TRUE(w.has_value());
  EXPECT_DOUBLE_EQ(w->vec.cols, 128 * 2);  // the block's threads x 2, as for no stated size
  EXPECT_TRUE(std::isfinite(w->vec.bytes()));
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
