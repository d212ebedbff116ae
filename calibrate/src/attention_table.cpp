#include "pm2lat/calibrate/attention_table.h"

#include <cstdio>

#include "pm2lat/op_context.h"
#include "pm2lat/text.h"

namespace pm2lat::calibrate {
namespace {

bool has(const std::string& s, const char* needle) { return s.find(needle) != std::string::npos; }

DType table_dtype(const std::string& s) {
  if (s.rfind("fp8", 0) == 0) return DType::kFp8E4M3;
  const DType t = parse_dtype(s);
  return t == DType::kUnknown ? DType::kBf16 : t;
}

}  // namespace

AttentionVariant attention_backend_variant(const std::string& b) {
  if (has(b, "trtllmprefill")) return AttentionVariant::kTrtllmPrefill;
  if (has(b, "trtllmdecode")) return AttentionVariant::kTrtllmDecode;
  if (has(b, "fiprefill")) return AttentionVariant::kFlashInferPrefill;
  if (has(b, "fidecode")) return AttentionVariant::kFlashInferDecode;
  if (has(b, "flashinfer")) return AttentionVariant::kFlashInferPrefill;
  if (has(b, "triton")) return AttentionVariant::kTriton;
  if (has(b, "fa4") || has(b, "_v4")) return AttentionVariant::kFlash4;
  if (has(b, "fa3") || has(b, "_v3")) return AttentionVariant::kFlash3;
  if (has(b, "flash_attn") || has(b, "flash_attention") || has(b, "fa2"))
    return AttentionVariant::kFlash2;
  if (has(b, "trtllm") || b == "torch_flow") return AttentionVariant::kTrtllmPrefill;
  return AttentionVariant::kUnknown;
}

bool attention_call_writes_kv_cache(const std::string& framework, const std::string& version) {
  if (ascii_lower(framework) != "vllm") return false;
  int major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "%d.%d", &major, &minor) != 2) return false;
  return major == 0 && minor < 16;
}

std::string attention_shape_key(const CsvTable& t, std::size_t row) {
  const auto& r = t.row(row);
  std::string key = "attention";
  for (const char* c : {"op_name", "batch_size", "isl", "step", "num_heads", "num_key_value_heads",
                        "head_dim", "window_size"}) {
    key += '|';
    if (const auto idx = t.column(c)) {
      const auto v = to_int(r[*idx]);
      key += v ? std::to_string(*v) : r[*idx];
    }
  }
  return key;
}

std::vector<AttentionMeasurement> read_attention_table(const CsvTable& t,
                                                       AttentionReadStats* stats) {
  AttentionReadStats local;
  AttentionReadStats& st = stats ? *stats : local;
  const std::size_t c_sys = t.require("system"), c_src = t.require("kernel_source"),
                    c_b = t.require("batch_size"), c_isl = t.require("isl"),
                    c_h = t.require("num_heads"), c_d = t.require("head_dim"),
                    c_lat = t.require("latency_us");
  const auto c_op = t.column("op_name"), c_step = t.column("step"),
             c_kvh = t.column("num_key_value_heads"), c_win = t.column("window_size"),
             c_adt = t.column("attn_dtype"), c_kvdt = t.column("kv_cache_dtype"),
             c_fw = t.column("framework"), c_ver = t.column("version");
  std::vector<AttentionMeasurement> out;
  out.reserve(t.rows());
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const auto& r = t.row(i);
    ++st.rows;
    AttentionMeasurement m;
    m.system = r[c_sys];
    m.backend = r[c_src];
    m.op = c_op ? r[*c_op] : "context_attention";
    m.variant = attention_backend_variant(m.backend);
    if (m.variant == AttentionVariant::kUnknown) {
      ++st.skipped_unknown_backend;
      continue;
    }
    const auto b = to_int(r[c_b]), isl = to_int(r[c_isl]), h = to_int(r[c_h]), d = to_int(r[c_d]);
    const auto lat = to_double(r[c_lat]);
    const auto step = c_step ? to_int(r[*c_step]) : std::optional<long long>{};
    const long long kvh =
        c_kvh ? to_int(r[*c_kvh]).value_or(0) : 0;  // empty: as many as query heads
    const auto win = c_win ? to_int(r[*c_win]) : std::optional<long long>{};
    if (!b || !isl || !h || !d || !lat || *b <= 0 || *isl <= 0 || *h <= 0 || *d <= 0 || *lat <= 0 ||
        kvh < 0) {
      ++st.skipped_bad_shape;
      continue;
    }
    AttentionShape& s = m.record.op.attention;
    s.batch = *b;
    s.seqlen_q = *isl;
    s.seqlen_kv = *isl + std::max(0LL, step.value_or(0));  // generation: the cached context too
    s.heads = *h;
    s.kv_heads = kvh > 0 ? kvh : *h;
    s.head_dim = *d;
    s.window = std::max(0LL, win.value_or(0));
    s.causal = m.op != "encoder_attention";
    s.dtype = c_adt ? table_dtype(r[*c_adt]) : DType::kBf16;
    s.kv_dtype = c_kvdt && !r[*c_kvdt].empty() ? table_dtype(r[*c_kvdt]) : s.dtype;
    m.record.op.kind = OpKind::kAttention;
    m.record.op.source = kOperatorCallTableSource;
    m.record.op.name = m.op;
    m.record.launch.name = std::string(attention_variant_kernel_name(m.variant));
    m.record.measured_us = *lat;
    m.record.basis = TimeBasis::kKernel;
    m.shape_key = attention_shape_key(t, i);
    m.writes_kv_cache = c_fw && c_ver && attention_call_writes_kv_cache(r[*c_fw], r[*c_ver]);
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace pm2lat::calibrate
