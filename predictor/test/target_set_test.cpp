// TargetSet: names resolved once, one prediction cache keyed by everything a prediction reads.
#include <gtest/gtest.h>

#include "pm2lat/classifier.h"
#include "pm2lat/target_set.h"

namespace pm2lat {
namespace {

DeviceCatalogue shipped_catalogue() {
  return DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
}

KernelRecord attention(std::int64_t seqlen) {
  KernelRecord r;
  r.launch.name = "flash_fwd_kernel";
  r.launch.grid = {8, 8, 1};
  r.op.kind = OpKind::kAttention;
  r.op.attention.batch = 2;
  r.op.attention.seqlen_q = r.op.attention.seqlen_kv = seqlen;
  r.op.attention.heads = r.op.attention.kv_heads = 16;
  r.op.attention.head_dim = 128;
  return r;
}

TEST(PredictionCache, KeysDifferInEveryFieldAPredictionReads) {
  const KernelClass cls = classify_kernel("flash_fwd_kernel");
  const PredictOptions o;
  std::string a, b;
  PredictionCache::key_of(attention(512), cls, o, a);
  PredictionCache::key_of(attention(512), cls, o, b);
  EXPECT_EQ(a, b);
  KernelRecord r = attention(512);
  r.op.attention.window = 128;  // a sliding window changes the work
  PredictionCache::key_of(r, cls, o, b);
  EXPECT_NE(a, b);
  r = attention(512);
  r.op.attention.kv_dtype = DType::kFp8E4M3;
  PredictionCache::key_of(r, cls, o, b);
  EXPECT_NE(a, b);
  r = attention(513);
  PredictionCache::key_of(r, cls, o, b);
  EXPECT_NE(a, b);
  PredictOptions call = o;
  call.basis = TimeBasis::kCall;
  PredictionCache::key_of(attention(512), cls, call, b);
  EXPECT_NE(a, b);
  PredictOptions graph = o;
  graph.graph_replay = true;
  PredictionCache::key_of(attention(512), cls, graph, b);
  EXPECT_NE(a, b);
  KernelClass other = cls;
  other.config = "another";
  PredictionCache::key_of(attention(512), other, o, b);
  EXPECT_NE(a, b);
}

TEST(PredictionCache, StartsOverWhenFull) {
  PredictionCache cache(2);
  cache.insert("a", {Prediction{}});
  cache.insert("b", {Prediction{}});
  EXPECT_EQ(cache.size(), 2u);
  cache.insert("c", {Prediction{}});
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.find("a"), nullptr);
  EXPECT_NE(cache.find("c"), nullptr);
  EXPECT_EQ(cache.hits(), 1u);
}

TEST(TargetSet, ResolvesNamesOnceInOrderWithoutDuplicates) {
  const DeviceCatalogue catalogue = shipped_catalogue();
  TargetSet set(catalogue);
  EXPECT_EQ(set.add("h100"), 0u);
  EXPECT_EQ(set.add("Tesla T4"), 1u);
  EXPECT_EQ(set.add("NVIDIA H100 80GB HBM3"), 0u);
  EXPECT_EQ(set.names(), (std::vector<std::string>{"H100-SXM", "T4"}));
  EXPECT_EQ(&set.spec(1), catalogue.find("T4"));
  try {
    set.add("H1000");
    FAIL() << "expected UnknownDeviceError";
  } catch (const UnknownDeviceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("unknown GPU 'H1000'"), std::string::npos) << what;
    EXPECT_NE(what.find("pm2lat devices"), std::string::npos) << what;
  }
  EXPECT_THROW((void)set.predict(attention(64), KernelClass{}, {}), std::logic_error);
}

TEST(TargetSet, PredictsEveryTargetAndServesRepeatsFromItsCache) {
  Predictor predictor(shipped_catalogue(), {});
  TargetSet set(predictor);
  set.add("H100");
  set.add("L4");
  const KernelClass cls = classify_kernel("flash_fwd_kernel");
  PredictOptions o;
  o.source_spec = &set.spec(0);
  const auto first = set.predict(attention(1024), cls, o);
  ASSERT_EQ(first.size(), 2u);
  // The predictor's own answer: adding L4 again gives the set's id.
  EXPECT_EQ(first[1].us, predictor.predict(attention(1024), cls, predictor.add_target("L4"), o).us);
  const double h100 = first[0].us;
  (void)set.predict(attention(1024), cls, o);
  EXPECT_EQ(set.cache().hits(), 1u);
  EXPECT_EQ(set.cache().size(), 1u);
  EXPECT_NE(set.predict(attention(4096), cls, o)[0].us, h100);
  // A target added later is predicted too, for records seen before.
  set.add("A100");
  EXPECT_EQ(set.predict(attention(1024), cls, o).size(), 3u);
}

}  // namespace
}  // namespace pm2lat
