#include "pm2lat/models/physical_bounds.h"

#include <gtest/gtest.h>

#include "pm2lat/classifier.h"
#include "shipped_catalogue_test.h"

namespace pm2lat {
namespace {

using namespace bound_constants;

class PhysicalBoundsTest : public ShippedCatalogueTest {
 protected:
  static KernelRecord memory_record(KernelFamily, double bytes, Dim3 grid, Dim3 block) {
    KernelRecord r;
    r.launch.grid = grid;
    r.launch.block = block;
    r.op.kind = OpKind::kElementwise;
    r.op.vec.rows = 1;
    r.op.vec.cols = 1;
    r.op.vec.bytes_read = bytes / 2;
    r.op.vec.bytes_written = bytes / 2;
    return r;
  }
};

TEST_F(PhysicalBoundsTest, Bf16GemmIsBoundByItsTensorPeakNotItsFp32Accumulator) {
  KernelRecord r;
  r.op.kind = OpKind::kGemm;
  r.op.gemm = {.batch = 1, .m = 4096, .n = 4096, .k = 4096};
  r.op.gemm.a = r.op.gemm.b = r.op.gemm.c = DType::kBf16;
  r.op.gemm.compute = DType::kFp32;  // accumulator
  const OperatorWork w = operator_work(r.op, family(KernelFamily::kGemm));
  EXPECT_EQ(w.math, DType::kBf16);
  const DeviceSpec& h100 = gpu("H100");
  const PhysicalBounds b =
      physical_bounds(r, family(KernelFamily::kGemm), h100, &h100, TimeBasis::kKernel);
  EXPECT_EQ(b.lower_limit, LowerLimit::kCompute);
  EXPECT_NEAR(b.lower_us, 2.0 * 4096 * 4096 * 4096 / (kPeakMargin * h100.bf16_tflops * 1e6), 1e-6);
  EXPECT_FALSE(b.has_upper());  // a GEMM has no bandwidth ceiling
}

TEST_F(PhysicalBoundsTest, Fp32GemmRunsOnTf32OnlyWhenAllowed) {
  GemmShape g{.batch = 1, .m = 64, .n = 64, .k = 64};
  g.a = DType::kFp32;
  OpContext op;
  op.kind = OpKind::kGemm;
  op.gemm = g;
  EXPECT_EQ(operator_work(op, family(KernelFamily::kGemm)).math, DType::kFp32);
  op.gemm.compute = DType::kTf32;
  EXPECT_EQ(operator_work(op, family(KernelFamily::kGemm)).math, DType::kTf32);
  op.gemm.compute = DType::kFp32;
  KernelClass tensor_core = family(KernelFamily::kGemm);
  tensor_core.gemm.tensor_core = true;
  EXPECT_EQ(operator_work(op, tensor_core).math, DType::kTf32);
}

TEST_F(PhysicalBoundsTest, MemoryBoundKernelsHaveBothBoundsAndL2MayBeFaster) {
  const DeviceSpec& h100 = gpu("H100");
  const double bw = h100.bytes_per_us();
  const double fast = kPeakMargin * bw;
  const double l2 = h100.l2_mb * 1e6;
  const KernelRecord big =
      memory_record(KernelFamily::kElementwise, 1e9, {1u << 20, 1, 1}, {128, 1, 1});
  const PhysicalBounds b =
      physical_bounds(big, family(KernelFamily::kElementwise), h100, &h100, TimeBasis::kKernel);
  EXPECT_EQ(b.lower_limit, LowerLimit::kBandwidth);
  EXPECT_NEAR(b.lower_us, (1e9 - l2) / fast + l2 / (kL2BandwidthFactor * fast), 1e-6);
  EXPECT_NEAR(b.upper_us,
              kMaxFixedKernelUs + 1e9 / (min_bandwidth_efficiency(KernelFamily::kElementwise) * bw),
              1e-6);
  // Fills stream near the bandwidth; reductions may crawl (atomics, strided reads).
  EXPECT_GT(min_bandwidth_efficiency(KernelFamily::kMemset),
            5 * min_bandwidth_efficiency(KernelFamily::kReduction));
  EXPECT_FALSE(b.grid_limited);
  // A tiny kernel: the launch floor, and a ceiling near the largest fixed cost.
  const KernelRecord tiny = memory_record(KernelFamily::kElementwise, 1024, {1, 1, 1}, {128, 1, 1});
  const PhysicalBounds t =
      physical_bounds(tiny, family(KernelFamily::kElementwise), h100, &h100, TimeBasis::kKernel);
  EXPECT_EQ(t.lower_limit, LowerLimit::kLaunchFloor);
  EXPECT_DOUBLE_EQ(t.lower_us, kLaunchFloorUs);
  EXPECT_GT(t.upper_us, kMaxFixedKernelUs);
  EXPECT_LT(t.upper_us, kMaxFixedKernelUs + 50);
  // Call time (host dispatch included) allows a larger fixed cost.
  const PhysicalBounds c =
      physical_bounds(tiny, family(KernelFamily::kElementwise), h100, &h100, TimeBasis::kCall);
  EXPECT_GT(c.upper_us, kMaxFixedCallUs);
}

TEST_F(PhysicalBoundsTest, FewerBlocksThanSmsCannotUseTheWholeBandwidth) {
  const DeviceSpec& h100 = gpu("H100");
  // LayerNorm over 16 rows of 1M floats, one block per row.
  const double bytes = 16.0 * (1 << 20) * 4 * 2;
  const KernelRecord r = memory_record(KernelFamily::kLayerNorm, bytes, {16, 1, 1}, {512, 1, 1});
  const PhysicalBounds b =
      physical_bounds(r, family(KernelFamily::kLayerNorm), h100, &h100, TimeBasis::kKernel);
  EXPECT_TRUE(b.grid_limited);
  const double per_sm = kPeakMargin * kPerSmBandwidthShare * h100.bytes_per_us() / h100.sm_count;
  EXPECT_NEAR(b.lower_us, bytes / (16 * per_sm), 1e-6);
  // The whole GPU would be several times faster: the bound is the grid's.
  EXPECT_GT(b.lower_us, 1.5 * bytes / h100.bytes_per_us());
  // The same launch seen on a GPU with fewer SMs than blocks was sized to that GPU (a grid-
  // stride kernel): it is not a small launch on the H100.
  DeviceSpec small = h100;
  small.name = "small";
  small.sm_count = 8;
  EXPECT_FALSE(
      physical_bounds(r, family(KernelFamily::kLayerNorm), h100, &small, TimeBasis::kKernel)
          .grid_limited);
}

TEST_F(PhysicalBoundsTest, LibraryKernelGridsCountOnlyOnTheGpuThatTiledThem) {
  KernelRecord r;
  r.launch.grid = {8, 1, 1};
  r.launch.block = {256, 1, 1};
  r.op.kind = OpKind::kGemm;
  r.op.gemm = {.batch = 1, .m = 256, .n = 256, .k = 131072};
  r.op.gemm.a = DType::kBf16;
  const DeviceSpec& h100 = gpu("H100");
  const DeviceSpec& a100 = gpu("A100");
  const KernelClass gemm = family(KernelFamily::kGemm);
  const PhysicalBounds own = physical_bounds(r, gemm, h100, &h100, TimeBasis::kKernel);
  const PhysicalBounds other = physical_bounds(r, gemm, h100, &a100, TimeBasis::kKernel);
  EXPECT_TRUE(own.grid_limited);
  EXPECT_FALSE(other.grid_limited);
  // On its own GPU the 8 tiles occupy 8 SMs: the math of 8 SMs' peak bounds it.
  EXPECT_EQ(own.lower_limit, LowerLimit::kCompute);
  EXPECT_NEAR(own.lower_us,
              r.op.gemm.flops() / (kPeakMargin * h100.bf16_tflops * 1e6 * 8 / h100.sm_count), 1e-6);
  EXPECT_GT(own.lower_us, 5 * other.lower_us);
  // A table's nominal grid of output tiles, without a block, is no launch.
  r.launch.block = {1, 1, 1};
  EXPECT_FALSE(physical_bounds(r, gemm, h100, &h100, TimeBasis::kKernel).grid_limited);
}

TEST_F(PhysicalBoundsTest, GemvIsMemoryBoundAndGetsACeiling) {
  KernelRecord r;
  r.launch.grid = {256, 1, 1};
  r.launch.block = {128, 1, 1};
  r.op.kind = OpKind::kGemm;
  r.op.gemm = {.batch = 1, .m = 256, .n = 1, .k = 131072};
  r.op.gemm.a = DType::kFp32;
  const DeviceSpec& h100 = gpu("H100");
  const PhysicalBounds b =
      physical_bounds(r, family(KernelFamily::kGemv), h100, &h100, TimeBasis::kKernel);
  EXPECT_TRUE(b.has_upper());
  EXPECT_EQ(b.lower_limit, LowerLimit::kBandwidth);
}

TEST_F(PhysicalBoundsTest, ConvolutionsAreBoundByTheirChannelReductionOnly) {
  OpContext op;
  op.kind = OpKind::kConv;
  op.conv = {.batch = 8,
             .in_channels = 64,
             .out_channels = 64,
             .in_h = 56,
             .in_w = 56,
             .kernel_h = 3,
             .kernel_w = 3,
             .pad_h = 1,
             .pad_w = 1};
  op.conv.dtype = DType::kFp16;
  const OperatorWork w = operator_work(op, family(KernelFamily::kConv));
  EXPECT_NEAR(w.flops, op.conv.flops() / 9, 1);  // Winograd/FFT may skip the taps
  EXPECT_EQ(w.math, DType::kFp16);
}

TEST_F(PhysicalBoundsTest, ClampKeepsPredictionsInside) {
  PhysicalBounds b;
  b.lower_us = 2;
  b.upper_us = 10;
  EXPECT_DOUBLE_EQ(b.clamp(1), 2);
  EXPECT_DOUBLE_EQ(b.clamp(5), 5);
  EXPECT_DOUBLE_EQ(b.clamp(50), 10);
  EXPECT_TRUE(b.below(1.5));
  EXPECT_TRUE(b.above(11));
  EXPECT_TRUE(b.contains(10));
}

TEST_F(PhysicalBoundsTest, WorkMustFitTheLaunch) {
  auto consistent = [](double bytes, Dim3 grid, Dim3 block, const char* kernel) {
    return work_consistent_with_launch(bytes, grid, block, classify_kernel(kernel));
  };
  const char* cub_init =
      "void cub::DeviceScanInitKernel<cub::ScanTileState<int, true> >(cub::ScanTileState<int, "
      "true>, int)";
  // cub's scan-state initialisation (4 blocks x 128 threads) charged a whole feature tensor.
  EXPECT_FALSE(consistent(115e6, {4, 1, 1}, {128, 1, 1}, cub_init));
  // A one-warp loss-gradient kernel cannot have written the whole 4.1 MB gradient.
  EXPECT_FALSE(consistent(4.1e6, {1, 1, 1}, {32, 1, 1},
                          "void at::native::(anonymous namespace)::nll_loss_backward_reduce_"
                          "cuda_kernel_2d<float, long>(float*, float const*, long const*)"));
  // ATen's elementwise kernels map 4 elements to a thread: 2048 blocks x 128 threads.
  const char* add =
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
      "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)";
  EXPECT_TRUE(consistent(2048.0 * 128 * 48, {2048, 1, 1}, {128, 1, 1}, add));
  EXPECT_FALSE(consistent(2048.0 * 128 * 4096, {2048, 1, 1}, {128, 1, 1}, add));
  // So do vLLM's cache writes (a block per token): 888 tokens never move an 8.6 GB cache.
  const char* cache_write =
      "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, "
      "(vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, "
      "__nv_bfloat16*, long const*, long, long, long, long, int, int, int, float const*, float "
      "const*)";
  EXPECT_FALSE(consistent(8.6e9, {888, 1, 1}, {512, 1, 1}, cache_write));
  EXPECT_TRUE(consistent(3.7e6, {888, 1, 1}, {512, 1, 1}, cache_write));
  // A grid-stride copy sized to the GPU may move any tensor it is given, and rows loop:
  // 32768 layer-norm rows of 16384 floats, 128 threads a row.
  const char* cat =
      "void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 2, 128, "
      "1>(float*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<float, unsigned "
      "int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, "
      "unsigned int)";
  EXPECT_TRUE(consistent(581e6, {216, 8, 1}, {512, 1, 1}, cat));
  EXPECT_TRUE(consistent(32768.0 * 16384 * 8, {32768, 1, 1}, {128, 1, 1},
                         "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<"
                         "float, float>(int, float, float const*, float const*, float const*, "
                         "float*, float*, float*)"));
  // Unknown launches and math kernels are not judged by threads.
  EXPECT_TRUE(consistent(1e12, {1, 1, 1}, {1, 1, 1}, cat));
  EXPECT_TRUE(consistent(1e12, {8, 1, 1}, {128, 1, 1}, "ampere_sgemm_128x64_tn"));
}

TEST_F(PhysicalBoundsTest, ALaunchSizedByItsWorkGivesEachThreadSomeOfIt) {
  auto consistent = [](double bytes, Dim3 grid, Dim3 block, const char* kernel) {
    return work_consistent_with_launch(bytes, grid, block, classify_kernel(kernel));
  };
  // FBGEMM's embedding backward, 15437 blocks of 1024 threads, charged its share (by threads)
  // of the operator's gradient: 16.5 MB, about 1 B a thread. It took 5.7 ms on an A100.
  const char* tbe_backward =
      "void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<"
      "float, float, float, 2ul>(at::GenericPackedTensorAccessor<float, 2ul, "
      "at::RestrictPtrTraits, int>)";
  EXPECT_FALSE(consistent(16.5e6, {15437, 1, 1}, {32, 32, 1}, tbe_backward));
  // The same work over a launch no larger than one GPU holds at once says nothing.
  EXPECT_TRUE(consistent(16.5e6 / 64, {240, 1, 1}, {32, 32, 1}, tbe_backward));
  // ATen's warp-per-row softmax: 8 B a thread over 1.2M threads is its own work; just under 2 B
  // a thread is not.
  const char* softmax =
      "void (anonymous namespace)::softmax_warp_forward<float, float, float, 8, false, false>("
      "float*, float const*, int, int, int, bool const*, int, bool)";
  const double threads = 9408.0 * 128;
  EXPECT_TRUE(consistent(8 * threads, {9408, 1, 1}, {8, 16, 1}, softmax));
  EXPECT_TRUE(consistent(2 * threads, {9408, 1, 1}, {8, 16, 1}, softmax));
  EXPECT_FALSE(consistent(1.9 * threads, {9408, 1, 1}, {8, 16, 1}, softmax));
  // No stated work is not too little: the launch geometry answers anyway.
  EXPECT_TRUE(consistent(0, {9408, 1, 1}, {8, 16, 1}, softmax));
}

}  // namespace
}  // namespace pm2lat
