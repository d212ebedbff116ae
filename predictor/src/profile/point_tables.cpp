#include "profile/point_tables.h"

#include <cstdint>
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

// Column `key` of positive integers into `field` of every point.
template <typename Point>
void read_positive(const Reader& r, const char* key, std::vector<Point>& pts,
                   std::int64_t Point::*field) {
  read_column(r, key, pts.size(),
              [&](std::size_t i, const Reader& v) { pts[i].*field = v.positive_integer(); });
}

// Column `key` of integers that must not be negative into `field` of every point.
template <typename Point>
void read_non_negative(const Reader& r, const char* key, std::vector<Point>& pts,
                       std::int64_t Point::*field) {
  read_column(r, key, pts.size(), [&](std::size_t i, const Reader& v) {
    pts[i].*field = v.integer();
    if (pts[i].*field < 0) v.fail("must not be negative");
  });
}

// The launch grid of every point: columns grid_x, grid_y, grid_z.
template <typename Point>
void read_grid(const Reader& r, std::vector<Point>& pts) {
  for (const auto& column : {std::pair{"grid_x", &Dim3::x}, std::pair{"grid_y", &Dim3::y},
                             std::pair{"grid_z", &Dim3::z}}) {
    const auto dim = column.second;
    read_column(r, column.first, pts.size(), [&](std::size_t i, const Reader& v) {
      pts[i].grid.*dim = static_cast<std::uint32_t>(v.positive_integer());
    });
  }
}

// The measured latency of every point (µs): positive.
template <typename Point>
void read_latency(const Reader& r, std::vector<Point>& pts) {
  read_column(r, "us", pts.size(), [&](std::size_t i, const Reader& v) {
    pts[i].us = v.number();
    if (pts[i].us <= 0) v.fail("latency must be positive");
  });
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
  read_column(r, "config", n,
              [&](std::size_t i, const Reader& v) { pts[i].config = config_index(v, n_configs); });
  read_positive(r, "batch", pts, &GemmPoint::batch);
  read_positive(r, "m", pts, &GemmPoint::m);
  read_positive(r, "n", pts, &GemmPoint::n);
  read_positive(r, "k", pts, &GemmPoint::k);
  read_grid(r, pts);
  read_latency(r, pts);
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
  read_latency(r, pts);
  return pts;
}

std::vector<AttentionPoint> read_attention_points(const Reader& r, std::size_t n_configs) {
  const std::size_t n = r.child("us").size();
  std::vector<AttentionPoint> pts(n);
  read_column(r, "config", n,
              [&](std::size_t i, const Reader& v) { pts[i].config = config_index(v, n_configs); });
  read_positive(r, "batch", pts, &AttentionPoint::batch);
  read_positive(r, "seqlen_q", pts, &AttentionPoint::seqlen_q);
  read_positive(r, "seqlen_kv", pts, &AttentionPoint::seqlen_kv);
  read_positive(r, "heads", pts, &AttentionPoint::heads);
  read_positive(r, "kv_heads", pts, &AttentionPoint::kv_heads);
  read_non_negative(r, "window", pts, &AttentionPoint::window);
  read_column(r, "causal", n, [&](std::size_t i, const Reader& v) { pts[i].causal = v.boolean(); });
  read_latency(r, pts);
  return pts;
}

std::vector<ConvPoint> read_conv_points(const Reader& r, std::size_t n_configs) {
  const std::size_t n = r.child("us").size();
  std::vector<ConvPoint> pts(n);
  read_column(r, "config", n,
              [&](std::size_t i, const Reader& v) { pts[i].config = config_index(v, n_configs); });
  read_positive(r, "batch", pts, &ConvPoint::batch);
  read_positive(r, "in_channels", pts, &ConvPoint::in_channels);
  read_positive(r, "out_channels", pts, &ConvPoint::out_channels);
  read_positive(r, "in_h", pts, &ConvPoint::in_h);
  read_positive(r, "in_w", pts, &ConvPoint::in_w);
  read_positive(r, "kernel_h", pts, &ConvPoint::kernel_h);
  read_positive(r, "kernel_w", pts, &ConvPoint::kernel_w);
  read_positive(r, "stride", pts, &ConvPoint::stride);
  read_non_negative(r, "pad", pts, &ConvPoint::pad);
  read_grid(r, pts);
  read_latency(r, pts);
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
