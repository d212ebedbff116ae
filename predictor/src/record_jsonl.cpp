#include "pm2lat/record_jsonl.h"

#include "pm2lat/record_fields.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace pm2lat {
namespace {

using nlohmann::json;
using namespace record_field;

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
  json o = {{op::kKind, std::string(to_string(op.kind))}};
  if (!op.source.empty()) o[op::kSource] = op.source;
  if (!op.name.empty()) o[op::kName] = op.name;
  switch (op.kind) {
    case OpKind::kGemm: {
      const GemmShape& g = op.gemm;
      o.update({{op::kBatch, g.batch},
                {op::kM, g.m},
                {op::kN, g.n},
                {op::kK, g.k},
                {op::kTransA, g.trans_a},
                {op::kTransB, g.trans_b},
                {op::kDtype, std::string(to_string(g.a))},
                {op::kCompute, std::string(to_string(g.compute))}});
      if (g.scaling != GemmScaling::kNone) o[op::kScaling] = std::string(to_string(g.scaling));
      if (g.algo_tile_m > 0) o[op::kAlgoTile] = {g.algo_tile_m, g.algo_tile_n};
      if (g.algo_stages > 0) o[op::kAlgoStages] = g.algo_stages;
      if (g.algo_split_k > 0) o[op::kAlgoSplitK] = g.algo_split_k;
      break;
    }
    case OpKind::kConv: {
      const ConvShape& c = op.conv;
      o.update({{op::kConvN, c.batch},
                {op::kConvC, c.in_channels},
                {op::kConvH, c.in_h},
                {op::kConvW, c.in_w},
                {op::kK, c.out_channels},
                {op::kConvR, c.kernel_h},
                {op::kConvS, c.kernel_w},
                {op::kStride, {c.stride_h, c.stride_w}},
                {op::kPad, {c.pad_h, c.pad_w}},
                {op::kDilation, {c.dilation_h, c.dilation_w}},
                {op::kGroups, c.groups},
                {op::kDtype, std::string(to_string(c.dtype))}});
      break;
    }
    case OpKind::kAttention: {
      const AttentionShape& a = op.attention;
      o.update({{op::kBatch, a.batch},
                {op::kSeqQ, a.seqlen_q},
                {op::kSeqKv, a.seqlen_kv},
                {op::kHeads, a.heads},
                {op::kKvHeads, a.kv_heads},
                {op::kHeadDim, a.head_dim},
                {op::kCausal, a.causal},
                {op::kBackward, a.backward},
                {op::kDtype, std::string(to_string(a.dtype))}});
      if (a.window > 0) o[op::kWindow] = a.window;
      if (a.kv_dtype != DType::kUnknown) o[op::kKvDtype] = std::string(to_string(a.kv_dtype));
      break;
    }
    case OpKind::kCollective:
      o.update({{op::kBytes, op.collective.bytes}, {op::kRanks, op.collective.ranks}});
      break;
    case OpKind::kUnknown:
      if (op.vec.bytes() <= 0) break;
      [[fallthrough]];
    default:
      o.update({{op::kRows, op.vec.rows},
                {op::kCols, op.vec.cols},
                {op::kBytesRead, op.vec.bytes_read},
                {op::kBytesWritten, op.vec.bytes_written},
                {op::kDtype, std::string(to_string(op.vec.dtype))}});
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
  op.kind = parse_op_kind(get_or<std::string>(o, op::kKind, "unknown"));
  op.source = get_or<std::string>(o, op::kSource, "");
  op.name = get_or<std::string>(o, op::kName, "");
  switch (op.kind) {
    case OpKind::kGemm: {
      GemmShape& g = op.gemm;
      g.batch = get_or<std::int64_t>(o, op::kBatch, 1);
      g.m = get_or<std::int64_t>(o, op::kM, 0);
      g.n = get_or<std::int64_t>(o, op::kN, 0);
      g.k = get_or<std::int64_t>(o, op::kK, 0);
      g.trans_a = get_or<bool>(o, op::kTransA, false);
      g.trans_b = get_or<bool>(o, op::kTransB, false);
      g.a = g.b = g.c = parse_dtype(get_or<std::string>(o, op::kDtype, ""));
      g.compute = parse_dtype(get_or<std::string>(o, op::kCompute, ""));
      g.scaling = parse_gemm_scaling(get_or<std::string>(o, op::kScaling, "none"));
      if (auto it = o.find(op::kAlgoTile); it != o.end() && it->is_array() && it->size() == 2) {
        g.algo_tile_m = (*it)[0].get<std::int32_t>();
        g.algo_tile_n = (*it)[1].get<std::int32_t>();
      }
      g.algo_stages = get_or<std::int32_t>(o, op::kAlgoStages, 0);
      g.algo_split_k = get_or<std::int32_t>(o, op::kAlgoSplitK, 0);
      break;
    }
    case OpKind::kConv: {
      ConvShape& c = op.conv;
      c.batch = get_or<std::int64_t>(o, op::kConvN, 0);
      c.in_channels = get_or<std::int64_t>(o, op::kConvC, 0);
      c.in_h = get_or<std::int64_t>(o, op::kConvH, 0);
      c.in_w = get_or<std::int64_t>(o, op::kConvW, 0);
      c.out_channels = get_or<std::int64_t>(o, op::kK, 0);
      c.kernel_h = get_or<std::int64_t>(o, op::kConvR, 0);
      c.kernel_w = get_or<std::int64_t>(o, op::kConvS, 0);
      if (auto it = o.find(op::kStride); it != o.end() && it->is_array() && it->size() == 2) {
        c.stride_h = (*it)[0].get<std::int64_t>();
        c.stride_w = (*it)[1].get<std::int64_t>();
      }
      if (auto it = o.find(op::kPad); it != o.end() && it->is_array() && it->size() == 2) {
        c.pad_h = (*it)[0].get<std::int64_t>();
        c.pad_w = (*it)[1].get<std::int64_t>();
      }
      if (auto it = o.find(op::kDilation); it != o.end() && it->is_array() && it->size() == 2) {
        c.dilation_h = (*it)[0].get<std::int64_t>();
        c.dilation_w = (*it)[1].get<std::int64_t>();
      }
      c.groups = get_or<std::int64_t>(o, op::kGroups, 1);
      c.dtype = parse_dtype(get_or<std::string>(o, op::kDtype, ""));
      break;
    }
    case OpKind::kAttention: {
      AttentionShape& a = op.attention;
      a.batch = get_or<std::int64_t>(o, op::kBatch, 0);
      a.seqlen_q = get_or<std::int64_t>(o, op::kSeqQ, 0);
      a.seqlen_kv = get_or<std::int64_t>(o, op::kSeqKv, 0);
      a.heads = get_or<std::int64_t>(o, op::kHeads, 0);
      a.kv_heads = get_or<std::int64_t>(o, op::kKvHeads, 0);
      a.head_dim = get_or<std::int64_t>(o, op::kHeadDim, 0);
      a.causal = get_or<bool>(o, op::kCausal, false);
      a.backward = get_or<bool>(o, op::kBackward, false);
      a.dtype = parse_dtype(get_or<std::string>(o, op::kDtype, ""));
      a.window = get_or<std::int64_t>(o, op::kWindow, 0);
      a.kv_dtype = parse_dtype(get_or<std::string>(o, op::kKvDtype, ""));
      break;
    }
    case OpKind::kCollective:
      op.collective.bytes = get_or<double>(o, op::kBytes, 0);
      op.collective.ranks = get_or<std::int32_t>(o, op::kRanks, 0);
      break;
    default:
      op.vec.rows = get_or<std::int64_t>(o, op::kRows, 0);
      op.vec.cols = get_or<std::int64_t>(o, op::kCols, 0);
      op.vec.bytes_read = get_or<double>(o, op::kBytesRead, 0);
      op.vec.bytes_written = get_or<double>(o, op::kBytesWritten, 0);
      op.vec.dtype = parse_dtype(get_or<std::string>(o, op::kDtype, ""));
      break;
  }
  return op;
}

json runtime_json(const RecordRuntime& rt) {
  json o = json::object();
  if (!rt.api.empty()) o[runtime::kApi] = rt.api;
  if (!rt.via.empty()) o[runtime::kVia] = rt.via;
  if (rt.correlation != 0) o[runtime::kCorrelation] = rt.correlation;
  if (rt.call != 0) o[runtime::kCall] = rt.call;
  if (!rt.args.empty()) o[runtime::kArgs] = rt.args;
  o[runtime::kNotes] = rt.notes;
  return o;
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

std::string header_to_jsonl(const RecordsHeader& h, const RuntimeHeader* runtime_info) {
  json j = {{kSchema, kRecordSchemaName},
            {kVersion, kRecordSchemaVersion},
            {kGpu, h.gpu},
            {kTargets, h.targets},
            {kPid, h.pid},
            {kRank, h.rank},
            {kHost, h.host},
            {kCommand, h.command}};
  if (runtime_info != nullptr) {
    j[runtime::kObject] = {{runtime::kMode, runtime_info->mode},
                           {runtime::kVersion, runtime_info->version}};
  }
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string record_to_jsonl(const PredictedRecord& pr, const RecordRuntime* runtime_info) {
  const KernelRecord& r = pr.record;
  json j = {{kSeq, r.seq},
            {kTsNs, r.ts_ns},
            {kRank, pr.rank},
            {kDevice, r.device},
            {kGpu, pr.gpu},
            {kStream, r.stream},
            {kName, r.launch.name},
            {kFamily, std::string(to_string(pr.family))},
            {kConfig, pr.config},
            {kGrid, dim3_json(r.launch.grid)},
            {kBlock, dim3_json(r.launch.block)},
            {kCluster, dim3_json(r.launch.cluster)},
            {kSmem, r.launch.shared_mem_bytes},
            {kRegs, r.launch.registers_per_thread}};
  if (r.graph_id != 0) j[kGraph] = {{kGraphId, r.graph_id}, {kGraphNode, r.graph_node_id}};
  if (r.op.kind != OpKind::kUnknown || r.op.vec.bytes() > 0) j[kOp] = op_json(r.op);
  j[kMeasuredUs] = r.measured_us ? json(*r.measured_us) : json(nullptr);
  j[kBasis] = std::string(to_string(r.basis));
  json pred = json::object(), model = json::object(), flags = json::object(), band = json::object();
  for (const auto& [target, p] : pr.predictions) {
    pred[target] = p.us;
    model[target] = std::string(to_string(p.model));
    flags[target] = flags_to_string(p.flags);
    if (!std::isnan(p.band_pct)) band[target] = p.band_pct;
  }
  j[kPredictedUs] = pred;
  j[kModel] = model;
  j[kFlags] = flags;
  // Absent when the predictor had no band table (older profiles): no band, not a zero one.
  if (!band.empty()) j[kBandPct] = band;
  if (runtime_info != nullptr) j[runtime::kObject] = runtime_json(*runtime_info);
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

RecordsHeader header_from_jsonl(std::string_view line, const std::string& where) {
  const json j = parse_line(line, where);
  if (get_or<std::string>(j, kSchema, "") != kRecordSchemaName)
    throw std::runtime_error(where + ": not a pm2lat records file (no '" + kRecordSchemaName +
                             "' header)");
  if (get_or<int>(j, kVersion, 0) != kRecordSchemaVersion)
    throw std::runtime_error(where + ": records schema version " +
                             std::to_string(get_or<int>(j, kVersion, 0)) + ", this build reads " +
                             std::to_string(kRecordSchemaVersion));
  RecordsHeader h;
  try {
    h.gpu = get_or<std::string>(j, kGpu, "");
    h.targets = get_or<std::vector<std::string>>(j, kTargets, {});
    h.pid = get_or<std::int64_t>(j, kPid, 0);
    h.rank = get_or<std::int32_t>(j, kRank, 0);
    h.host = get_or<std::string>(j, kHost, "");
    h.command = get_or<std::string>(j, kCommand, "");
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
    r.seq = get_or<std::uint64_t>(j, kSeq, 0);
    r.ts_ns = get_or<std::uint64_t>(j, kTsNs, 0);
    pr.rank = get_or<std::int32_t>(j, kRank, 0);
    r.device = get_or<std::int32_t>(j, kDevice, 0);
    pr.gpu = get_or<std::string>(j, kGpu, "");
    r.stream = get_or<std::uint64_t>(j, kStream, 0);
    r.launch.name = get_or<std::string>(j, kName, "");
    pr.family = parse_kernel_family(get_or<std::string>(j, kFamily, "unknown"));
    pr.config = get_or<std::string>(j, kConfig, "");
    if (j.contains(kGrid)) r.launch.grid = dim3_from(j[kGrid]);
    if (j.contains(kBlock)) r.launch.block = dim3_from(j[kBlock]);
    if (j.contains(kCluster)) r.launch.cluster = dim3_from(j[kCluster]);
    r.launch.shared_mem_bytes = get_or<std::uint32_t>(j, kSmem, 0);
    r.launch.registers_per_thread = get_or<std::uint32_t>(j, kRegs, 0);
    if (auto g = j.find(kGraph); g != j.end() && g->is_object()) {
      r.graph_id = get_or<std::uint64_t>(*g, kGraphId, 0);
      r.graph_node_id = get_or<std::uint64_t>(*g, kGraphNode, 0);
    }
    if (auto o = j.find(kOp); o != j.end() && o->is_object()) r.op = op_from(*o);
    if (auto m = j.find(kMeasuredUs); m != j.end() && m->is_number())
      r.measured_us = m->get<double>();
    r.basis =
        get_or<std::string>(j, kBasis, "kernel") == "call" ? TimeBasis::kCall : TimeBasis::kKernel;
    if (auto p = j.find(kPredictedUs); p != j.end() && p->is_object()) {
      const json models = j.value(kModel, json::object());
      for (const auto& [target, us] : p->items()) {
        Prediction pred;
        pred.us = us.get<double>();
        pred.basis = TimeBasis::kKernel;
        if (models.is_object() && models.contains(target) && models[target].is_string())
          pred.model = parse_model_kind(models[target].get<std::string>());
        if (auto f = j.find(kFlags);
            f != j.end() && f->is_object() && f->contains(target) && (*f)[target].is_string())
          pred.flags = parse_flags((*f)[target].get<std::string>());
        if (auto b = j.find(kBandPct);
            b != j.end() && b->is_object() && b->contains(target) && (*b)[target].is_number())
          pred.band_pct = (*b)[target].get<double>();
        pr.predictions.emplace_back(target, pred);
      }
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(where + ": " + e.what());
  }
  return pr;
}

}  // namespace pm2lat
