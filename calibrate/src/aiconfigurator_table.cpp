#include "pm2lat/calibrate/aiconfigurator_table.h"

#include "pm2lat/op_context.h"

namespace pm2lat::calibrate {
namespace {

// A 64x64 CTA tile with a 64-deep K step: the tile size of cuBLAS's tensor-core kernels
// that best explains the wave quantisation in these tables (a coarser tile smooths over
// the steps, a finer one invents steps that are not there).
constexpr std::int32_t kNominalTile = 64;

}  // namespace

std::string nominal_gemm_config_name(DType dtype) {
  return "library_default_" + std::string(to_string(dtype)) + "_gemm";
}

KernelClass nominal_gemm_class(DType dtype) {
  KernelClass c;
  c.family = KernelFamily::kGemm;
  c.config = nominal_gemm_config_name(dtype);
  c.gemm.tile_m = c.gemm.tile_n = c.gemm.tile_k = kNominalTile;
  c.gemm.tensor_core = is_tensor_core_dtype(dtype);
  c.gemm.a = c.gemm.c = dtype;
  c.gemm.accumulate = DType::kFp32;
  c.gemm.layout = "tn";
  c.dtype = dtype;
  c.nominal = true;
  return c;
}

DType aiconfigurator_dtype(const std::string& dtype, const std::string& tc_dtype) {
  const std::string& s = tc_dtype.empty() ? dtype : tc_dtype;
  if (s.rfind("fp8", 0) == 0) return DType::kFp8E4M3;
  if (s.rfind("fp4", 0) == 0 || s.rfind("nvfp4", 0) == 0) return DType::kFp4E2M1;
  return parse_dtype(s);
}

KernelClass scaled_gemm_call_class(const std::string& backend, DType dtype, GemmScaling scaling) {
  KernelClass c;
  c.family = KernelFamily::kGemm;
  c.config = backend;
  c.gemm.tensor_core = true;
  c.gemm.a = c.gemm.b = dtype;
  c.gemm.c = DType::kBf16;
  c.gemm.accumulate = DType::kFp32;
  c.gemm.scaling = scaling;
  c.gemm.layout = "tn";
  c.dtype = dtype;
  return c;
}

namespace {

// Operand type and scaling of a row: the table's type label when it names a scaled type
// ("fp8", "fp8_block", "nvfp4"), else the tensor-core type (`tc_dtype`) without scaling.
void row_type(const std::string& dtype, const std::string& tc_dtype, DType& operand,
              GemmScaling& scaling) {
  if (parse_gemm_type_label(dtype, operand, scaling) && scaling != GemmScaling::kNone) return;
  operand = aiconfigurator_dtype(dtype, tc_dtype);
  scaling = GemmScaling::kNone;
}

std::string shape_suffix(const CsvTable& t, std::size_t row) {
  const auto& r = t.row(row);
  std::string key;
  for (const char* c : {"m", "n", "k"}) {
    const auto v = to_int(r[t.require(c)]);
    key += '|' + (v ? std::to_string(*v) : r[t.require(c)]);
  }
  return key;
}

}  // namespace

std::string aiconfigurator_shape_key(const CsvTable& t, std::size_t row) {
  const auto& r = t.row(row);
  const auto c_dtype = t.column("dtype"), c_tc = t.column("tc_dtype");
  DType operand = DType::kUnknown;
  GemmScaling scaling = GemmScaling::kNone;
  row_type(c_dtype ? r[*c_dtype] : "bf16", c_tc ? r[*c_tc] : "", operand, scaling);
  return "gemm|" + gemm_type_label(operand, scaling) + shape_suffix(t, row);
}

std::string aiconfigurator_split_key(const CsvTable& t, std::size_t row) {
  return "gemm|bf16" + shape_suffix(t, row);
}

std::vector<MeasuredCall> read_aiconfigurator_gemm(const CsvTable& t,
                                                   AiconfiguratorReadStats* stats) {
  AiconfiguratorReadStats local;
  AiconfiguratorReadStats& st = stats ? *stats : local;
  const std::size_t c_sys = t.require("system"), c_m = t.require("m"), c_n = t.require("n"),
                    c_k = t.require("k"), c_lat = t.require("latency_us");
  const auto c_dtype = t.column("dtype"), c_tc = t.column("tc_dtype"),
             c_src = t.column("kernel_source"), c_fw = t.column("framework");
  std::vector<MeasuredCall> out;
  out.reserve(t.rows());
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const auto& r = t.row(i);
    ++st.rows;
    const auto m = to_int(r[c_m]), n = to_int(r[c_n]), k = to_int(r[c_k]);
    const auto lat = to_double(r[c_lat]);
    DType dtype = DType::kUnknown;
    GemmScaling scaling = GemmScaling::kNone;
    row_type(c_dtype ? r[*c_dtype] : "bf16", c_tc ? r[*c_tc] : "", dtype, scaling);
    const std::string backend =
        (c_fw ? r[*c_fw] : std::string("aiconfigurator")) + ":" + (c_src ? r[*c_src] : "");
    if (!m || !n || !k || *m <= 0 || *n <= 0 || *k <= 0 || !lat || *lat <= 0 ||
        dtype == DType::kUnknown || (scaling != GemmScaling::kNone && !c_src)) {
      ++st.skipped;
      continue;
    }
    MeasuredCall c;
    c.device = r[c_sys];
    c.op = "linear";
    c.split = c_src ? r[*c_src] : "";
    c.kernel_class = scaling == GemmScaling::kNone
                         ? nominal_gemm_class(dtype)
                         : scaled_gemm_call_class(backend, dtype, scaling);
    KernelRecord& rec = c.record;
    rec.launch.name = c.kernel_class->config;
    rec.launch.grid = Dim3{static_cast<std::uint32_t>((*n + 63) / 64),
                           static_cast<std::uint32_t>((*m + 63) / 64), 1};
    rec.op.kind = OpKind::kGemm;
    rec.op.source = kOperatorCallTableSource;
    rec.op.name = "linear";
    GemmShape& g = rec.op.gemm;
    g.m = *m;
    g.n = *n;
    g.k = *k;
    g.trans_b = true;  // y = x W^T
    g.a = g.b = dtype;
    g.c = scaling == GemmScaling::kNone ? dtype : DType::kBf16;
    g.scaling = scaling;
    g.compute = DType::kFp32;
    rec.measured_us = *lat;
    rec.basis = TimeBasis::kKernel;
    c.shape_key = aiconfigurator_shape_key(t, i);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace pm2lat::calibrate
