#include <gtest/gtest.h>

#include "pm2lat/dtype.h"
#include "pm2lat/kernel_class.h"
#include "pm2lat/op_context.h"
#include "pm2lat/prediction.h"

namespace pm2lat {
namespace {

TEST(DType, ParsesSpellingsFromEverySource) {
  EXPECT_EQ(parse_dtype("c10::BFloat16"), DType::kBf16);
  EXPECT_EQ(parse_dtype("float"), DType::kFp32);
  EXPECT_EQ(parse_dtype("CUDA_R_16F"), DType::kFp16);
  EXPECT_EQ(parse_dtype("long int"), DType::kInt64);
  EXPECT_EQ(parse_dtype("e4m3"), DType::kFp8E4M3);
  EXPECT_EQ(parse_dtype("unsigned long long"), DType::kInt64);
  EXPECT_EQ(parse_dtype("long unsigned int"), DType::kInt64);
  EXPECT_EQ(parse_dtype("unsigned int"), DType::kInt32);
  EXPECT_EQ(parse_dtype("unsigned char"), DType::kInt8);
  EXPECT_EQ(parse_dtype("__half"), DType::kFp16);
  EXPECT_EQ(parse_dtype("c10::Half"), DType::kFp16);
  EXPECT_EQ(parse_dtype("int64_t"), DType::kInt64);
  EXPECT_EQ(parse_dtype("uint8_t"), DType::kInt8);
  // 16-bit integers as CUB's template arguments and Kineto's input types spell them.
  EXPECT_EQ(parse_dtype("short"), DType::kInt16);
  EXPECT_EQ(parse_dtype("short int"), DType::kInt16);
  EXPECT_EQ(parse_dtype("unsigned short"), DType::kInt16);
  EXPECT_EQ(parse_dtype("short unsigned int"), DType::kInt16);
  EXPECT_EQ(parse_dtype("Short"), DType::kInt16);  // c10d's name
  EXPECT_EQ(parse_dtype("no such type"), DType::kUnknown);
  for (int i = 0; i <= static_cast<int>(DType::kBool); ++i) {
    const auto t = static_cast<DType>(i);
    if (t == DType::kUnknown) continue;
    EXPECT_EQ(parse_dtype(to_string(t)), t) << to_string(t);
  }
}

TEST(DType, Sizes) {
  EXPECT_EQ(dtype_bytes(DType::kBf16), 2);
  EXPECT_EQ(dtype_bytes(DType::kFp4E2M1), 0.5);
  EXPECT_EQ(dtype_bytes(DType::kInt16), 2);
  EXPECT_TRUE(is_tensor_core_dtype(DType::kTf32));
  EXPECT_FALSE(is_tensor_core_dtype(DType::kFp32));
}

TEST(Names, RoundTrip) {
  for (int i = 0; i < static_cast<int>(kKernelFamilyCount); ++i) {
    const auto f = static_cast<KernelFamily>(i);
    EXPECT_EQ(parse_kernel_family(to_string(f)), f);
  }
  for (int i = 0; i <= static_cast<int>(OpKind::kCollective); ++i) {
    const auto k = static_cast<OpKind>(i);
    EXPECT_EQ(parse_op_kind(to_string(k)), k);
  }
  EXPECT_EQ(flags_to_string(prediction_flags::kFallback | prediction_flags::kSpecScaled),
            "fallback,spec_scaled");
  EXPECT_EQ(flags_to_string(0), "");
  const std::uint32_t bounded =
      prediction_flags::kClamped | prediction_flags::kShapeRejected | prediction_flags::kAnchored;
  EXPECT_EQ(flags_to_string(bounded), "clamped,shape_rejected,anchored");
  EXPECT_EQ(parse_flags(flags_to_string(bounded)), bounded);
}

TEST(Shapes, ConvOutputAndFlops) {
  ConvShape c;
  c.batch = 2;
  c.in_channels = 3;
  c.out_channels = 8;
  c.in_h = c.in_w = 32;
  c.kernel_h = c.kernel_w = 3;
  c.pad_h = c.pad_w = 1;
  EXPECT_EQ(c.out_h(), 32);
  EXPECT_DOUBLE_EQ(c.flops(), 2.0 * 2 * 8 * 32 * 32 * 3 * 9);
  GemmShape g;
  g.m = 2;
  g.n = 3;
  g.k = 4;
  g.batch = 5;
  EXPECT_DOUBLE_EQ(g.flops(), 240.0);
}

}  // namespace
}  // namespace pm2lat
