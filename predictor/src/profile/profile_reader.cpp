// Reading profile JSON. Calibration points are stored column-wise (one array per field) to
// keep shipped profiles small and quick to load.
#include "pm2lat/profile_io.h"

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "pm2lat/error_band_table.h"
#include "profile/json_fields.h"
#include "profile/json_scan.h"
#include "profile/point_tables.h"
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
  c.nominal_launch = r.boolean("nominal_launch", false);
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
  v.rows_max = r.has("rows_max") ? r.child("rows_max").non_negative() : 0.0;
  return v;
}

AttentionConfigFit read_attention_config(const Reader& r) {
  AttentionConfigFit c;
  c.variant = r.child("variant").string();
  if (c.variant.empty()) r.child("variant").fail("must not be empty");
  c.head_dim = static_cast<std::int32_t>(r.child("head_dim").positive_integer());
  const std::string kv = r.string("kv_dtype", "bf16");
  c.kv_dtype = parse_dtype(kv);
  if (c.kv_dtype == DType::kUnknown) r.child("kv_dtype").fail("unknown element type '" + kv + "'");
  c.local = r.boolean("local", false);
  c.tile_m = static_cast<std::int32_t>(r.child("tile_m").positive_integer());
  c.tile_n = static_cast<std::int32_t>(r.child("tile_n").positive_integer());
  c.ctas_per_sm = static_cast<std::int32_t>(r.child("ctas_per_sm").integer());
  if (c.ctas_per_sm < 1 || c.ctas_per_sm > 32) r.child("ctas_per_sm").fail("out of range 1..32");
  c.gqa_packing = static_cast<std::int32_t>(r.integer("gqa_packing", 0));
  if (c.gqa_packing < 0 || c.gqa_packing > 2) r.child("gqa_packing").fail("must be 0, 1 or 2");
  c.c0 = r.child("c0").number();
  c.c_iter = r.child("c_iter").non_negative();
  c.c_cta = r.child("c_cta").non_negative();
  c.c_qo = r.child("c_qo").non_negative();
  c.c_kv = r.child("c_kv").non_negative();
  c.calls_write_kv_cache = r.boolean("calls_write_kv_cache", false);
  c.points = static_cast<std::int32_t>(r.integer("points", 0));
  c.fit_mape_pct = r.number("fit_mape_pct", 0);
  return c;
}

// The profile in `root_json`, with the point tables it holds (none, when parsed without).
Profile read_profile(const json& root_json, const std::string& file) {
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
    if (g.has("points")) point_tables::read(g, PointTable::kGemm, p);
  }
  if (root.has("vector")) {
    const Reader v = root.child("vector");
    const Reader fits = v.child("fits");
    for (std::size_t i = 0; i < fits.size(); ++i)
      p.vector_fits.push_back(read_vector_fit(fits.at(i)));
    if (v.has("points")) point_tables::read(v, PointTable::kVector, p);
  }
  if (root.has("attention")) {
    const Reader a = root.child("attention");
    const Reader configs = a.child("configs");
    for (std::size_t i = 0; i < configs.size(); ++i)
      p.attention_configs.push_back(read_attention_config(configs.at(i)));
    if (a.has("points")) point_tables::read(a, PointTable::kAttention, p);
  }
  if (root.has("conv")) {
    const Reader c = root.child("conv");
    const Reader configs = c.child("configs");
    for (std::size_t i = 0; i < configs.size(); ++i)
      p.conv_configs.push_back(read_gemm_config(configs.at(i)));
    if (c.has("points")) point_tables::read(c, PointTable::kConv, p);
  }
  if (root.has("scaled_gemm")) scaled_gemm_json::read_section(root.child("scaled_gemm"), p);
  if (root.has("families")) {
    const Reader f = root.child("families");
    const Reader fits = f.child("fits");
    for (std::size_t i = 0; i < fits.size(); ++i)
      p.family_fits.push_back(read_vector_fit(fits.at(i)));
    if (f.has("points")) point_tables::read(f, PointTable::kFamily, p);
  }
  return p;
}

constexpr PointTable kPointTables[] = {PointTable::kGemm,       PointTable::kVector,
                                       PointTable::kAttention,  PointTable::kConv,
                                       PointTable::kScaledGemm, PointTable::kFamily};

// The point table a top-level section holds, if any.
std::optional<PointTable> table_in_section(const std::string& section) {
  for (PointTable t : kPointTables) {
    if (section == point_tables::section_of(t)) return t;
  }
  return std::nullopt;
}

