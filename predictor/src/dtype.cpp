#include "pm2lat/dtype.h"

#include <algorithm>
#include <array>
#include <string>

#include "pm2lat/text.h"

namespace pm2lat {

std::string_view to_string(DType t) noexcept {
  switch (t) {
    case DType::kFp64: return "fp64";
    case DType::kFp32: return "fp32";
    case DType::kTf32: return "tf32";
    case DType::kFp16: return "fp16";
    case DType::kBf16: return "bf16";
    case DType::kFp8E4M3: return "fp8_e4m3";
    case DType::kFp8E5M2: return "fp8_e5m2";
    case DType::kFp4E2M1: return "fp4_e2m1";
    case DType::kInt8: return "int8";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kBool: return "bool";
    case DType::kUnknown: break;
  }
  return "unknown";
}

DType parse_dtype(std::string_view s) noexcept {
  std::string t;
  t.reserve(s.size());
  for (char ch : s) {
    if (ch != ' ') t.push_back(ascii_lower(ch));
  }
  // Strip namespaces such as "c10::" and "cutlass::".
  if (auto p = t.rfind("::"); p != std::string::npos) t = t.substr(p + 2);
  struct Alias {
    std::string_view name;
    DType type;
  };
  // C++ integer spellings as demangled template arguments (CUB's sort and scan policies) and
  // Kineto's input types give them: an unsigned type is taken as the signed type of its
  // width, which is all the models read of it.
  static constexpr auto kAliases = std::to_array<Alias>({
      {"fp64", DType::kFp64},
      {"double", DType::kFp64},
      {"float64", DType::kFp64},
      {"cuda_r_64f", DType::kFp64},
      {"fp32", DType::kFp32},
      {"float", DType::kFp32},
      {"float32", DType::kFp32},
      {"f32", DType::kFp32},
      {"cuda_r_32f", DType::kFp32},
      {"tf32", DType::kTf32},
      {"fp16", DType::kFp16},
      {"half", DType::kFp16},
      {"float16", DType::kFp16},
      {"f16", DType::kFp16},
      {"cuda_r_16f", DType::kFp16},
      {"bf16", DType::kBf16},
      {"bfloat16", DType::kBf16},
      {"bfloat16_t", DType::kBf16},
      {"cuda_r_16bf", DType::kBf16},
      {"fp8", DType::kFp8E4M3},
      {"fp8_e4m3", DType::kFp8E4M3},
      {"e4m3", DType::kFp8E4M3},
      {"float8_e4m3fn", DType::kFp8E4M3},
      {"cuda_r_8f_e4m3", DType::kFp8E4M3},
      {"fp8_e5m2", DType::kFp8E5M2},
      {"e5m2", DType::kFp8E5M2},
      {"float8_e5m2", DType::kFp8E5M2},
      {"cuda_r_8f_e5m2", DType::kFp8E5M2},
      {"fp4", DType::kFp4E2M1},
      {"fp4_e2m1", DType::kFp4E2M1},
      {"int8", DType::kInt8},
      {"cuda_r_8i", DType::kInt8},
      {"int8_t", DType::kInt8},
      {"uint8_t", DType::kInt8},
      {"char", DType::kInt8},
      {"signedchar", DType::kInt8},
      {"unsignedchar", DType::kInt8},
      {"int16", DType::kInt16},
      {"int16_t", DType::kInt16},
      {"uint16_t", DType::kInt16},
      {"cuda_r_16i", DType::kInt16},
      {"short", DType::kInt16},
      {"shortint", DType::kInt16},
      {"unsignedshort", DType::kInt16},
      {"shortunsignedint", DType::kInt16},
      {"int32", DType::kInt32},
      {"int", DType::kInt32},
      {"unsignedint", DType::kInt32},
      {"unsigned", DType::kInt32},
      {"cuda_r_32i", DType::kInt32},
      {"int32_t", DType::kInt32},
      {"int64", DType::kInt64},
      {"long", DType::kInt64},
      {"longint", DType::kInt64},
      {"int64_t", DType::kInt64},
      {"longlong", DType::kInt64},
      {"unsignedlong", DType::kInt64},
      {"longunsignedint", DType::kInt64},
      {"unsignedlonglong", DType::kInt64},
      {"bool", DType::kBool},
      {"half_t", DType::kFp16},
      {"__half", DType::kFp16},
      {"__nv_bfloat16", DType::kBf16},
  });
  for (const auto& a : kAliases) {
    if (t == a.name) return a.type;
  }
  return DType::kUnknown;
}

double dtype_bytes(DType t) noexcept {
  switch (t) {
    case DType::kFp64:
    case DType::kInt64: return 8;
    case DType::kFp16:
    case DType::kBf16:
    case DType::kInt16: return 2;
    case DType::kFp8E4M3:
    case DType::kFp8E5M2:
    case DType::kInt8:
    case DType::kBool: return 1;
    case DType::kFp4E2M1: return 0.5;
    case DType::kFp32:
    case DType::kTf32:
    case DType::kInt32:
    case DType::kUnknown: break;
  }
  return 4;
}

bool is_tensor_core_dtype(DType t) noexcept {
  switch (t) {
    case DType::kTf32:
    case DType::kFp16:
    case DType::kBf16:
    case DType::kFp8E4M3:
    case DType::kFp8E5M2:
    case DType::kFp4E2M1:
    case DType::kInt8: return true;
    default: return false;
  }
}

}  // namespace pm2lat
