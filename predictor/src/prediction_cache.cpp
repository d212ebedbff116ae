#include "pm2lat/prediction_cache.h"

#include <cstdint>
#include <type_traits>

namespace pm2lat {
namespace {

template <typename T>
void put(std::string& key, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  key.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

void put_string(std::string& key, std::string_view s) {
  put(key, s.size());
  key.append(s);
}

}  // namespace

void PredictionCache::key_of(const KernelRecord& r, const KernelClass& cls, const PredictOptions& o,
                             std::string& key) {
  key.clear();
  put_string(key, r.launch.name);
  put(key, cls.family);
  put_string(key, cls.config);
  put(key, o.basis);
  put(key, reinterpret_cast<std::uintptr_t>(o.source_spec));  // the spec's identity
  put_string(key, o.source_device);
  put(key, o.graph_replay);
  const KernelLaunch& l = r.launch;
  put(key, l.grid);
  put(key, l.block);
  put(key, l.cluster);
  put(key, l.shared_mem_bytes);
  put(key, l.registers_per_thread);
  put(key, l.int_args.size());
  for (std::int64_t v : l.int_args) put(key, v);
  const OpContext& op = r.op;
  put(key, op.kind);
  put_string(key, op.name);
  put_string(key, op.source);
  // Field by field: padding bytes inside the structs are not part of the key.
  const GemmShape& g = op.gemm;
  for (std::int64_t v : {g.batch, g.m, g.n, g.k}) put(key, v);
  for (bool v : {g.trans_a, g.trans_b, g.has_bias}) put(key, v);
  for (DType t : {g.a, g.b, g.c, g.compute}) put(key, t);
  put(key, g.scaling);
  for (std::int32_t v : {g.algo_tile_m, g.algo_tile_n, g.algo_stages, g.algo_split_k}) put(key, v);
  const ConvShape& c = op.conv;
  for (std::int64_t v :
       {c.batch, c.in_channels, c.out_channels, c.in_h, c.in_w, c.kernel_h, c.kernel_w, c.stride_h,
        c.stride_w, c.pad_h, c.pad_w, c.dilation_h, c.dilation_w, c.groups})
    put(key, v);
  put(key, c.dtype);
  const AttentionShape& a = op.attention;
  for (std::int64_t v :
       {a.batch, a.seqlen_q, a.seqlen_kv, a.heads, a.kv_heads, a.head_dim, a.window})
    put(key, v);
  for (bool v : {a.causal, a.backward}) put(key, v);
  put(key, a.dtype);
  put(key, a.kv_dtype);
  const VectorShape& v = op.vec;
  put(key, v.rows);
  put(key, v.cols);
  put(key, v.bytes_read);
  put(key, v.bytes_written);
  put(key, v.dtype);
  put(key, v.broadcast_reuse_bytes);
  put(key, v.broadcast_reread_bytes);
  put(key, op.collective.bytes);
  put(key, op.collective.ranks);
}

const std::vector<Prediction>* PredictionCache::find(const std::string& key) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  ++hits_;
  return &it->second;
}

const std::vector<Prediction>& PredictionCache::insert(const std::string& key,
                                                       std::vector<Prediction> values) {
  if (entries_.size() >= capacity_) entries_.clear();
  return entries_.insert_or_assign(key, std::move(values)).first->second;
}

}  // namespace pm2lat
