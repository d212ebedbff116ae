#include "pm2lat/record_jsonl.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace pm2lat {
namespace {

using nlohmann::json;

json dim3_json(const Dim3& d) { return json::array({d.x, d.y, d.z}); }

Dim3 dim3_from(const json& j) {
  Dim3 d;
  if (!j.is_array() || j.size() != 3) throw std::runtime_error("expected [x, y, z]");
  d.x = j[0].get<std::uint32_t>();
  d.y = j[1].get<std::uint32_t>();
  d.z = j[2].get<std::uint32_t>();
  return d;
}

json op_json(const OpContext& op) {
  json o = {{"kind", std::string(to_string(op.kind))}};
  if (!op.source.empty()) o["source"] = op.source;
  if (!op.name.empty()) o["name"] = op.name;
  switch (op.kind) {
    case OpKind::kGemm: {
      const GemmShape& g = op.gemm;
      o.update({{"b", g.batch},
                {"m", g.m},
                {"n", g.n},
                {"k", g.k},
                {"trans_a", g.trans_a},
                {"trans_b", g.trans_b},
                {"dtype", std::string(to_string(g.a))},
                {"compute", std::string(to_string(g.compute))}});
      if (g.scaling != GemmScaling::kNone) o["scaling"] = std::string(to_string(g.scaling));
      if (g.algo_tile_m > 0) o["algo_tile"] = {g.algo_tile_m, g.algo_tile_n};
      if (g.algo_stages > 0) o["algo_stages"] = g.algo_stages;
      if (g.algo_split_k > 0) o["algo_split_k"] = g.algo_split_k;
      break;
    }
    case OpKind::kConv: {
      const ConvShape& c = op.conv;
      o.update({{"n", c.batch},
                {"c", c.in_channels},
                {"h", c.in_h},
                {"w", c.in_w},
                {"k", c.out_channels},
                {"r", c.kernel_h},
                {"s", c.kernel_w},
                {"stride", {c.stride_h, c.stride_w}},
                {"pad", {c.pad_h, c.pad_w}},
                {"dilation", {c.dilation_h, c.dilation_w}},
                {"groups", c.groups},
                {"dtype", std::string(to_string(c.dtype))}});
      break;
    }
    case OpKind::kAttention: {
      const AttentionShape& a = op.attention;
      o.update({{"b", a.batch},
                {"sq", a.seqlen_q},
                {"skv", a.seqlen_kv},
                {"h", a.heads},
                {"hkv", a.kv_heads},
                {"d", a.head_dim},
                {"causal", a.causal},
                {"backward", a.backward},
                {"dtype", std::string(to_string(a.dtype))}});
      if (a.window > 0) o["window"] = a.window;
      if (a.kv_dtype != DType::kUnknown) o["kv_dtype"] = std::string(to_string(a.kv_dtype));
      break;
    }
    case OpKind::kCollective:
      o.update({{"bytes", op.collective.bytes}, {"ranks", op.collective.ranks}});
      break;
    case OpKind::kUnknown:
      if (op.vec.bytes() <= 0) break;
      [[fallthrough]];
    default:
      o.update({{"rows", op.vec.rows},
                {"cols", op.vec.cols},
                {"bytes_read", op.vec.bytes_read},
                {"bytes_written", op.vec.bytes_written},
                {"dtype", std::string(to_string(op.vec.dtype))}});
      break;
  }
  return o;
}

template <typename T>
T get_or(const json& j, const char* key, T fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  return it->get<T>();
}

OpContext op_from(const json& o) {
  OpContext op;
  op.kind = parse_op_kind(get_or<std::string>(o, "kind", "unknown"));
  op.source = get_or<std::string>(o, "source", "");
  op.name = get_or<std::string>(o, "name", "");
  switch (op.kind) {
    case OpKind::kGemm: {
      GemmShape& g = op.gemm;
      g.batch = get_or<std::int64_t>(o, "b", 1);
      g.m = get_or<std::int64_t>(o, "m", 0);
      g.n = get_or<std::int64_t>(o, "n", 0);
      g.k = get_or<std::int64_t>(o, "k", 0);
      g.trans_a = get_or<bool>(o, "trans_a", false);
      g.trans_b = get_or<bool>(o, "trans_b", false);
      g.a = g.b = g.c = parse_dtype(get_or<std::string>(o, "dtype", ""));
      g.compute = parse_dtype(get_or<std::string>(o, "compute", ""));
      g.scaling = parse_gemm_scaling(get_or<std::string>(o, "scaling", "none"));
      if (auto it = o.find("algo_tile"); it != o.end() && it->is_array() && it->size() == 2) {
        g.algo_tile_m = (*it)[0].get<std::int32_t>();
        g.algo_tile_n = (*it)[1].get<std::int32_t>();
      }
      g.algo_stages = get_or<std::int32_t>(o, "algo_stages", 0);
      g.algo_split_k = get_or<std::int32_t>(o, "algo_split_k", 0);
      break;
    }
    case OpKind::kConv: {
      ConvShape& c = op.conv;
      c.batch = get_or<std::int64_t>(o, "n", 0);
      c.in_channels = get_or<std::int64_t>(o, "c", 0);
      c.in_h = get_or<std::int64_t>(o, "h", 0);
      c.in_w = get_or<std::int64_t>(o, "w", 0);
      c.out_channels = get_or<std::int64_t>(o, "k", 0);
      c.kernel_h = get_or<std::int64_t>(o, "r", 0);
      c.kernel_w = get_or<std::int64_t>(o, "s", 0);
      if (auto it = o.find("stride"); it != o.end() && it->is_array() && it->size() == 2) {
        c.stride_h = (*it)[0].get<std::int64_t>();
        c.stride_w = (*it)[1].get<std::int64_t>();
      }
      if (auto it = o.find("pad"); it != o.end() && it->is_array() && it->size() == 2) {
        c.pad_h = (*it)[0].get<std::int64_t>();
        c.pad_w = (*it)[1].get<std::int64_t>();
      }
      if (auto it = o.find("dilation"); it != o.end() && it->is_array() && it->size() == 2) {
        c.dilation_h = (*it)[0].get<std::int64_t>();
        c.dilation_w = (*it)[1].get<std::int64_t>();
      }
      c.groups = get_or<std::int64_t>(o, "groups", 1);
      c.dtype = parse_dtype(get_or<std::string>(o, "dtype", ""));
      break;
    }
    case OpKind::kAttention: {
      AttentionShape& a = op.attention;
      a.batch = get_or<std::int64_t>(o, "b", 0);
      a.seqlen_q = get_or<std::int64_t>(o, "sq", 0);
      a.seqlen_kv = get_or<std::int64_t>(o, "skv", 0);
      a.heads = get_or<std::int64_t>(o, "h", 0);
      a.kv_heads = get_or<std::int64_t>(o, "hkv", 0);
      a.head_dim = get_or<std::int64_t>(o, "d", 0);
      a.causal = get_or<bool>(o, "causal", false);
      a.backward = get_or<bool>(o, "backward", false);
      a.dtype = parse_dtype(get_or<std::string>(o, "dtype", ""));
      a.window = get_or<std::int64_t>(o, "window", 0);
      a.kv_dtype = parse_dtype(get_or<std::string>(o, "kv_dtype", ""));
      break;
    }
    case OpKind::kCollective:
      op.collective.bytes = get_or<double>(o, "bytes", 0);
      op.collective.ranks = get_or<std::int32_t>(o, "ranks", 0);
      break;
    default:
      op.vec.rows = get_or<std::int64_t>(o, "rows", 0);
      op.vec.cols = get_or<std::int64_t>(o, "cols", 0);
      op.vec.bytes_read = get_or<double>(o, "bytes_read", 0);
      op.vec.bytes_written = get_or<double>(o, "bytes_written", 0);
      op.vec.dtype = parse_dtype(get_or<std::string>(o, "dtype", ""));
      break;
  }
  return op;
}

json parse_line(std::string_view line, const std::string& where) {
  try {
    json j = json::parse(line);
    if (!j.is_object()) throw std::runtime_error("expected a JSON object");
    return j;
  } catch (const std::exception& e) {
    throw std::runtime_error(where + ": " + e.what());
  }
}

}  // namespace