// JSON text parsed without what `keep` declines: `keep(section, points)` is asked for each
// top-level key (points false) and for the "points" key inside each (points true). Declined
// values are read past without being stored.
template <typename Keep>
json parse_keeping(const std::string& text, const std::string& file, Keep&& keep) {
  std::string section;  // the top-level key being read
  return json_fields::parse_text(text, file,
                                 [&](int depth, json::parse_event_t event, json& parsed) {
                                   if (event != json::parse_event_t::key) return true;
                                   if (depth == 1) {
                                     section = parsed.get<std::string>();
                                     return keep(section, false);
                                   }
                                   return depth != 2 || parsed != "points" || keep(section, true);
                                 });
}

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ProfileError(file.string(), "", "cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

std::vector<std::filesystem::path> profile_files(const std::filesystem::path& dir) {
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
  return files;
}

}  // namespace

Profile parse_profile(const std::string& text, const std::string& file) {
  return read_profile(json_fields::parse_text(text, file), file);
}

Profile parse_profile_without_points(const std::string& text, const std::string& file) {
  // The point tables are cut from the text before it is parsed; text the cut leaves
  // unparsable is parsed whole, declining the tables as they are read, for its error.
  std::vector<json_scan::Member> tables_text;
  std::uint8_t tables = 0;
  for (const json_scan::Member& section : json_scan::top_level_members(text)) {
    const std::optional<PointTable> t = table_in_section(std::string(section.key));
    if (!t) continue;
    for (const json_scan::Member& m : json_scan::object_members(text, section.value_begin)) {
      if (m.key != "points") continue;
      tables_text.push_back(m);
      tables |= point_table_bit(*t);
    }
  }
  json root;
  try {
    root = json_fields::parse_text(json_scan::without_members(text, tables_text), file);
  } catch (const ProfileError&) {
    tables = 0;
    root = parse_keeping(text, file, [&](const std::string& section, bool points) {
      if (!points) return true;
      const std::optional<PointTable> t = table_in_section(section);
      if (!t) return true;
      tables |= point_table_bit(*t);
      return false;
    });
  }
  Profile p = read_profile(root, file);
  p.points_in_file = tables;
  return p;
}

Profile load_profile(const std::filesystem::path& file) {
  return parse_profile(read_text(file), file.string());
}

Profile load_profile_without_points(const std::filesystem::path& file) {
  return parse_profile_without_points(read_text(file), file.string());
}

void load_points(Profile& p, PointTable table) {
  if ((p.points_in_file & point_table_bit(table)) == 0) return;
  const std::string text = read_text(p.file);
  const char* section = point_tables::section_of(table);
  // Only the section's text is parsed (the last one, as a whole parse keeps the last of a
  // repeated key); if it does not parse, the whole text is, for its error.
  std::optional<json> section_json;
  for (const json_scan::Member& m : json_scan::top_level_members(text)) {
    if (m.key != section) continue;
    try {
      section_json = json_fields::parse_text(
          std::string_view(text).substr(m.value_begin, m.value_end - m.value_begin), p.file);
    } catch (const ProfileError&) {
      section_json.reset();
    }
  }
  if (!section_json) {
    json root = parse_keeping(text, p.file, [&](const std::string& key, bool points) {
      return points || key == section;
    });
    (void)Reader(root, p.file, "").child(section);  // "missing" when it is not there
    section_json = std::move(root[section]);
  }
  point_tables::read(Reader(*section_json, p.file, section), table, p);
  p.points_in_file &= static_cast<std::uint8_t>(~point_table_bit(table));
}

namespace {

// Every profile file of `dir`, in profile_files' order, each read by `load`.
std::vector<Profile> load_each(const std::filesystem::path& dir,
                               Profile (*load)(const std::filesystem::path&)) {
  const std::vector<std::filesystem::path> files = profile_files(dir);
  std::vector<Profile> out;
  out.reserve(files.size());
  for (const auto& f : files) out.push_back(load(f));
  return out;
}

}  // namespace

std::vector<Profile> load_profiles(const std::filesystem::path& dir) {
  return load_each(dir, &load_profile);
}

std::vector<Profile> load_profiles_without_points(const std::filesystem::path& dir) {
  return load_each(dir, &load_profile_without_points);
}

}  // namespace pm2lat
