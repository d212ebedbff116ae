#include "pm2lat/calibrate/neusight_table.h"

#include <cmath>
#include <cstdint>

#include "pm2lat/hash.h"
#include "pm2lat/text.h"

namespace pm2lat::calibrate {

bool neusight_vector_op(const std::string& op, std::int64_t rows, std::int64_t cols,
                        double element_bytes, OpContext& out) {
  const double n = static_cast<double>(rows) * static_cast<double>(cols);
  out.vec.rows = rows;
  out.vec.cols = cols;
  out.vec.dtype = DType::kFp32;
  out.name = op;
  if (op == "add" || op == "mul" || op == "div" || op == "pow" || op == "sub") {
    out.kind = OpKind::kElementwise;
    out.vec.bytes_read = 2 * n * element_bytes;
    out.vec.bytes_written = n * element_bytes;
  } else if (op == "addu" || op == "mulu" || op == "divu" || op == "powu" || op == "subu" ||
             op == "tanh" || op == "relu" || op == "gelu" || op == "sigmoid" || op == "exp") {
    out.kind = OpKind::kElementwise;
    out.vec.bytes_read = n * element_bytes;
    out.vec.bytes_written = n * element_bytes;
  } else if (op == "ln" || op == "layernorm") {
    out.kind = OpKind::kLayerNorm;
    // x read, y written, gamma/beta read, per-row mean and rstd written.
    out.vec.bytes_read = n * element_bytes + 2.0 * static_cast<double>(cols) * element_bytes;
    out.vec.bytes_written = n * element_bytes + 2.0 * static_cast<double>(rows) * 4;
  } else if (op == "softmax") {
    out.kind = OpKind::kSoftmax;
    out.vec.bytes_read = n * element_bytes;
    out.vec.bytes_written = n * element_bytes;
  } else {
    return false;
  }
  return true;
}

bool in_holdout(const std::string& shape_key, double fraction, unsigned seed) {
  if (fraction <= 0) return false;
  if (fraction >= 1) return true;
  const std::uint64_t h = fnv1a(shape_key, kFnvOffsetBasis ^ seed);
  return static_cast<double>(h % 1000000ULL) < fraction * 1e6;
}

std::string neusight_shape_key(const CsvTable& t, std::size_t row) {
  const auto& r = t.row(row);
  std::string key = r[t.require("op")];
  for (const char* c : {"B", "M", "N", "K", "H", "conv_in_ch", "conv_out_ch", "conv_kernel",
                        "conv_input_size", "conv_stride", "conv_padding"}) {
    const auto idx = t.column(c);
    key += '|';
    if (idx) {
      const auto v = to_int(r[*idx]);
      key += v ? std::to_string(*v) : r[*idx];
    }
  }
  return key;
}

std::vector<MeasuredCall> read_neusight_kernels(const CsvTable& t, NeusightReadStats* stats) {
  NeusightReadStats local;
  NeusightReadStats& st = stats ? *stats : local;
  const std::size_t c_device = t.require("device"), c_op = t.require("op"),
                    c_name = t.require("kernel_name"), c_lat = t.require("latency_us");
  const auto col = [&](const char* n) { return t.column(n); };
  const auto c_split = col("split"), c_gx = col("grid_x"), c_gy = col("grid_y"),
             c_gz = col("grid_z"), c_bx = col("block_x"), c_by = col("block_y"),
             c_bz = col("block_z"), c_B = col("B"), c_M = col("M"), c_N = col("N"), c_K = col("K"),
             c_H = col("H"), c_extra = col("extra_kernels"), c_dtype = col("dtype"),
             c_in = col("conv_in_ch"), c_out = col("conv_out_ch"), c_ks = col("conv_kernel"),
             c_size = col("conv_input_size"), c_stride = col("conv_stride"),
             c_pad = col("conv_padding");
  auto get = [&](const std::vector<std::string>& r, std::optional<std::size_t> c) -> std::string {
    return c ? r[*c] : std::string();
  };
  auto geti = [&](const std::vector<std::string>& r, std::optional<std::size_t> c) -> long long {
    return c ? to_int(r[*c]).value_or(0) : 0;
  };
  std::vector<MeasuredCall> out;
  out.reserve(t.rows());
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const auto& r = t.row(i);
    ++st.rows;
    const auto lat = to_double(r[c_lat]);
    if (!lat || *lat <= 0) {
      ++st.skipped_no_latency;
      continue;
    }
    MeasuredCall m;
    m.shape_key = neusight_shape_key(t, i);
    m.device = r[c_device];
    m.op = r[c_op];
    m.split = get(r, c_split);
    KernelRecord& rec = m.record;
    rec.launch.name = r[c_name];
    auto dim = [](long long v) { return static_cast<std::uint32_t>(v > 0 ? v : 1); };
    rec.launch.grid = Dim3{dim(geti(r, c_gx)), dim(geti(r, c_gy)), dim(geti(r, c_gz))};
    rec.launch.block = Dim3{dim(geti(r, c_bx)), dim(geti(r, c_by)), dim(geti(r, c_bz))};
    rec.measured_us = *lat;
    rec.basis = TimeBasis::kCall;
    rec.op.source = "neusight";
    rec.op.name = m.op;
    const DType dt = c_dtype ? parse_dtype(r[*c_dtype]) : DType::kFp32;
    const DType dtype = dt == DType::kUnknown ? DType::kFp32 : dt;
    m.extra_kernels = split_list(get(r, c_extra), ';');
    const long long B = geti(r, c_B), M = geti(r, c_M), N = geti(r, c_N), K = geti(r, c_K),
                    H = geti(r, c_H);
    if (m.op == "bmm" || m.op == "linear" || m.op == "matmul" || m.op == "addmm") {
      if (B <= 0 || M <= 0 || N <= 0 || K <= 0) {
        ++st.skipped_bad_shape;
        continue;
      }
      rec.op.kind = OpKind::kGemm;
      GemmShape& g = rec.op.gemm;
      g.batch = B;
      g.m = M;
      g.n = K;  // NeuSight: A[B,M,N] x B[B,N,K]; N is the reduction
      g.k = N;
      g.trans_b = m.op != "bmm";  // nn.Linear multiplies by the transposed weight
      g.a = g.b = g.c = g.compute = dtype;
      g.has_bias = m.op == "linear" || m.op == "addmm";
    } else if (m.op == "conv") {
      ConvShape& c = rec.op.conv;
      c.batch = B;
      c.in_channels = geti(r, c_in);
      c.out_channels = geti(r, c_out);
      c.kernel_h = c.kernel_w = geti(r, c_ks);
      c.in_h = c.in_w = geti(r, c_size);
      c.stride_h = c.stride_w = std::max(1LL, geti(r, c_stride));
      c.pad_h = c.pad_w = geti(r, c_pad);
      c.dtype = dtype;
      if (!c.valid()) {
        ++st.skipped_bad_shape;
        continue;
      }
      rec.op.kind = OpKind::kConv;
    } else {
      if (B <= 0 || H <= 0) {
        ++st.skipped_bad_shape;
        continue;
      }
      if (!neusight_vector_op(m.op, B, H, dtype_bytes(dtype), rec.op)) {
        ++st.skipped_unknown_op;
        continue;
      }
      rec.op.source = "neusight";
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace pm2lat::calibrate
