#include "profile/scaled_gemm_json.h"

#include <string>

namespace pm2lat::scaled_gemm_json {
namespace {

using json_fields::json;
using json_fields::read_column;
using json_fields::Reader;

ScaledGemmFit read_fit(const Reader& r) {
  ScaledGemmFit f;
  f.config = r.child("config").string();
  if (f.config.empty()) r.child("config").fail("must not be empty");
  const std::string dtype = r.child("dtype").string();
  f.dtype = parse_dtype(dtype);
  if (f.dtype == DType::kUnknown) r.child("dtype").fail("unknown element type '" + dtype + "'");
  const std::string scaling = r.child("scaling").string();
  f.scaling = parse_gemm_scaling(scaling);
  if (f.scaling == GemmScaling::kNone || to_string(f.scaling) != scaling)
    r.child("scaling").fail("unknown scaling '" + scaling + "'");
  GemmConfigFit& g = f.gemm;
  g.config = f.config;
  g.dtype = f.dtype;
  g.tile_m = static_cast<std::int32_t>(r.child("tile_m").integer());
  g.tile_n = static_cast<std::int32_t>(r.child("tile_n").integer());
  g.tile_k = static_cast<std::int32_t>(r.child("tile_k").integer());
  for (const char* key : {"tile_m", "tile_n", "tile_k"}) {
    const auto v = r.child(key).integer();
    if (v < 1 || v > 1024) r.child(key).fail("out of range 1..1024");
  }
  g.blocks_per_sm = static_cast<std::int32_t>(r.child("blocks_per_sm").integer());
  if (g.blocks_per_sm < 1 || g.blocks_per_sm > 64)
    r.child("blocks_per_sm").fail("out of range 1..64");
  g.c0 = r.child("c0").number();
  g.c_wave_k = r.child("c_wave_k").non_negative();
  g.c_block_k = r.child("c_block_k").non_negative();
  g.c_wave = r.child("c_wave").non_negative();
  g.c_mem = r.child("c_mem").non_negative();
  f.quant_c0 = r.child("quant_c0").non_negative();
  f.quant_c_byte = r.child("quant_c_byte").non_negative();
  f.host_us = r.child("host_us").non_negative();
  f.host_unaligned_us = r.child("host_unaligned_us").non_negative();
  f.points = static_cast<std::int32_t>(r.integer("points", 0));
  f.fit_mape_pct = r.number("fit_mape_pct", 0);
  g.points = f.points;
  g.fit_mape_pct = f.fit_mape_pct;
  return f;
}

std::vector<ScaledGemmPoint> read_points(const Reader& r, std::size_t n_configs) {
  const std::size_t n = r.child("us").size();
  std::vector<ScaledGemmPoint> pts(n);
  auto positive = [](const Reader& v) {
    const auto x = v.integer();
    if (x <= 0) v.fail("must be positive");
    return x;
  };
  read_column(r, "config", n, [&](std::size_t i, const Reader& v) {
    const auto idx = v.integer();
    if (idx < 0 || static_cast<std::size_t>(idx) >= n_configs) v.fail("config index out of range");
    pts[i].config = static_cast<std::int32_t>(idx);
  });
  read_column(r, "m", n, [&](std::size_t i, const Reader& v) { pts[i].m = positive(v); });
  read_column(r, "n", n, [&](std::size_t i, const Reader& v) { pts[i].n = positive(v); });
  read_column(r, "k", n, [&](std::size_t i, const Reader& v) { pts[i].k = positive(v); });
  read_column(r, "us", n, [&](std::size_t i, const Reader& v) {
    pts[i].us = v.number();
    if (pts[i].us <= 0) v.fail("latency must be positive");
  });
  return pts;
}

}  // namespace

void read_section(const Reader& section, Profile& profile) {
  const auto version = section.child("version").integer();
  if (version != kScaledGemmSectionVersion) {
    section.child("version").fail("is " + std::to_string(version) + ", this build reads version " +
                                  std::to_string(kScaledGemmSectionVersion));
  }
  const Reader configs = section.child("configs");
  for (std::size_t i = 0; i < configs.size(); ++i)
    profile.scaled_gemm_fits.push_back(read_fit(configs.at(i)));
  if (section.has("points"))
    profile.scaled_gemm_points =
        read_points(section.child("points"), profile.scaled_gemm_fits.size());
}

json section_json(const Profile& p) {
  json configs = json::array();
  for (const ScaledGemmFit& f : p.scaled_gemm_fits) {
    const GemmConfigFit& g = f.gemm;
    configs.push_back({{"config", f.config},
                       {"dtype", std::string(to_string(f.dtype))},
                       {"scaling", std::string(to_string(f.scaling))},
                       {"tile_m", g.tile_m},
                       {"tile_n", g.tile_n},
                       {"tile_k", g.tile_k},
                       {"blocks_per_sm", g.blocks_per_sm},
                       {"c0", g.c0},
                       {"c_wave_k", g.c_wave_k},
                       {"c_block_k", g.c_block_k},
                       {"c_wave", g.c_wave},
                       {"c_mem", g.c_mem},
                       {"quant_c0", f.quant_c0},
                       {"quant_c_byte", f.quant_c_byte},
                       {"host_us", f.host_us},
                       {"host_unaligned_us", f.host_unaligned_us},
                       {"points", f.points},
                       {"fit_mape_pct", f.fit_mape_pct}});
  }
  json config = json::array(), m = json::array(), n = json::array(), k = json::array(),
       us = json::array();
  for (const ScaledGemmPoint& pt : p.scaled_gemm_points) {
    config.push_back(pt.config);
    m.push_back(pt.m);
    n.push_back(pt.n);
    k.push_back(pt.k);
    us.push_back(pt.us);
  }
  return {{"version", kScaledGemmSectionVersion},
          {"configs", configs},
          {"points", {{"config", config}, {"m", m}, {"n", n}, {"k", k}, {"us", us}}}};
}

}  // namespace pm2lat::scaled_gemm_json
