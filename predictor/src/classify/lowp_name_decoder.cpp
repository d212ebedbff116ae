#include "classify/lowp_name_decoder.h"

#include <array>
#include <string>
#include <vector>

#include "classify/name_parts.h"

namespace pm2lat {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Element types as the low-precision names spell them (lower case): CUTLASS library words
// ("e4m3", "bf16", "f32"), TensorRT-LLM words ("bfloat16", "fp32") and CuTe DSL words
// ("f8e4m3fn", "f4e2m1fn").
DType element_word(std::string_view w) {
  static constexpr std::array<std::pair<std::string_view, DType>, 17> kWords{{
      {"e4m3", DType::kFp8E4M3},
      {"f8e4m3fn", DType::kFp8E4M3},
      {"e5m2", DType::kFp8E5M2},
      {"f8e5m2", DType::kFp8E5M2},
      {"e2m1", DType::kFp4E2M1},
      {"f4e2m1fn", DType::kFp4E2M1},
      {"bf16", DType::kBf16},
      {"bfloat16", DType::kBf16},
      {"f16", DType::kFp16},
      {"fp16", DType::kFp16},
      {"f32", DType::kFp32},
      {"fp32", DType::kFp32},
      {"tf32", DType::kTf32},
      {"s8", DType::kInt8},
      {"int8", DType::kInt8},
      {"s32", DType::kInt32},
      {"fp8", DType::kFp8E4M3},
  }};
  for (const auto& [word, type] : kWords) {
    if (w == word) return type;
  }
  return DType::kUnknown;
}

// The integers of a template argument list ("128u", "4096ul" count; "false" does not).
std::vector<std::int32_t> integer_args(std::string_view name) {
  std::vector<std::int32_t> out;
  for (std::string_view a : template_args(name)) {
    while (!a.empty() && (a.back() == 'u' || a.back() == 'l' || a.back() == 'U' || a.back() == 'L'))
      a.remove_suffix(1);
    if (auto v = parse_int(a)) out.push_back(*v);
  }
  return out;
}

bool power_of_two(std::int32_t v) { return v > 0 && (v & (v - 1)) == 0; }

// cutlass3x_{arch}_{opclass}_{instr}gemm_[block_scaled_]{A}_{B}_{acc}_{C}_{D}_{tile}_{cluster}_
// {stages}_{layouts}_align{N}_{schedule}: the CUTLASS library's procedural names (CUTLASS
// profiler documentation). Block-scaled operands are written {scale}x{element}.
std::optional<DecodedGemm> decode_cutlass3x(std::string_view name) {
  const auto tok = split_underscore(name);
  if (tok.size() < 6 || tok[0] != "cutlass3x") return std::nullopt;
  DecodedGemm out;
  GemmConfig& c = out.config;
  c.scheme = GemmNameScheme::kCutlass3;
  c.arch = std::string(tok[1]);
  c.tensor_core = true;
  std::size_t i = 2;
  while (i < tok.size() && !ends_with(tok[i], "gemm") && !ends_with(tok[i], "conv")) ++i;
  if (i == tok.size()) return std::nullopt;
  out.is_conv = ends_with(tok[i], "conv");
  ++i;
  std::vector<DType> types;
  GemmScaling scaling = GemmScaling::kNone;
  for (; i < tok.size(); ++i) {
    const std::string_view t = tok[i];
    if (t == "block" || t == "scaled") continue;
    if (!parse_dims(t).empty()) break;
    if (const auto x = t.find('x'); x != std::string_view::npos) {  // ue8m0xe4m3
      if (scaling == GemmScaling::kNone) scaling = scale_word_scaling(t.substr(0, x));
      types.push_back(element_word(t.substr(x + 1)));
    } else {
      types.push_back(t == "void" ? DType::kUnknown : element_word(t));
    }
  }
  if (types.size() < 2) return std::nullopt;
  c.a = types[0];
  c.b = types[1];
  if (types.size() >= 3) c.accumulate = types[2];
  c.c = types.back() != DType::kUnknown ? types.back() : types.size() >= 4 ? types[3] : c.a;
  c.scaling = scaling;
  for (int dims_seen = 0; i < tok.size(); ++i) {
    const auto d = parse_dims(tok[i]);
    if (d.size() == 3 && dims_seen == 0) {
      c.tile_m = d[0];
      c.tile_n = d[1];
      c.tile_k = d[2];
      ++dims_seen;
    } else if (d.size() == 3 && dims_seen == 1) {
      c.cluster_m = d[0];
      c.cluster_n = d[1];
      ++dims_seen;
    } else if (tok[i].size() == 3 && (tok[i][0] == 't' || tok[i][0] == 'n') &&
               (tok[i][1] == 't' || tok[i][1] == 'n')) {
      c.layout = std::string(tok[i].substr(0, 2));
    } else if (starts_with(tok[i], "align")) {
      if (auto a = parse_int(tok[i].substr(5))) c.align = *a;
    }
  }
  if (c.tile_m <= 0) return std::nullopt;
  return out;
}

// deep_gemm::sm90_fp8_gemm_1d2d_impl<SHAPE_M, SHAPE_N, SHAPE_K, groups, BLOCK_M, BLOCK_N,
// BLOCK_K, ...>, sm100_fp8_gemm_1d1d_impl<majors, SHAPE_M, SHAPE_N, SHAPE_K, BLOCK_M, ...>:
// the compiled shape comes first among the integer arguments (0 = given at run time), the
// CTA tile after it. 1D2D: 1x128 activation and 128x128 weight scales; 1D1D: 1x128 both.
std::optional<DecodedGemm> decode_deep_gemm(std::string_view name) {
  const std::string_view base = base_name(name);
  const std::size_t ns = base.rfind("::");
  const std::string_view fn = ns == std::string_view::npos ? base : base.substr(ns + 2);
  const bool in_namespace = contains(base, "deep_gemm");
  if (!starts_with(fn, "sm") || !contains(fn, "gemm") || (!in_namespace && !ends_with(fn, "_impl")))
    return std::nullopt;
  const auto tok = split_underscore(fn);
  if (tok.size() < 3 || !parse_int(tok[0].substr(2))) return std::nullopt;
  DecodedGemm out;
  GemmConfig& c = out.config;
  c.scheme = GemmNameScheme::kDeepGemm;
  c.arch = std::string(tok[0]);
  c.tensor_core = true;
  c.accumulate = DType::kFp32;
  c.c = DType::kBf16;
  c.layout = "tn";
  const bool mx = contains(fn, "mxfp8");
  const bool fp4 = contains(fn, "fp4");
  const bool fp8 = contains(fn, "fp8");
  c.a = fp8                    ? DType::kFp8E4M3
        : fp4                  ? DType::kFp4E2M1
        : contains(fn, "bf16") ? DType::kBf16
                               : DType::kUnknown;
  c.b = fp8 && fp4 ? DType::kFp4E2M1 : c.a;
  if (mx)
    c.scaling = GemmScaling::kMx32;
  else if (contains(fn, "1d2d") || contains(fn, "1d1d"))
    c.scaling = GemmScaling::kBlock128;
  const auto ints = integer_args(name);
  for (std::size_t i = 3; i + 2 < ints.size(); ++i) {
    const std::int32_t bm = ints[i], bn = ints[i + 1], bk = ints[i + 2];
    if (power_of_two(bm) && bm >= 16 && bm <= 256 && bn >= 8 && bn <= 256 && bn % 8 == 0 &&
        power_of_two(bk) && bk >= 32 && bk <= 256) {
      c.tile_m = bm;
      c.tile_n = bn;
      c.tile_k = bk;
      break;
    }
  }
  return out;
}

// One CamelCase type word of a TensorRT-LLM generated kernel ("E4m3", "MxE2m1", "Bfloat16"),
// from the front of `s`; advances `s`. kUnknown when none.
DType take_trtllm_type(std::string_view& s, bool& mx) {
  static constexpr std::array<std::pair<std::string_view, DType>, 8> kWords{{
      {"E4m3", DType::kFp8E4M3},
      {"E5m2", DType::kFp8E5M2},
      {"E2m1", DType::kFp4E2M1},
      {"Bfloat16", DType::kBf16},
      {"Fp16", DType::kFp16},
      {"Fp32", DType::kFp32},
      {"Fp8", DType::kFp8E4M3},
      {"Int8", DType::kInt8},
  }};
  mx = starts_with(s, "Mx");
  if (mx) s.remove_prefix(2);
  for (const auto& [word, type] : kWords) {
    if (starts_with(s, word)) {
      s.remove_prefix(word.size());
      return type;
    }
  }
  return DType::kUnknown;
}

// TensorRT-LLM's generated GEMMs (trtllm-gen): bmm_{out}_{A}{B}_{acc}_t{M}x{N}x{K}[u2]_s{S}_
// et{..}_m{..}_c[ga]{..}_..._{layout}_[transOut]_[dsFp8]_..._sm100a, the older
// GemmKernel_{out}_{elt}_{acc}_tile{M}x{N}x{K}_..._dsFp8_sm100a and
// BatchedGemmKernel_Batch{M,N}_{A}{B}{acc}_{out}_Tile{M}x{N}x{K}_.... dsFp8: DeepSeek FP8 block
// scales; Mx: OCP microscaling; E2m1 without Mx: NVFP4.
std::optional<DecodedGemm> decode_trtllm_gen(std::string_view name) {
  const std::string ln = lower(name.substr(0, 20));
  const bool bmm = starts_with(ln, "bmm_");
  const bool batched = starts_with(ln, "batchedgemmkernel_");
  const bool gemm = starts_with(ln, "gemmkernel_") || starts_with(ln, "gemmgatedactkernel_");
  if (!bmm && !batched && !gemm) return std::nullopt;
  const auto tok = split_underscore(name);
  if (tok.size() < 5) return std::nullopt;
  DecodedGemm out;
  GemmConfig& c = out.config;
  c.scheme = GemmNameScheme::kTrtllmGen;
  c.tensor_core = true;
  std::vector<std::pair<DType, bool>> types;  // type, microscaled
  std::size_t i = 1;
  for (; i < tok.size() && types.size() < 4; ++i) {
    std::string_view t = tok[i];
    if (t == "BatchM" || t == "BatchN" || starts_with(t, "cast")) continue;
    const std::size_t before = types.size();
    while (!t.empty()) {
      bool mx = false;
      const DType d = take_trtllm_type(t, mx);
      if (d == DType::kUnknown) break;
      types.emplace_back(d, mx);
    }
    if (types.size() == before) break;  // the first token past the types
  }
  if (types.size() < 3) return std::nullopt;
  // Positions of A, B, the accumulator and the output in each naming.
  std::size_t a = 1, b = types.size() >= 4 ? 2 : 1, acc = types.size() - 1, o = 0;
  if (batched) {
    a = 0;
    b = 1;
    acc = 2;
    o = types.size() - 1;
  }
  c.a = types[a].first;
  c.b = types[b].first;
  c.accumulate = types[acc].first;
  c.c = types[o].first;
  bool deepseek = false;
  for (; i < tok.size(); ++i) {
    const std::string_view t = tok[i];
    if (t == "dsFp8" || t == "DsFp8") deepseek = true;
    if (t == "TN" || t == "NT" || t == "NN" || t == "TT") c.layout = lower(t);
    if (starts_with(t, "sm") && parse_int(t.substr(2, 3))) c.arch = std::string(t);
    std::string_view dims;
    if (starts_with(t, "tile") || starts_with(t, "Tile"))
      dims = t.substr(4);
    else if (t.size() > 1 && t[0] == 't' && is_digit(t[1]))
      dims = t.substr(1);
    if (!dims.empty()) {
      if (const auto u = dims.find('u'); u != std::string_view::npos) dims = dims.substr(0, u);
      if (const auto d = parse_dims(dims); d.size() == 3 && c.tile_m == 0) {
        c.tile_m = d[0];
        c.tile_n = d[1];
        c.tile_k = d[2];
      }
    } else if (t.size() > 1 && t[0] == 's' && is_digit(t[1])) {
      if (auto st = parse_int(t.substr(1))) c.stages = *st;
    }
  }
  if (deepseek)
    c.scaling = GemmScaling::kBlock128;
  else if (types[a].second || types[b].second)
    c.scaling = GemmScaling::kMx32;
  else if (c.a == DType::kFp4E2M1)
    c.scaling = GemmScaling::kNv16;
  else if (c.a == DType::kFp8E4M3 || c.a == DType::kFp8E5M2)
    c.scaling = GemmScaling::kPerTensor;
  if (c.tile_m <= 0) return std::nullopt;
  return out;
}

// CuTe DSL kernels are named kernel_cutlass_kernel_<module path><class>_object_at__<tensor
// arguments>: the element types ride on the tensor arguments (tensorptrf8E4M3FN...), block
// scales are UE8M0 (f8E8M0FNU: microscaling) or UE4M3 next to E2M1 (NVFP4).
std::optional<DecodedGemm> decode_cute_dsl(std::string_view name) {
  if (!starts_with(name, "kernel_cutlass_")) return std::nullopt;
  const std::string l = lower(name);
  if (!contains(l, "gemm") || contains(l, "norm") || contains(l, "attn") || contains(l, "fmha"))
    return std::nullopt;
  DecodedGemm out;
  GemmConfig& c = out.config;
  c.scheme = GemmNameScheme::kCuteDsl;
  c.tensor_core = true;
  c.accumulate = DType::kFp32;
  const bool fp4 = contains(l, "f4e2m1") || contains(l, "nvfp4") || contains(l, "mxfp4");
  const bool fp8 = contains(l, "f8e4m3") || contains(l, "mxfp8") || contains(l, "fp8");
  c.a = fp4                   ? DType::kFp4E2M1
        : fp8                 ? DType::kFp8E4M3
        : contains(l, "bf16") ? DType::kBf16
                              : DType::kUnknown;
  c.b = c.a;
  if (contains(l, "f8e8m0") || contains(l, "mxfp"))
    c.scaling = GemmScaling::kMx32;
  else if (fp4 || contains(l, "nvfp4"))
    c.scaling = GemmScaling::kNv16;
  else if (contains(l, "blockscaled") && c.a == DType::kFp8E4M3)
    c.scaling = GemmScaling::kMx32;
  return out;
}

}  // namespace

