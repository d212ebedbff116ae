// Writing profile JSON: the layout profile_reader.cpp reads (calibration points column-wise,
// one array per field).
#include "pm2lat/profile_io.h"

#include <algorithm>
#include <fstream>

#include "profile/json_fields.h"
#include "profile/scaled_gemm_json.h"

namespace pm2lat {
namespace {

using json_fields::json;

json gemm_config_json(const GemmConfigFit& c) {
  json out = {{"config", c.config},
              {"dtype", std::string(to_string(c.dtype))},
              {"blocks_per_sm", c.blocks_per_sm},
              {"tile_m", c.tile_m},
              {"tile_n", c.tile_n},
              {"tile_k", c.tile_k},
              {"tile_m_on_n", c.tile_m_on_n},
              {"c0", c.c0},
              {"c_wave_k", c.c_wave_k},
              {"c_block_k", c.c_block_k},
              {"c_wave", c.c_wave},
              {"c_mem", c.c_mem},
              {"points", c.points},
              {"fit_mape_pct", c.fit_mape_pct}};
  // Written only when set: profiles of named kernels read the same as before the field.
  if (c.nominal_launch) out["nominal_launch"] = true;
  return out;
}

json vector_section_json(const std::vector<VectorFit>& fits,
                         const std::vector<VectorPoint>& points) {
  json out_fits = json::array();
  for (const auto& f : fits) {
    json j = {{"op", f.op},
              {"config", f.config},
              {"c0", f.c0},
              {"c_byte", f.c_byte},
              {"c_row", f.c_row},
              {"points", f.points},
              {"fit_mape_pct", f.fit_mape_pct}};
    if (f.bytes_max > 0) {
      j["bytes_min"] = f.bytes_min;
      j["bytes_max"] = f.bytes_max;
    }
    if (f.rows_max > 0) j["rows_max"] = f.rows_max;
    out_fits.push_back(std::move(j));
  }
  json fit = json::array(), rows = json::array(), cols = json::array(), bytes = json::array(),
       us = json::array();
  for (const auto& pt : points) {
    fit.push_back(pt.fit);
    rows.push_back(pt.rows);
    cols.push_back(pt.cols);
    bytes.push_back(pt.bytes);
    us.push_back(pt.us);
  }
  return {{"fits", out_fits},
          {"points", {{"fit", fit}, {"rows", rows}, {"cols", cols}, {"bytes", bytes}, {"us", us}}}};
}

json attention_section_json(const Profile& p) {
  json configs = json::array();
  for (const auto& c : p.attention_configs) {
    configs.push_back({{"variant", c.variant},
                       {"head_dim", c.head_dim},
                       {"kv_dtype", std::string(to_string(c.kv_dtype))},
                       {"local", c.local},
                       {"tile_m", c.tile_m},
                       {"tile_n", c.tile_n},
                       {"ctas_per_sm", c.ctas_per_sm},
                       {"gqa_packing", c.gqa_packing},
                       {"c0", c.c0},
                       {"c_iter", c.c_iter},
                       {"c_cta", c.c_cta},
                       {"c_qo", c.c_qo},
                       {"c_kv", c.c_kv},
                       {"points", c.points},
                       {"fit_mape_pct", c.fit_mape_pct}});
    if (c.calls_write_kv_cache) configs.back()["calls_write_kv_cache"] = true;
  }
  json config = json::array(), batch = json::array(), sq = json::array(), skv = json::array(),
       heads = json::array(), kvh = json::array(), window = json::array(), causal = json::array(),
       us = json::array();
  for (const auto& pt : p.attention_points) {
    config.push_back(pt.config);
    batch.push_back(pt.batch);
    sq.push_back(pt.seqlen_q);
    skv.push_back(pt.seqlen_kv);
    heads.push_back(pt.heads);
    kvh.push_back(pt.kv_heads);
    window.push_back(pt.window);
    causal.push_back(pt.causal);
    us.push_back(pt.us);
  }
  return {{"configs", configs},
          {"points",
           {{"config", config},
            {"batch", batch},
            {"seqlen_q", sq},
            {"seqlen_kv", skv},
            {"heads", heads},
            {"kv_heads", kvh},
            {"window", window},
            {"causal", causal},
            {"us", us}}}};
}

json conv_section_json(const Profile& p) {
  json configs = json::array();
  for (const auto& c : p.conv_configs) configs.push_back(gemm_config_json(c));
  json config = json::array(), batch = json::array(), cin = json::array(), cout = json::array(),
       ih = json::array(), iw = json::array(), kh = json::array(), kw = json::array(),
       stride = json::array(), pad = json::array(), gx = json::array(), gy = json::array(),
       gz = json::array(), us = json::array();
  for (const auto& pt : p.conv_points) {
    config.push_back(pt.config);
    batch.push_back(pt.batch);
    cin.push_back(pt.in_channels);
    cout.push_back(pt.out_channels);
    ih.push_back(pt.in_h);
    iw.push_back(pt.in_w);
    kh.push_back(pt.kernel_h);
    kw.push_back(pt.kernel_w);
    stride.push_back(pt.stride);
    pad.push_back(pt.pad);
    gx.push_back(pt.grid.x);
    gy.push_back(pt.grid.y);
    gz.push_back(pt.grid.z);
    us.push_back(pt.us);
  }
  return {{"configs", configs},
          {"points",
           {{"config", config},
            {"batch", batch},
            {"in_channels", cin},
            {"out_channels", cout},
            {"in_h", ih},
            {"in_w", iw},
            {"kernel_h", kh},
            {"kernel_w", kw},
            {"stride", stride},
            {"pad", pad},
            {"grid_x", gx},
            {"grid_y", gy},
            {"grid_z", gz},
            {"us", us}}}};
}

}  // namespace

std::string serialize_profile(const Profile& p) {
  json root;
  root["schema"] = kProfileSchemaName;
  root["version"] = kProfileSchemaVersion;
  root["device"] = p.device;
  root["basis"] = std::string(to_string(p.basis));
  if (p.graph_replay) root["timing"] = "graph_replay";
  if (p.graph_kernel_offset_us > 0) root["graph_kernel_offset_us"] = p.graph_kernel_offset_us;
  json prov = {{"source", p.provenance.source},
               {"tool", p.provenance.tool},
               {"created", p.provenance.created},
               {"notes", p.provenance.notes}};
  prov["environment"] = json::object();
  for (const auto& [k, v] : p.provenance.environment) prov["environment"][k] = v;
  root["provenance"] = prov;
  root["call_overhead"] = json::object();
  for (const auto& [op, c] : p.call_overhead) {
    root["call_overhead"][op] = {{"floor_us", c.floor_us}, {"pre_us", c.pre_us}};
  }
  if (!p.gemm_configs.empty()) {
    json configs = json::array();
    for (const auto& c : p.gemm_configs) configs.push_back(gemm_config_json(c));
    std::vector<std::string> ops;
    json op = json::array(), config = json::array(), batch = json::array(), m = json::array(),
         n = json::array(), k = json::array(), gx = json::array(), gy = json::array(),
         gz = json::array(), us = json::array(), trans_b = json::array();
    for (const auto& pt : p.gemm_points) {
      trans_b.push_back(pt.transposed_weight ? 1 : 0);
      auto it = std::find(ops.begin(), ops.end(), pt.op);
      if (it == ops.end()) it = ops.insert(ops.end(), pt.op);
      op.push_back(it - ops.begin());
      config.push_back(pt.config);
      batch.push_back(pt.batch);
      m.push_back(pt.m);
      n.push_back(pt.n);
      k.push_back(pt.k);
      gx.push_back(pt.grid.x);
      gy.push_back(pt.grid.y);
      gz.push_back(pt.grid.z);
      us.push_back(pt.us);
    }
    root["gemm"] = {{"configs", configs},
                    {"points",
                     {{"ops", ops},
                      {"op", op},
                      {"trans_b", trans_b},
                      {"config", config},
                      {"batch", batch},
                      {"m", m},
                      {"n", n},
                      {"k", k},
                      {"grid_x", gx},
                      {"grid_y", gy},
                      {"grid_z", gz},
                      {"us", us}}}};
  }
  if (!p.vector_fits.empty()) root["vector"] = vector_section_json(p.vector_fits, p.vector_points);
  if (!p.attention_configs.empty()) root["attention"] = attention_section_json(p);
  if (!p.conv_configs.empty()) root["conv"] = conv_section_json(p);
  if (!p.family_fits.empty())
    root["families"] = vector_section_json(p.family_fits, p.family_points);
  if (!p.scaled_gemm_fits.empty()) root["scaled_gemm"] = scaled_gemm_json::section_json(p);
  return root.dump();
}

void save_profile(const Profile& profile, const std::filesystem::path& file) {
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) throw ProfileError(file.string(), "", "cannot be written");
  out << serialize_profile(profile) << '\n';
  if (!out) throw ProfileError(file.string(), "", "write failed");
}

}  // namespace pm2lat
