// Reading profile JSON. Calibration points are stored column-wise (one array per field) to
// keep shipped profiles small and quick to load.
#include "pm2lat/profile_io.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "pm2lat/error_band_table.h"
#include "profile/json_fields.h"
#include "profile/scaled_gemm_json.h"

namespace pm2lat {
namespace {

using json_fields::json;
using json_fields::read_column;
using json_fields::Reader;

Provenance read_provenance(const Reader& r) {
  Provenance p;
  p.source = r.string("source", "");
  p.tool = r.string("tool", "");
  p.created = r.string("created", "");
  p.notes = r.string("notes", "");
  if (r.has("environment")) {
    const Reader env = r.child("environment");
    if (!env.value().is_object()) env.fail("expected an object");
    for (const auto& [k, v] : env.value().items()) {
      if (!v.is_string()) env.child(k.c_str()).fail("expected a string");
      p.environment[k] = v.get<std::string>();
    }
  }
  return p;
}

GemmConfigFit read_gemm_config(const Reader& r) {
  GemmConfigFit c;
  c.config = r.child("config").string();
  if (c.config.empty()) r.child("config").fail("must not be empty");
  const std::string dtype = r.string("dtype", "fp32");
  c.dtype = parse_dtype(dtype);
  if (c.dtype == DType::kUnknown) r.child("dtype").fail("unknown element type '" + dtype + "'");
  c.blocks_per_sm = static_cast<std::int32_t>(r.child("blocks_per_sm").integer());
  if (c.blocks_per_sm < 1 || c.blocks_per_sm > 64)
    r.child("blocks_per_sm").fail("out of range 1..64");
  c.tile_m = static_cast<std::int32_t>(r.integer("tile_m", 0));
  c.tile_n = static_cast<std::int32_t>(r.integer("tile_n", 0));
  c.tile_k = static_cast<std::int32_t>(r.child("tile_k").integer());
  if (c.tile_k < 1) r.child("tile_k").fail("must be positive");
  c.tile_m_on_n = r.boolean("tile_m_on_n", false);
  c.c0 = r.child("c0").number();
  c.c_wave_k = r.child("c_wave_k").non_negative();
  c.c_block_k = r.child("c_block_k").non_negative();
  c.c_wave = r.child("c_wave").non_negative();
  c.c_mem = r.child("c_mem").non_negative();
  c.points = static_cast<std::int32_t>(r.integer("points", 0));
  c.fit_mape_pct = r.number("fit_mape_pct", 0);
  return c;
}

VectorFit read_vector_fit(const Reader& r) {
  VectorFit v;
  v.op = r.child("op").string();
  v.config = r.string("config", "");
  v.c0 = r.child("c0").number();
  v.c_byte = r.child("c_byte").non_negative();
  v.c_row = r.child("c_row").non_negative();
  v.points = static_cast<std::int32_t>(r.integer("points", 0));
  v.fit_mape_pct = r.number("fit_mape_pct", 0);
  v.bytes_min = r.has("bytes_min") ? r.child("bytes_min").non_negative() : 0.0;
  v.bytes_max = r.has("bytes_max") ? r.child("bytes_max").non_negative() : 0.0;
  return v;
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
  auto positive = [](const Reader& v) {
    const auto x = v.integer();
    if (x <= 0) v.fail("must be positive");
    return x;
  };
  read_column(r, "batch", n, [&](std::size_t i, const Reader& v) { pts[i].batch = positive(v); });
  read_column(r, "m", n, [&](std::size_t i, const Reader& v) { pts[i].m = positive(v); });
  read_column(r, "n", n, [&](std::size_t i, const Reader& v) { pts[i].n = positive(v); });
  read_column(r, "k", n, [&](std::size_t i, const Reader& v) { pts[i].k = positive(v); });
  read_column(r, "grid_x", n, [&](std::size_t i, const Reader& v) {
    pts[i].grid.x = static_cast<std::uint32_t>(positive(v));
  });
  read_column(r, "grid_y", n, [&](std::size_t i, const Reader& v) {
    pts[i].grid.y = static_cast<std::uint32_t>(positive(v));
  });
  read_column(r, "grid_z", n, [&](std::size_t i, const Reader& v) {
    pts[i].grid.z = static_cast<std::uint32_t>(positive(v));
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

std::int64_t positive_integer(const Reader& v) {
  const auto x = v.integer();
  if (x <= 0) v.fail("must be positive");
  return x;
}

std::int32_t config_index(const Reader& v, std::size_t n_configs) {
  const auto idx = v.integer();
  if (idx < 0 || static_cast<std::size_t>(idx) >= n_configs) v.fail("config index out of range");
  return static_cast<std::int32_t>(idx);
}

AttentionConfigFit read_attention_config(const Reader& r) {
  AttentionConfigFit c;
  c.variant = r.child("variant").string();
  if (c.variant.empty()) r.child("variant").fail("must not be empty");
  c.head_dim = static_cast<std::int32_t>(positive_integer(r.child("head_dim")));
  const std::string kv = r.string("kv_dtype", "bf16");
  c.kv_dtype = parse_dtype(kv);
  if (c.kv_dtype == DType::kUnknown) r.child("kv_dtype").fail("unknown element type '" + kv + "'");
  c.local = r.boolean("local", false);
  c.tile_m = static_cast<std::int32_t>(positive_integer(r.child("tile_m")));
  c.tile_n = static_cast<std::int32_t>(positive_integer(r.child("tile_n")));
  c.ctas_per_sm = static_cast<std::int32_t>(r.child("ctas_per_sm").integer());
  if (c.ctas_per_sm < 1 || c.ctas_per_sm > 32) r.child("ctas_per_sm").fail("out of range 1..32");
  c.gqa_packing = static_cast<std::int32_t>(r.integer("gqa_packing", 0));
  if (c.gqa_packing < 0 || c.gqa_packing > 2) r.child("gqa_packing").fail("must be 0, 1 or 2");
  c.c0 = r.child("c0").number();
  c.c_iter = r.child("c_iter").non_negative();
  c.c_cta = r.child("c_cta").non_negative();
  c.c_qo = r.child("c_qo").non_negative();
  c.c_kv = r.child("c_kv").non_negative();
  c.points = static_cast<std::int32_t>(r.integer("points", 0));
  c.fit_mape_pct = r.number("fit_mape_pct", 0);
  return c;
}

std::vector<AttentionPoint> read_attention_points(const Reader& r, std::size_t n_configs) {
  const std::size_t n = r.child("us").size();
  std::vector<AttentionPoint> pts(n);
  read_column(r, "config", n,
              [&](std::size_t i, const Reader& v) { pts[i].config = config_index(v, n_configs); });
  read_column(r, "batch", n,
              [&](std::size_t i, const Reader& v) { pts[i].batch = positive_integer(v); });
  read_column(r, "seqlen_q", n,
              [&](std::size_t i, const Reader& v) { pts[i].seqlen_q = positive_integer(v); });
  read_column(r, "seqlen_kv", n,
              [&](std::size_t i, const Reader& v) { pts[i].seqlen_kv = positive_integer(v); });
  read_column(r, "heads", n,
              [&](std::size_t i, const Reader& v) { pts[i].heads = positive_integer(v); });
  read_column(r, "kv_heads", n,
              [&](std::size_t i, const Reader& v) { pts[i].kv_heads = positive_integer(v); });
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
              [&](std::size_t i, const Reader& v) { pts[i].batch = positive_integer(v); });
  read_column(r, "in_channels", n,
              [&](std::size_t i, const Reader& v) { pts[i].in_channels = positive_integer(v); });
  read_column(r, "out_channels", n,
              [&](std::size_t i, const Reader& v) { pts[i].out_channels = positive_integer(v); });
  read_column(r, "in_h", n,
              [&](std::size_t i, const Reader& v) { pts[i].in_h = positive_integer(v); });
  read_column(r, "in_w", n,
              [&](std::size_t i, const Reader& v) { pts[i].in_w = positive_integer(v); });
  read_column(r, "kernel_h", n,
              [&](std::size_t i, const Reader& v) { pts[i].kernel_h = positive_integer(v); });
  read_column(r, "kernel_w", n,
              [&](std::size_t i, const Reader& v) { pts[i].kernel_w = positive_integer(v); });
  read_column(r, "stride", n,
              [&](std::size_t i, const Reader& v) { pts[i].stride = positive_integer(v); });
  read_column(r, "pad", n, [&](std::size_t i, const Reader& v) {
    pts[i].pad = v.integer();
    if (pts[i].pad < 0) v.fail("must not be negative");
  });
  read_column(r, "grid_x", n, [&](std::size_t i, const Reader& v) {
    pts[i].grid.x = static_cast<std::uint32_t>(positive_integer(v));
  });
  read_column(r, "grid_y", n, [&](std::size_t i, const Reader& v) {
    pts[i].grid.y = static_cast<std::uint32_t>(positive_integer(v));
  });
  read_column(r, "grid_z", n, [&](std::size_t i, const Reader& v) {
    pts[i].grid.z = static_cast<std::uint32_t>(positive_integer(v));
  });
  read_column(r, "us", n, [&](std::size_t i, const Reader& v) {
    pts[i].us = v.number();
    if (pts[i].us <= 0) v.fail("latency must be positive");
  });
  return pts;
}

}  // namespace

Profile parse_profile(const std::string& text, const std::string& file) {
  const json root_json = json_fields::parse_text(text, file);
  const Reader root(root_json, file, "");
  json_fields::check_schema(root, kProfileSchemaName, kProfileSchemaVersion);
  Profile p;
  p.file = file;
  p.device = root.child("device").string();
  if (p.device.empty()) root.child("device").fail("must not be empty");
  const std::string basis = root.child("basis").string();
  if (basis == "kernel")
    p.basis = TimeBasis::kKernel;
  else if (basis == "call")
    p.basis = TimeBasis::kCall;
  else
    root.child("basis").fail("must be 'kernel' or 'call', not '" + basis + "'");
  if (root.has("timing")) {
    const std::string timing = root.child("timing").string();
    if (timing == "graph_replay")
      p.graph_replay = true;
    else if (timing != "isolated")
      root.child("timing").fail("must be 'isolated' or 'graph_replay', not '" + timing + "'");
  }
  if (root.has("graph_kernel_offset_us"))
    p.graph_kernel_offset_us = root.child("graph_kernel_offset_us").non_negative();
  if (root.has("provenance")) p.provenance = read_provenance(root.child("provenance"));

  if (root.has("call_overhead")) {
    const Reader co = root.child("call_overhead");
    if (!co.value().is_object()) co.fail("expected an object");
    for (const auto& [op, v] : co.value().items()) {
      (void)v;
      const Reader e = co.child(op.c_str());
      p.call_overhead[op] =
          CallOverhead{e.child("floor_us").non_negative(), e.child("pre_us").non_negative()};
    }
  }
  if (root.has("gemm")) {
    const Reader g = root.child("gemm");
    const Reader configs = g.child("configs");
    for (std::size_t i = 0; i < configs.size(); ++i)
      p.gemm_configs.push_back(read_gemm_config(configs.at(i)));
    if (g.has("points")) p.gemm_points = read_gemm_points(g.child("points"), p.gemm_configs.size());
  }
  if (root.has("vector")) {
    const Reader v = root.child("vector");
    const Reader fits = v.child("fits");
    for (std::size_t i = 0; i < fits.size(); ++i)
      p.vector_fits.push_back(read_vector_fit(fits.at(i)));
    if (v.has("points"))
      p.vector_points = read_vector_points(v.child("points"), p.vector_fits.size());
  }
  if (root.has("attention")) {
    const Reader a = root.child("attention");
    const Reader configs = a.child("configs");
    for (std::size_t i = 0; i < configs.size(); ++i)
      p.attention_configs.push_back(read_attention_config(configs.at(i)));
    if (a.has("points"))
      p.attention_points = read_attention_points(a.child("points"), p.attention_configs.size());
  }
  if (root.has("conv")) {
    const Reader c = root.child("conv");
    const Reader configs = c.child("configs");
    for (std::size_t i = 0; i < configs.size(); ++i)
      p.conv_configs.push_back(read_gemm_config(configs.at(i)));
    if (c.has("points")) p.conv_points = read_conv_points(c.child("points"), p.conv_configs.size());
  }
  if (root.has("scaled_gemm")) scaled_gemm_json::read_section(root.child("scaled_gemm"), p);
  if (root.has("families")) {
    const Reader f = root.child("families");
    const Reader fits = f.child("fits");
    for (std::size_t i = 0; i < fits.size(); ++i)
      p.family_fits.push_back(read_vector_fit(fits.at(i)));
    if (f.has("points"))
      p.family_points = read_vector_points(f.child("points"), p.family_fits.size());
  }
  return p;
}

Profile load_profile(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ProfileError(file.string(), "", "cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_profile(text.str(), file.string());
}

std::vector<Profile> load_profiles(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    // The catalogue and the error-band table live beside the profiles but are not profiles.
    if (e.path().extension() == ".json" && e.path().filename() != "devices.json" &&
        e.path().filename() != kErrorBandsFile) {
      files.push_back(e.path());
    }
  }
  if (ec) throw ProfileError(dir.string(), "", "cannot list profile directory: " + ec.message());
  std::sort(files.begin(), files.end());
  std::vector<Profile> out;
  out.reserve(files.size());
  for (const auto& f : files) out.push_back(load_profile(f));
  return out;
}
}  // namespace pm2lat