GemmScaling scale_word_scaling(std::string_view word) {
  const std::string w = lower(word);
  if (w == "ue8m0" || w == "f8e8m0fnu" || w == "e8m0") return GemmScaling::kMx32;
  if (w == "ue4m3") return GemmScaling::kNv16;
  if (w == "f32") return GemmScaling::kBlock128;
  return GemmScaling::kNone;
}

std::optional<DecodedGemm> decode_lowp_gemm_name(std::string_view name) {
  if (auto d = decode_cutlass3x(name)) return d;
  if (auto d = decode_trtllm_gen(name)) return d;
  if (auto d = decode_cute_dsl(name)) return d;
  return decode_deep_gemm(name);
}

std::optional<QuantizeKernel> decode_quantize_name(std::string_view l) {
  const bool quant = contains(l, "quant") && !contains(l, "dequant");
  const bool fp4_cast = contains(l, "cvt_fp16_to_fp4") || contains(l, "cvt_fp8_to_fp4") ||
                        contains(l, "fp4_quant") || contains(l, "quantize_with_block_size");
  if (!quant && !fp4_cast) return std::nullopt;
  QuantizeKernel q;
  const bool fp4 = fp4_cast || contains(l, "fp4") || contains(l, "e2m1");
  const bool fp8 = contains(l, "fp8") || contains(l, "8bit") || contains(l, "e4m3") ||
                   contains(l, "float8") || contains(l, "mxfp8");
  if (fp4)
    q.dtype = DType::kFp4E2M1;
  else if (fp8)
    q.dtype = DType::kFp8E4M3;
  else if (contains(l, "int8"))
    q.dtype = DType::kInt8;
  else
    return std::nullopt;
  if (q.dtype == DType::kInt8) return q;
  if (contains(l, "mxfp") || contains(l, "e8m0"))
    q.scaling = GemmScaling::kMx32;
  else if (q.dtype == DType::kFp4E2M1)
    q.scaling = GemmScaling::kNv16;
  else if (contains(l, "group") || contains(l, "block"))
    q.scaling = GemmScaling::kBlock128;
  else if (contains(l, "per_token") || contains(l, "pertoken") || contains(l, "rowwise"))
    q.scaling = GemmScaling::kPerToken;
  else
    q.scaling = GemmScaling::kPerTensor;
  return q;
}

}  // namespace pm2lat