const Prediction* PredictedRecord::prediction_for(std::string_view target) const noexcept {
  for (const auto& [name, p] : predictions) {
    if (name == target) return &p;
  }
  return nullptr;
}

std::string header_to_jsonl(const RecordsHeader& h) {
  json j = {{"schema", kRecordSchemaName},
            {"version", kRecordSchemaVersion},
            {"gpu", h.gpu},
            {"targets", h.targets},
            {"pid", h.pid},
            {"rank", h.rank},
            {"host", h.host},
            {"command", h.command}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string record_to_jsonl(const PredictedRecord& pr) {
  const KernelRecord& r = pr.record;
  json j = {{"seq", r.seq},
            {"ts_ns", r.ts_ns},
            {"rank", pr.rank},
            {"device", r.device},
            {"gpu", pr.gpu},
            {"stream", r.stream},
            {"name", r.launch.name},
            {"family", std::string(to_string(pr.family))},
            {"config", pr.config},
            {"grid", dim3_json(r.launch.grid)},
            {"block", dim3_json(r.launch.block)},
            {"cluster", dim3_json(r.launch.cluster)},
            {"smem", r.launch.shared_mem_bytes},
            {"regs", r.launch.registers_per_thread}};
  if (r.graph_id != 0) j["graph"] = {{"id", r.graph_id}, {"node", r.graph_node_id}};
  if (r.op.kind != OpKind::kUnknown || r.op.vec.bytes() > 0) j["op"] = op_json(r.op);
  j["measured_us"] = r.measured_us ? json(*r.measured_us) : json(nullptr);
  j["basis"] = std::string(to_string(r.basis));
  json pred = json::object(), model = json::object(), flags = json::object();
  for (const auto& [target, p] : pr.predictions) {
    pred[target] = p.us;
    model[target] = std::string(to_string(p.model));
    flags[target] = flags_to_string(p.flags);
  }
  j["predicted_us"] = pred;
  j["model"] = model;
  j["flags"] = flags;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

RecordsHeader header_from_jsonl(std::string_view line, const std::string& where) {
  const json j = parse_line(line, where);
  if (get_or<std::string>(j, "schema", "") != kRecordSchemaName)
    throw std::runtime_error(where + ": not a pm2lat records file (no '" + kRecordSchemaName +
                             "' header)");
  if (get_or<int>(j, "version", 0) != kRecordSchemaVersion)
    throw std::runtime_error(where + ": records schema version " +
                             std::to_string(get_or<int>(j, "version", 0)) + ", this build reads " +
                             std::to_string(kRecordSchemaVersion));
  RecordsHeader h;
  try {
    h.gpu = get_or<std::string>(j, "gpu", "");
    h.targets = get_or<std::vector<std::string>>(j, "targets", {});
    h.pid = get_or<std::int64_t>(j, "pid", 0);
    h.rank = get_or<std::int32_t>(j, "rank", 0);
    h.host = get_or<std::string>(j, "host", "");
    h.command = get_or<std::string>(j, "command", "");
  } catch (const std::exception& e) {
    throw std::runtime_error(where + ": " + e.what());
  }
  return h;
}

PredictedRecord record_from_jsonl(std::string_view line, const std::string& where) {
  const json j = parse_line(line, where);
  PredictedRecord pr;
  try {
    KernelRecord& r = pr.record;
    r.seq = get_or<std::uint64_t>(j, "seq", 0);
    r.ts_ns = get_or<std::uint64_t>(j, "ts_ns", 0);
    pr.rank = get_or<std::int32_t>(j, "rank", 0);
    r.device = get_or<std::int32_t>(j, "device", 0);
    pr.gpu = get_or<std::string>(j, "gpu", "");
    r.stream = get_or<std::uint64_t>(j, "stream", 0);
    r.launch.name = get_or<std::string>(j, "name", "");
    pr.family = parse_kernel_family(get_or<std::string>(j, "family", "unknown"));
    pr.config = get_or<std::string>(j, "config", "");
    if (j.contains("grid")) r.launch.grid = dim3_from(j["grid"]);
    if (j.contains("block")) r.launch.block = dim3_from(j["block"]);
    if (j.contains("cluster")) r.launch.cluster = dim3_from(j["cluster"]);
    r.launch.shared_mem_bytes = get_or<std::uint32_t>(j, "smem", 0);
    r.launch.registers_per_thread = get_or<std::uint32_t>(j, "regs", 0);
    if (auto g = j.find("graph"); g != j.end() && g->is_object()) {
      r.graph_id = get_or<std::uint64_t>(*g, "id", 0);
      r.graph_node_id = get_or<std::uint64_t>(*g, "node", 0);
    }
    if (auto o = j.find("op"); o != j.end() && o->is_object()) r.op = op_from(*o);
    if (auto m = j.find("measured_us"); m != j.end() && m->is_number())
      r.measured_us = m->get<double>();
    r.basis =
        get_or<std::string>(j, "basis", "kernel") == "call" ? TimeBasis::kCall : TimeBasis::kKernel;
    if (auto p = j.find("predicted_us"); p != j.end() && p->is_object()) {
      const json models = j.value("model", json::object());
      for (const auto& [target, us] : p->items()) {
        Prediction pred;
        pred.us = us.get<double>();
        pred.basis = TimeBasis::kKernel;
        if (models.is_object() && models.contains(target) && models[target].is_string())
          pred.model = parse_model_kind(models[target].get<std::string>());
        if (auto f = j.find("flags");
            f != j.end() && f->is_object() && f->contains(target) && (*f)[target].is_string())
          pred.flags = parse_flags((*f)[target].get<std::string>());
        pr.predictions.emplace_back(target, pred);
      }
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(where + ": " + e.what());
  }
  return pr;
}

}  // namespace pm2lat
