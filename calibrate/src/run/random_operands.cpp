#include "pm2lat/calibrate/run/random_operands.h"

#include <cstring>
#include <random>

namespace pm2lat::calibrate::run {
namespace {

std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

// Round to nearest even; the values are normal and far from the type's limits.
std::uint16_t to_bf16(float f) {
  const std::uint32_t u = float_bits(f);
  return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

std::uint16_t to_fp16(float f) {
  const std::uint32_t u = float_bits(f);
  const std::uint32_t sign = (u >> 16) & 0x8000u;
  const int exp = static_cast<int>((u >> 23) & 0xffu) - 127 + 15;  // normal in fp16 for [1/16, 1)
  const std::uint32_t mant = (u >> 13) & 0x3ffu;
  return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(exp) << 10) | mant);
}

}  // namespace

std::vector<unsigned char> random_operand_bytes(DType type, std::size_t bytes, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> mag(1.0f / 16.0f, 1.0f);
  std::bernoulli_distribution negative(0.5);
  auto value = [&] { return negative(rng) ? -mag(rng) : mag(rng); };
  std::vector<unsigned char> out;
  switch (type) {
    case DType::kFp32:
    case DType::kTf32: {
      out.resize(bytes / 4 * 4);
      for (std::size_t i = 0; i < out.size(); i += 4) {
        const float f = value();
        std::memcpy(&out[i], &f, 4);
      }
      break;
    }
    case DType::kBf16:
    case DType::kFp16: {
      out.resize(bytes / 2 * 2);
      for (std::size_t i = 0; i < out.size(); i += 2) {
        const std::uint16_t h = type == DType::kBf16 ? to_bf16(value()) : to_fp16(value());
        std::memcpy(&out[i], &h, 2);
      }
      break;
    }
    case DType::kFp8E4M3: {
      // sign | 4-bit exponent (bias 7) | 3-bit mantissa; exponents 3..6 span [1/16, 1).
      std::uniform_int_distribution<int> exp(3, 6), mant(0, 7);
      out.resize(bytes);
      for (auto& b : out) {
        b = static_cast<unsigned char>((negative(rng) ? 0x80 : 0) | (exp(rng) << 3) | mant(rng));
      }
      break;
    }
    default: {
      // Other types are never GEMM operands here; bytes that are no zero in any format.
      std::uniform_int_distribution<int> byte(1, 0x7e);
      out.resize(bytes);
      for (auto& b : out) b = static_cast<unsigned char>(byte(rng));
      break;
    }
  }
  return out;
}

}  // namespace pm2lat::calibrate::run
