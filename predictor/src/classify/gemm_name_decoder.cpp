#include "classify/gemm_name_decoder.h"

#include <array>
#include <string>
#include <utility>

#include "classify/lowp_name_decoder.h"
#include "classify/name_parts.h"
#include "pm2lat/text.h"

namespace pm2lat {
namespace {

bool is_layout2(std::string_view t) {
  return t == "nn" || t == "nt" || t == "tn" || t == "tt" || t == "NN" || t == "NT" || t == "TN" ||
         t == "TT";
}

// Element-type words as GEMM names spell them.
DType type_word(std::string_view w) {
  static constexpr std::array<std::pair<std::string_view, DType>, 14> kWords{{
      {"fp16", DType::kFp16},
      {"f16", DType::kFp16},
      {"bf16", DType::kBf16},
      {"tf32", DType::kTf32},
      {"fp32", DType::kFp32},
      {"f32", DType::kFp32},
      {"fp64", DType::kFp64},
      {"f64", DType::kFp64},
      {"e4m3", DType::kFp8E4M3},
      {"e5m2", DType::kFp8E5M2},
      {"fp8", DType::kFp8E4M3},
      {"int8", DType::kInt8},
      {"i8", DType::kInt8},
      {"s8", DType::kInt8},
  }};
  for (const auto& [word, type] : kWords) {
    if (w == word) return type;
  }
  return DType::kUnknown;
}

// "bf16bf16" -> {bf16, bf16}; "f32f32" -> {f32, f32}; "e4m3bf16" -> {e4m3, bf16}.
std::vector<DType> type_sequence(std::string_view t) {
  static constexpr std::array<std::string_view, 12> kOrdered{
      "tf32", "bf16", "e4m3", "e5m2", "fp16", "fp32", "f32", "f16", "f64", "i32", "i8", "s8"};
  std::vector<DType> out;
  while (!t.empty()) {
    bool matched = false;
    for (std::string_view w : kOrdered) {
      if (t.substr(0, w.size()) == w) {
        out.push_back(w == "i32" ? DType::kInt32 : type_word(w));
        t.remove_prefix(w.size());
        matched = true;
        break;
      }
    }
    if (!matched) return {};
  }
  return out;
}

// Accumulator letter of an instruction token ("s1688gemm" -> 's').
DType accumulate_letter(char c) {
  switch (c) {
    case 's': return DType::kFp32;
    case 'h': return DType::kFp16;
    case 'i': return DType::kInt32;
    case 'd': return DType::kFp64;
    default: return DType::kUnknown;
  }
}

// An instruction token: [shidzc][digits](gemm|fprop|dgrad|wgrad). Returns the suffix kind.
struct InstructionToken {
  char acc = 0;
  bool mma = false;  // digits present: tensor-core MMA shape
  std::string_view op;
};

std::optional<InstructionToken> instruction_token(std::string_view t) {
  static constexpr std::array<std::string_view, 4> kOps{"gemm", "fprop", "dgrad", "wgrad"};
  for (std::string_view op : kOps) {
    if (t.size() < op.size() || t.substr(t.size() - op.size()) != op) continue;
    std::string_view head = t.substr(0, t.size() - op.size());
    InstructionToken tok;
    tok.op = op;
    if (head.empty()) return tok;
    tok.acc = head.front();
    if (std::string_view("shidzc").find(tok.acc) == std::string_view::npos) return std::nullopt;
    head.remove_prefix(1);
    for (char c : head) {
      if (!is_digit(c)) return std::nullopt;
    }
    tok.mma = !head.empty();
    return tok;
  }
  return std::nullopt;
}

}  // namespace

int architecture_word_generation(std::string_view word) noexcept {
  static constexpr std::array<std::pair<std::string_view, int>, 9> kWords{{
      {"kepler", 3},
      {"maxwell", 5},
      {"pascal", 6},
      {"volta", 7},
      {"turing", 7},
      {"ampere", 8},
      {"ada", 8},
      {"hopper", 9},
      {"blackwell", 10},
  }};
  for (const auto& [name, cc] : kWords) {
    if (word == name) return cc;
  }
  return 0;
}

namespace {

std::optional<DecodedGemm> decode_legacy_cublas(std::string_view name) {
  const auto tok = split_underscore(name);
  if (tok.size() < 3 || architecture_word_generation(tok[0]) == 0) return std::nullopt;
  std::size_t g = 1;
  std::optional<InstructionToken> inst;
  for (; g < tok.size(); ++g) {
    inst = instruction_token(tok[g]);
    if (inst) break;
  }
  if (!inst || inst->op != "gemm" || inst->acc == 'c' || inst->acc == 'z') return std::nullopt;
  DecodedGemm out;
  GemmConfig& c = out.config;
  c.scheme = GemmNameScheme::kLegacyCublas;
  c.arch = std::string(tok[0]);
  c.accumulate = accumulate_letter(inst->acc);
  c.tensor_core = inst->mma;
  for (std::size_t i = 1; i < g; ++i) {
    if (auto t = type_word(tok[i]); t != DType::kUnknown) c.a = t;
  }
  if (c.a == DType::kUnknown) c.a = inst->mma ? DType::kFp16 : c.accumulate;
  c.c = c.a;
  bool have_tile = false;
  for (std::size_t i = g + 1; i < tok.size(); ++i) {
    const std::string_view t = tok[i];
    if (auto d = parse_dims(t); !d.empty() && !have_tile) {
      c.tile_m = d[0];
      c.tile_n = d[1];
      have_tile = true;
    } else if (t.substr(0, 6) == "sliced") {
      if (auto d = parse_dims(t.substr(6)); !d.empty()) c.slices = d[1];
    } else if (t == "stages" && i + 1 < tok.size()) {
      if (auto d = parse_dims(tok[i + 1]); !d.empty()) {
        c.tile_k = d[0];
        c.stages = d[1];
        ++i;
      }
    } else if (is_layout2(t)) {
      c.layout = ascii_lower(t);
    } else if (auto ty = type_word(t); ty != DType::kUnknown) {
      c.c = ty;
    }
  }
  if (!have_tile) return std::nullopt;
  return out;
}

std::optional<DecodedGemm> decode_legacy_sgemm(std::string_view name) {
  // sgemm_32x32x32_NN, sgemm_128x128x8_NT_vec
  const auto tok = split_underscore(name);
  if (tok.size() < 3 || (tok[0] != "sgemm" && tok[0] != "hgemm" && tok[0] != "dgemm"))
    return std::nullopt;
  const auto d = parse_dims(tok[1]);
  if (d.size() != 3) return std::nullopt;
  DecodedGemm out;
  GemmConfig& c = out.config;
  c.scheme = GemmNameScheme::kLegacySgemm;
  c.tile_m = d[0];
  c.tile_n = d[1];
  c.tile_k = d[2];
  c.accumulate = accumulate_letter(tok[0][0]);
  c.a = c.c = c.accumulate;
  if (is_layout2(tok[2])) c.layout = ascii_lower(tok[2]);
  return out;
}

std::optional<DecodedGemm> decode_xmma(std::string_view name) {
  const auto tok = split_underscore(name);
  if (tok.size() < 4 || tok[0].substr(0, 2) != "sm" || tok[1] != "xmma") return std::nullopt;
  DecodedGemm out;
  GemmConfig& c = out.config;
  c.scheme = GemmNameScheme::kXmma;
  c.arch = std::string(tok[0]);
  out.is_conv = tok[2] != "gemm";
  // Type groups: {A}{B}_{C}{Acc}_{Epilogue}.
  std::vector<std::vector<DType>> groups;
  for (std::size_t i = 2; i < tok.size(); ++i) {
    if (is_layout2(tok[i]) || tok[i].substr(0, 8) == "tilesize") break;
    auto seq = type_sequence(tok[i]);
    if (!seq.empty()) groups.push_back(std::move(seq));
  }
  bool tf32 = false;
  for (const auto& g : groups)
    for (DType t : g) tf32 = tf32 || t == DType::kTf32;
  if (!groups.empty()) c.a = groups[0][0];
  if (groups.size() >= 2) {
    c.c = groups[1][0] == DType::kTf32 ? c.a : groups[1][0];
    if (groups[1].size() >= 2) c.accumulate = groups[1][1];
  }
  if (c.a == DType::kTf32) c.a = DType::kFp32;
  if (c.c == DType::kTf32) c.c = DType::kFp32;
  for (std::size_t i = 2; i < tok.size(); ++i) {
    if (is_layout2(tok[i]) && c.layout.empty()) c.layout = ascii_lower(tok[i]);
  }
  const auto tile = dims_after(name, "tilesize");
  if (tile.size() < 2) return std::nullopt;
  c.tile_m = tile[0];
  c.tile_n = tile[1];
  if (tile.size() >= 3) c.tile_k = tile[2];
  if (auto s = int_after(name, "_stage")) c.stages = *s;
  auto warps = dims_after(name, "warpgroupsize");
  if (warps.empty()) warps = dims_after(name, "warpsize");
  if (warps.size() >= 2) {
    c.warps_m = warps[0];
    c.warps_n = warps[1];
    if (warps.size() >= 3) c.warps_k = warps[2];
  }
  if (auto cga = dims_after(name, "cgasize"); cga.size() >= 2) {
    c.cluster_m = cga[0];
    c.cluster_n = cga[1];
  }
  const bool ffma = contains(name, "_ffma") || contains(name, "_dfma");
  c.tensor_core = !ffma && (tf32 || contains(name, "_tensor") || contains(name, "warpgroupsize") ||
                            is_tensor_core_dtype(c.a));
  if (tf32) c.accumulate = DType::kFp32;
  c.split_k = contains(name, "split_k");
  if (auto al = int_after(name, "aligna")) c.align = *al;
  return out;
}

// One letter per type in nvjet names, BLAS style: s FP32, d FP64, h FP16, t BF16, q FP8 E4M3
// (the letters of cuBLASLt's FP8 kernels PyTorch's _scaled_mm runs: nvjet_qqtst_...).
DType nvjet_letter(char c) {
  switch (c) {
    case 's': return DType::kFp32;
    case 'd': return DType::kFp64;
    case 'h': return DType::kFp16;
    case 't': return DType::kBf16;
    case 'q': return DType::kFp8E4M3;
    default: return DType::kUnknown;
  }
}

// "qqtst": A, B, then accumulator/output letters; "tst": A and B, compute, output.
void nvjet_types(std::string_view letters, GemmConfig& c) {
  for (char ch : letters) {
    if (nvjet_letter(ch) == DType::kUnknown) return;
  }
  if (letters.size() < 3) return;
  c.a = nvjet_letter(letters[0]);
  c.b = letters.size() >= 5 ? nvjet_letter(letters[1]) : c.a;
  c.accumulate = nvjet_letter(letters[letters.size() - 2]);
  c.c = nvjet_letter(letters.back());
}

// Block scales of an operand: Avec32UE8M0 (MXFP8), Avec16UE4M3 (NVFP4), Avec128F32 (1x128).
GemmScaling nvjet_vector_scaling(std::string_view t) {
  if (t.size() < 5 || (t[0] != 'A' && t[0] != 'B') || t.substr(1, 3) != "vec")
    return GemmScaling::kNone;
  std::size_t e = 4;
  while (e < t.size() && is_digit(t[e])) ++e;
  return scale_word_scaling(t.substr(e));
}

std::optional<DecodedGemm> decode_nvjet(std::string_view name) {
  const auto tok = split_underscore(name);
  if (tok.size() < 4 || tok[0] != "nvjet") return std::nullopt;
  DecodedGemm out;
  GemmConfig& c = out.config;
  c.scheme = GemmNameScheme::kNvjet;
  c.tensor_core = true;
  int dims_seen = 0;
  for (std::size_t i = 1; i < tok.size(); ++i) {
    const std::string_view t = tok[i];
    if (t.substr(0, 2) == "sm" && parse_int(t.substr(2))) {
      c.arch = std::string(t);
      continue;
    }
    if (dims_seen == 0 && c.a == DType::kUnknown) nvjet_types(t, c);
    if (const GemmScaling s = nvjet_vector_scaling(t); s != GemmScaling::kNone) c.scaling = s;
    if (auto d = parse_dims(t); d.size() == 2) {
      if (dims_seen == 0) {
        c.tile_m = d[0];
        c.tile_n = d[1];
      } else if (dims_seen == 1) {
        c.tile_k = d[0];
        c.stages = d[1];
      } else if (dims_seen == 2) {
        c.cluster_m = d[0];
        c.cluster_n = d[1];
      }
      ++dims_seen;
      continue;
    }
    if (t == "splitK") c.split_k = true;
    if (i == tok.size() - 1 && t.size() == 3) {
      bool ok = true;
      for (char ch : t) ok = ok && (ch == 'T' || ch == 'N');
      if (ok) c.layout = ascii_lower(t.substr(0, 2));
    }
  }
  if (dims_seen < 2) return std::nullopt;
  return out;
}

std::optional<DecodedGemm> decode_cutlass2(std::string_view name) {
  const auto tok = split_underscore(name);
  if (tok.size() < 4 || tok[0] != "cutlass") return std::nullopt;
  DecodedGemm out;
  GemmConfig& c = out.config;
  c.scheme = GemmNameScheme::kCutlass2;
  std::size_t i = 1;
  if (parse_int(tok[i])) c.arch = "sm" + std::string(tok[i++]);
  std::string_view opclass;
  std::optional<InstructionToken> inst;
  std::size_t inst_at = 0;
  for (std::size_t j = i; j < tok.size(); ++j) {
    if (tok[j] == "simt" || tok[j] == "tensorop" || tok[j] == "wmma") {
      if (opclass.empty()) opclass = tok[j];
      continue;
    }
    inst = instruction_token(tok[j]);
    if (inst) {
      inst_at = j;
      break;
    }
  }
  if (!inst) return std::nullopt;
  out.is_conv = inst->op != "gemm";
  c.tensor_core = opclass == "tensorop" || opclass == "wmma" || inst->mma;
  c.accumulate = accumulate_letter(inst->acc);
  for (std::size_t j = i; j < inst_at; ++j) {
    if (auto t = type_word(tok[j]); t != DType::kUnknown) c.a = t;
  }
  int dims_seen = 0;
  for (std::size_t j = inst_at + 1; j < tok.size(); ++j) {
    const std::string_view t = tok[j];
    if (auto d = parse_dims(t); d.size() == 2) {
      if (dims_seen == 0) {
        c.tile_m = d[0];
        c.tile_n = d[1];
      } else if (dims_seen == 1) {
        c.tile_k = d[0];
        c.stages = d[1];
      }
      ++dims_seen;
    } else if (is_layout2(t)) {
      c.layout = ascii_lower(t);
    } else if (t == "nhwc" || t == "nchw") {
      c.layout = std::string(t);
    } else if (t.substr(0, 5) == "align") {
      if (auto a = parse_int(t.substr(5))) c.align = *a;
    } else if (auto ty = type_word(t); ty != DType::kUnknown && dims_seen == 0) {
      if (ty == DType::kTf32) {
        c.a = DType::kTf32;
      } else {
        c.c = ty;
      }
    }
  }
  if (dims_seen == 0) return std::nullopt;
  if (c.a == DType::kUnknown) {
    // sm80 "s1688" tensor-op instructions without an input type are TF32.
    c.a = c.tensor_core && inst->acc == 's' ? DType::kTf32 : c.accumulate;
  }
  if (c.a == DType::kTf32) c.a = DType::kFp32;
  if (c.c == DType::kUnknown) c.c = c.a;
  return out;
}

// The constants of a cute::tuple<cute::C<a>, cute::C<b>, ...>, `s` starting at its first
// "cute::C<" (at most three).
std::vector<std::int32_t> constant_tuple(std::string_view s) {
  std::vector<std::int32_t> v;
  while (v.size() < 3 && s.substr(0, 8) == "cute::C<") {
    s.remove_prefix(8);
    std::size_t e = 0;
    while (e < s.size() && is_digit(s[e])) ++e;
    const auto x = parse_int(s.substr(0, e));
    if (!x) break;
    v.push_back(*x);
    s.remove_prefix(e);
    if (s.empty() || s[0] != '>') break;
    s.remove_prefix(1);
    while (!s.empty() && (s[0] == ',' || s[0] == ' ')) s.remove_prefix(1);
  }
  return v;
}

// CUTLASS 3.x / CuTe: tile as cute::tuple<cute::C<BM>, cute::C<BN>, cute::C<BK>>; CUTLASS 2.x
// templates: GemmShape<BM, BN, BK>.
// A mangled name the demangler refused (truncated by a profiler): the Itanium encoding of
// GemmShape<BM, BN, BK> is "GemmShapeILi<BM>ELi<BN>ELi<BK>E".
std::optional<DecodedGemm> decode_mangled_gemm_shape(std::string_view name) {
  const std::size_t p = name.find("GemmShapeILi");
  if (name.substr(0, 2) != "_Z" || p == std::string_view::npos) return std::nullopt;
  std::vector<std::int32_t> dims;
  std::size_t i = p + 10;  // past "GemmShapeI"
  while (dims.size() < 3 && name.substr(i, 2) == "Li") {
    std::size_t e = i + 2;
    while (e < name.size() && is_digit(name[e])) ++e;
    auto v = parse_int(name.substr(i + 2, e - i - 2));
    if (!v || e >= name.size() || name[e] != 'E') break;
    dims.push_back(*v);
    i = e + 1;
  }
  if (dims.size() < 2) return std::nullopt;
  DecodedGemm out;
  out.config.scheme = GemmNameScheme::kCutlass2;
  out.config.tile_m = dims[0];
  out.config.tile_n = dims[1];
  if (dims.size() == 3) out.config.tile_k = dims[2];
  out.is_conv = contains(name, "Conv");
  out.config.tensor_core = contains(name, "TensorOp") || contains(name, "tfloat32");
  out.config.a = contains(name, "tfloat32") ? DType::kFp32 : DType::kUnknown;
  out.config.accumulate = DType::kFp32;
  return out;
}

std::optional<DecodedGemm> decode_cutlass_template(std::string_view name) {
  if (auto m = decode_mangled_gemm_shape(name)) return m;
  const bool cute = contains(name, "cute::C<") || contains(name, "cute::_");
  const bool gemm_shape = contains(name, "GemmShape<");
  if (!cute && !gemm_shape) return std::nullopt;
  if (!contains(name, "Gemm") && !contains(name, "gemm") && !contains(name, "Conv"))
    return std::nullopt;
  DecodedGemm out;
  GemmConfig& c = out.config;
  c.scheme = GemmNameScheme::kCutlass3;
  out.is_conv = contains(name, "Conv") || contains(name, "conv::");
  std::vector<std::int32_t> tile;
  if (cute) {
    // The CTA tile is the first cute::tuple of constants whose M is a tile's (>= 32): the
    // mainloop's dispatch policy comes first in CollectiveMma<Policy, TileShape, ...> and
    // carries the cluster shape (1, 2, 4, ...) as a tuple of its own.
    constexpr std::int32_t kMinTileM = 32;
    constexpr std::string_view kTuple = "cute::tuple<cute::C<";
    for (std::size_t p = name.find(kTuple); p != std::string_view::npos && tile.empty();
         p = name.find(kTuple, p + kTuple.size())) {
      const auto values = constant_tuple(name.substr(p + kTuple.size() - 8));
      if (values.size() >= 2 && values[0] >= kMinTileM) tile = values;
    }
    if (tile.empty()) {  // no tuple of tile size: the constants in order
      std::size_t p = name.find("cute::C<");
      while (p != std::string_view::npos && tile.size() < 3) {
        std::size_t e = p + 8;
        const std::size_t b = e;
        while (e < name.size() && is_digit(name[e])) ++e;
        if (auto v = parse_int(name.substr(b, e - b))) tile.push_back(*v);
        p = name.find("cute::C<", e);
      }
    }
  } else {
    const std::size_t p = name.find("GemmShape<");
    for (auto a : template_args(name.substr(p))) {
      std::string_view v = a;
      if (v.size() > 1 && (v.back() == 'l' || v.back() == 'u')) v.remove_suffix(1);
      if (auto n = parse_int(v)) tile.push_back(*n);
    }
    c.scheme = GemmNameScheme::kCutlass2;
  }
  if (tile.size() < 2) return std::nullopt;
  c.tile_m = tile[0];
  c.tile_n = tile[1];
  if (tile.size() >= 3) c.tile_k = tile[2];
  if (contains(name, "float_e2m1"))
    c.a = DType::kFp4E2M1;
  else if (contains(name, "float_e4m3"))
    c.a = DType::kFp8E4M3;
  else if (contains(name, "float_e5m2"))
    c.a = DType::kFp8E5M2;
  else if (contains(name, "bfloat16"))
    c.a = DType::kBf16;
  else if (contains(name, "half_t"))
    c.a = DType::kFp16;
  else if (contains(name, "tfloat32"))
    c.a = DType::kFp32;
  else if (contains(name, "<float"))
    c.a = DType::kFp32;
  c.tensor_core = contains(name, "Sm90") || contains(name, "Sm100") || contains(name, "GMMA") ||
                  contains(name, "UMMA") || contains(name, "TensorOp") ||
                  contains(name, "tfloat32") || is_tensor_core_dtype(c.a);
  c.accumulate = DType::kFp32;
  c.c = c.a;
  // Scale factors of block-scaled mainloops: UE8M0 (MX), UE4M3 (NVFP4), FP32 1x128 blocks
  // (vLLM's cutlass_3x_gemm_fp8_blockwise, CUTLASS's ...BlockwiseScaling... policies).
  if (contains(name, "float_ue8m0"))
    c.scaling = GemmScaling::kMx32;
  else if (contains(name, "float_ue4m3"))
    c.scaling = GemmScaling::kNv16;
  else if (contains(name, "lockwise") || contains(name, "Groupwise"))
    c.scaling = GemmScaling::kBlock128;
  return out;
}

}  // namespace

std::optional<DecodedGemm> decode_gemm_name(std::string_view name) {
  if (name.substr(0, 6) == "nvjet_") return decode_nvjet(name);
  if (name.substr(0, 2) == "sm" && contains(name, "_xmma_")) return decode_xmma(name);
  if (auto d = decode_lowp_gemm_name(name)) return d;
  if (name.substr(0, 8) == "cutlass_") {
    if (auto d = decode_cutlass2(name)) return d;
  }
  if (auto d = decode_legacy_sgemm(name)) return d;
  if (auto d = decode_legacy_cublas(name)) return d;
  return decode_cutlass_template(name);
}

}  // namespace pm2lat
