#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "pm2lat/calibrate/run/random_operands.h"

namespace pm2lat::calibrate::run {
namespace {

float bf16_value(std::uint16_t h) {
  const std::uint32_t u = std::uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

float fp16_value(std::uint16_t h) {
  const int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  const float v = std::ldexp(1.0f + static_cast<float>(mant) / 1024.0f, exp - 15);
  return (h & 0x8000) ? -v : v;
}

float e4m3_value(unsigned char b) {
  const int exp = (b >> 3) & 0xf, mant = b & 7;
  const float v = std::ldexp(1.0f + static_cast<float>(mant) / 8.0f, exp - 7);
  return (b & 0x80) ? -v : v;
}

// Every value is finite, non-zero and of magnitude in [1/16, 1]; both signs occur.
template <typename F>
void check(const std::vector<unsigned char>& bytes, std::size_t size, F value) {
  ASSERT_GT(bytes.size(), 0u);
  int negative = 0;
  for (std::size_t i = 0; i + size <= bytes.size(); i += size) {
    const float v = value(&bytes[i]);
    ASSERT_TRUE(std::isfinite(v));
    ASSERT_GE(std::fabs(v), 1.0f / 16.0f - 1e-3f) << i;
    ASSERT_LE(std::fabs(v), 1.0f + 1e-3f) << i;
    negative += v < 0;
  }
  const double frac = static_cast<double>(negative) / static_cast<double>(bytes.size() / size);
  EXPECT_GT(frac, 0.4);
  EXPECT_LT(frac, 0.6);
}

TEST(RandomOperands, NoZerosNoNansInEveryType) {
  check(random_operand_bytes(DType::kFp32, 40000, 1), 4, [](const unsigned char* p) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  });
  check(random_operand_bytes(DType::kBf16, 40000, 2), 2, [](const unsigned char* p) {
    std::uint16_t h;
    std::memcpy(&h, p, 2);
    return bf16_value(h);
  });
  check(random_operand_bytes(DType::kFp16, 40000, 3), 2, [](const unsigned char* p) {
    std::uint16_t h;
    std::memcpy(&h, p, 2);
    return fp16_value(h);
  });
  check(random_operand_bytes(DType::kFp8E4M3, 40000, 4), 1,
        [](const unsigned char* p) { return e4m3_value(*p); });
}

TEST(RandomOperands, DependOnTheSeedAndRoundToWholeElements) {
  EXPECT_NE(random_operand_bytes(DType::kFp32, 64, 1), random_operand_bytes(DType::kFp32, 64, 2));
  EXPECT_EQ(random_operand_bytes(DType::kFp32, 64, 1), random_operand_bytes(DType::kFp32, 64, 1));
  EXPECT_EQ(random_operand_bytes(DType::kFp32, 10, 1).size(), 8u);
  EXPECT_EQ(random_operand_bytes(DType::kBf16, 11, 1).size(), 10u);
}

}  // namespace
}  // namespace pm2lat::calibrate::run
