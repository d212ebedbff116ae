#include "profile/point_tables.h"

#include <string>
#include <utility>
#include <vector>

#include "profile/scaled_gemm_json.h"

namespace pm2lat::point_tables {
namespace {

using json_fields::read_column;
using json_fields::Reader;

std::int32_t config_index(const Reader& v, std::size_t n_configs) {
  const auto idx = v.integer();
  if (idx < 0 || static_cast<std::size_t>(idx) >= n_configs) v.fail("config index out of range");
  return static_cast<std::int32_t>(idx);
}

std::vector<GemmPoint> read_gemm_points(const Reader& r, std::size_t n_configs) {
  const std::size_t n = r.child("us").size();
  std::vector<GemmPoint> pts(n);
  std::vector<std::string> ops;
  for (std::size_t i = 0; i < r.child("ops").size(); ++i)
    ops.push_back(r.child("ops").at(i).string());
  read_column(r, "op", n, [&](std::size_t i, const Reader& v) {
    const auto idx = v.integer();
    if (idx < 0 || static_cast<std::size_t>(idx) >= ops.size()) v.fail("op index out of range");
    pts[i].op = ops[static_cast<std::size_t>(idx)];
  });
  if (r.has("trans_b")) {
    read_column(r, "trans_b", n, [&](std::size_t i, const Reader& v) {
      pts[i].transposed_weight = v.integer() != 0;
    });
  } else {
    for (auto& p : pts)
      p.transposed_weight = p.op == "linear";  // profiles written before the column
  }
  read_column(r, "config", n, [&](std::size_t i, const Reader& v) {
    const auto idx = v.integer();
    if (idx < 0 || static_cast<std::size_t>(idx) >= n_configs) v.fail("config index out of range");
    pts[i].config = static_cast<std::int32_t>(idx);
  });
  read_column(r, "batch", n,
              [&](std::size_t i, const Reader& v) { pts[i].batch = v.positive_integer(); });
  read_column(r, "m", n, [&](std::size_t i, const Reader& v) { pts[i].m = v.positive_integer(); });
  read_column(r, "n", n, [&](std::size_t i, const Reader& v) { pts[i].n = v.positive_integer(); });
  read_column(r, "k", n, [&](std::size_t i, const Reader& v) { pts[i].k = v.positive_integer(); });
  read_column(r, "grid_x", n, [&](std::size_t i, const Reader& v) {
    pts[i].grid.x = static_cast<std::uint32_t>(v.positive_integer());
  });
  read_column(r, "grid_y", n, [&](std::size_t i, const Reader& v) {
    pts[i].grid.y = static_cast<std::uint32_t>(v.positive_integer());
  });
  read_column(r, "grid_z", n, [&](std::size_t i, const Reader& v) {
    pts[i].grid.z = static_cast<std::uint32_t>(v.positive_integer());
  });
  read_column(r, "us", n, [&](std::size_t i, const Reader& v) {
    pts[i].us = v.number();
    if (pts[i].us <= 0) v.fail("latency must be positive");
  });
  return pts;
}

std::vector<VectorPoint> read_vector_points(const Reader& r, std::size_t n_fits) {
  const std::size_t n = r.child("us").size();
  std::vector<VectorPoint> pts(n);
  read_column(r, "fit", n, [&](std::size_t i, const Reader& v) {
    const auto idx = v.integer();
    if (idx < 0 || static_cast<std::size_t>(idx) >= n_fits) v.fail("fit index out of range");
    pts[i].fit = static_cast<std::int32_t>(idx);
  });
  read_column(r, "rows", n, [&](std::size_t i, const Reader& v) { pts[i].rows = v.integer(); });
  read_column(r, "cols", n, [&](std::size_t i, const Reader& v) { pts[i].cols = v.integer(); });
  read_column(r, "bytes", n,
              [&](std::size_t i, const Reader& v) { pts[i].bytes = v.non_negative(); });
  read_column(r, "us", n, [&](std::size_t i, const Reader& v) {
    pts[i].us = v.number();
    if (pts[i].us <= 0) v.fail("latency must be positive");
  });
  return pts;
}

std::vector<AttentionPoint> read_attention_points(const Reader& r, std::size_t n_configs) {
  const std::size_t n = r.child("us").size();
  std::vector<AttentionPoint> pts(n);
  read_column(r, "config", n,
              [&](std::size_t i, const Reader& v) { pts[i].config = config_index(v, n_configs); });
  read_column(r, "batch", n,
              [&](std::size_t i, const Reader& v) { pts[i].batch = v.positive_integer(); });
  read_column(r, "seqlen_q", n,
              [&](std::size_t i, const Reader& v) { pts[i].seqlen_q = v.positive_integer(); });
  read_column(r, "seqlen_kv", n,
              [&](std::size_t i, const Reader& v) { pts[i].seqlen_kv = v.positive_integer(); });
  read_column(r, "heads", n,
              [&](std::size_t i, const Reader& v) { pts[i].heads = v.positive_integer(); });
  read_column(r, "kv_heads", n,
              [&](std::size_t i, const Reader& v) { pts[i].kv_heads = v.positive_integer(); });
  read_column(r, "window", n, [&](std::size_t i, const Reader& v) {
    pts[i].window = v.integer();
    if (pts[i].window < 0) v.fail("must not be negative");
  });
  read_column(r, "causal", n, [&](std::size_t i, const Reader& v) { pts[i].causal = v.boolean(); });
  read_column(r, "us", n, [&](std::size_t i, const Reader& v) {
    pts[i].us = v.number();
    if (pts[i].us <= 0) v.fail("latency must be positive");
  });
  return pts;
}

std::vector<ConvPoint> read_conv_points(const Reader& r, std::size_t n_configs) {
  const std::size_t n = r.child("us").size();
  std::vector<ConvPoint> pts(n);
  read_column(r, "config", n,
              [&](std::size_t i, const Reader& v) { pts[i].config = config_index(v, n_configs); });
  read_column(r, "batch", n,
              [&](std::size_t i, const Reader& v) { pts[i].batch = v.positive_integer(); });
  read_column(r, "in_channels", n,
              [&](std::size_t i, const Reader& v) { pts[i].in_channels = v.positive_integer(); });
  read_column(r, "out_channels", n,
              [&](std::size_t i, const Reader& v) { pts[i].out_channels = v.positive_integer(); });
  read_column(r, "in_h", n,
              [&](std::size_t i, const Reader& v) { pts[i].in_h = v.positive_integer(); });
  read_column(r, "in_w", n,
              [&](std::size_t i, const Reader& v) { pts[i].in_w = v.positive_integer(); });
  read_column(r, "kernel_h", n,
              [&](std::size_t i, const Reader& v) { pts[i].kernel_h = v.positive_integer(); });
  read_column(r, "kernel_w", n,
              [&](std::size_t i, const Reader& v) { pts[i].kernel_w = v.positive_integer(); });
  read_column(r, "stride", n,
              [&](std::size_t i, const Reader& v) { pts[i].stride = v.positive_integer(); });
  read_column(r, "pad", n, [&](std::size_t i, const Reader& v) {
    pts[i].pad = v.integer();
    if (pts[i].pad < 0) v.fail("must not be negative");
  });
  read_column(r, "grid_x", n, [&](std::size_t i, const Reader& v) {
    pts[i].grid.x = static_cast<std::uint32_t>(v.positive_integer());
  });
  read_column(r, "grid_y", n, [&](std::size_t i, const Reader& v) {
    pts[i].grid.y = static_cast<std::uint32_t>(v.positive_integer());
  });
  read_column(r, "grid_z", n, [&](std::size_t i, const Reader& v) {
    pts[i].grid.z = static_cast<std::uint32_t>(v.positive_integer());
  });
  read_column(r, "us", n, [&](std::size_t i, const Reader& v) {
    pts[i].us = v.number();
    if (pts[i].us <= 0) v.fail("latency must be positive");
  });
  return pts;
}

}  // namespace

const char* section_of(PointTable table) noexcept {
  switch (table) {
    case PointTable::kGemm: return "gemm";
    case PointTable::kVector: return "vector";
    case PointTable::kAttention: return "attention";
    case PointTable::kConv: return "conv";
    case PointTable::kScaledGemm: return "scaled_gemm";
    case PointTable::kFamily: return "families";
  }
  return "";
}

void read(const Reader& section, PointTable table, Profile& p) {
  if (table == PointTable::kScaledGemm) {
    // The section's reader checks points against the fits it reads with them.
    Profile read;
    scaled_gemm_json::read_section(section, read);
    p.scaled_gemm_points = std::move(read.scaled_gemm_points);
    return;
  }
  const Reader points = section.child("points");
  switch (table) {
    case PointTable::kGemm: p.gemm_points = read_gemm_points(points, p.gemm_configs.size()); return;
    case PointTable::kVector:
      p.vector_points = read_vector_points(points, p.vector_fits.size());
      return;
    case PointTable::kAttention:
      p.attention_points = read_attention_points(points, p.attention_configs.size());
      return;
    case PointTable::kConv: p.conv_points = read_conv_points(points, p.conv_configs.size()); return;
    case PointTable::kScaledGemm: return;  // above
    case PointTable::kFamily:
      p.family_points = read_vector_points(points, p.family_fits.size());
      return;
  }
}

}  // namespace pm2lat::point_tables
