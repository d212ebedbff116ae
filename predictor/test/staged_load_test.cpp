// Predictor::from_directory reads each point table only while its model is built. Its
// predictions must be those of a predictor built from the same profiles loaded whole: every
// kind of calibrated kernel, on GPUs with and without profiles, observed on the target and on
// another GPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pm2lat/classifier.h"
#include "pm2lat/predictor.h"
#include "pm2lat/profile_io.h"

namespace pm2lat {
namespace {

// Every `stride`-th calibration point of every table of `p` as a record of the call it timed.
std::vector<KernelRecord> records_from_points(const Profile& p, std::size_t stride) {
  std::vector<KernelRecord> out;
  for (std::size_t i = 0; i < p.gemm_points.size(); i += stride) {
    const GemmPoint& pt = p.gemm_points[i];
    const GemmConfigFit& c = p.gemm_configs[static_cast<std::size_t>(pt.config)];
    KernelRecord r;
    r.launch.name = c.config;
    r.launch.grid = pt.grid;
    r.op.kind = OpKind::kGemm;
    r.op.name = pt.op;
    r.op.gemm = GemmShape{.batch = pt.batch,
                          .m = pt.m,
                          .n = pt.n,
                          .k = pt.k,
                          .trans_b = pt.transposed_weight,
                          .a = c.dtype,
                          .b = c.dtype};
    out.push_back(r);
  }
  for (std::size_t i = 0; i < p.scaled_gemm_points.size(); i += stride) {
    const ScaledGemmPoint& pt = p.scaled_gemm_points[i];
    const ScaledGemmFit& f = p.scaled_gemm_fits[static_cast<std::size_t>(pt.config)];
    KernelRecord r;
    r.op.kind = OpKind::kGemm;
    r.op.gemm = GemmShape{
        .m = pt.m, .n = pt.n, .k = pt.k, .a = f.dtype, .b = f.dtype, .scaling = f.scaling};
    out.push_back(r);
  }
  for (std::size_t i = 0; i < p.vector_points.size(); i += stride) {
    const VectorPoint& pt = p.vector_points[i];
    KernelRecord r;
    r.op.kind = OpKind::kElementwise;
    r.op.name = p.vector_fits[static_cast<std::size_t>(pt.fit)].op;
    r.op.vec = VectorShape{.rows = pt.rows,
                           .cols = pt.cols,
                           .bytes_read = pt.bytes / 2,
                           .bytes_written = pt.bytes / 2};
    out.push_back(r);
  }
  for (std::size_t i = 0; i < p.attention_points.size(); i += stride) {
    const AttentionPoint& pt = p.attention_points[i];
    const AttentionConfigFit& c = p.attention_configs[static_cast<std::size_t>(pt.config)];
    KernelRecord r;
    r.launch.name = "flash_fwd_kernel_" + c.variant;
    r.op.kind = OpKind::kAttention;
    r.op.attention = AttentionShape{.batch = pt.batch,
                                    .seqlen_q = pt.seqlen_q,
                                    .seqlen_kv = pt.seqlen_kv,
                                    .heads = pt.heads,
                                    .kv_heads = pt.kv_heads,
                                    .head_dim = c.head_dim,
                                    .causal = pt.causal,
                                    .dtype = DType::kBf16,
                                    .window = pt.window,
                                    .kv_dtype = c.kv_dtype};
    out.push_back(r);
  }
  for (std::size_t i = 0; i < p.conv_points.size(); i += stride) {
    const ConvPoint& pt = p.conv_points[i];
    KernelRecord r;
    r.launch.name = p.conv_configs[static_cast<std::size_t>(pt.config)].config;
    r.launch.grid = pt.grid;
    r.op.kind = OpKind::kConv;
    r.op.conv = ConvShape{.batch = pt.batch,
                          .in_channels = pt.in_channels,
                          .out_channels = pt.out_channels,
                          .in_h = pt.in_h,
                          .in_w = pt.in_w,
                          .kernel_h = pt.kernel_h,
                          .kernel_w = pt.kernel_w,
                          .stride_h = pt.stride,
                          .stride_w = pt.stride,
                          .pad_h = pt.pad,
                          .pad_w = pt.pad,
                          .dtype = DType::kFp32};
    out.push_back(r);
  }
  return out;
}

TEST(StagedLoad, PredictsAsProfilesLoadedWhole) {
  const std::string dir = PM2LAT_PROFILE_DIR;
  const std::vector<Profile> whole_profiles = load_profiles(dir);
  Predictor staged = Predictor::from_directory(dir);
  Predictor whole(DeviceCatalogue::load(dir + "/devices.json"), whole_profiles);
  whole.set_error_bands(staged.error_bands());
  // Calibrated GPUs of every table, and GPUs that borrow every model (no profile of their own).
  const std::vector<std::string> gpus = {"H100", "A100", "L4",    "T4",           "B200", "L40S",
                                         "V100", "P4",   "GB200", "RTX PRO 6000", "A10",  "H200"};
  std::vector<TargetId> staged_ids, whole_ids;
  for (const auto& g : gpus) {
    staged_ids.push_back(staged.add_target(g));
    whole_ids.push_back(whole.add_target(g));
  }
  std::size_t compared = 0;
  for (const Profile& p : whole_profiles) {
    for (const KernelRecord& r : records_from_points(p, 211)) {
      const KernelClass cls = classify_kernel(r.launch.name);
      for (TimeBasis basis : {TimeBasis::kKernel, TimeBasis::kCall}) {
        PredictOptions o;
        o.basis = basis;
        o.source_device = p.device;
        for (std::size_t t = 0; t < gpus.size(); ++t) {
          const Prediction a = staged.predict(r, cls, staged_ids[t], o);
          const Prediction b = whole.predict(r, cls, whole_ids[t], o);
          ASSERT_EQ(a.us, b.us) << p.file << " on " << gpus[t] << ": " << r.launch.name;
          ASSERT_EQ(a.flags, b.flags);
          ASSERT_EQ(a.config, b.config);
          ASSERT_EQ(a.model, b.model);
          ASSERT_EQ(a.basis, b.basis);
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 50000u);
  const HostDispatchTable& staged_hosts = staged.host_dispatch();
  const HostDispatchTable& whole_hosts = whole.host_dispatch();
  ASSERT_EQ(staged_hosts.size(), whole_hosts.size());
  std::size_t measured = 0;
  for (std::size_t i = 0; i < staged_hosts.size(); ++i) {
    EXPECT_EQ(staged_hosts.device(i), whole_hosts.device(i));
    const auto& a = staged_hosts.measured(i);
    const auto& b = whole_hosts.measured(i);
    ASSERT_EQ(a.size(), b.size()) << staged_hosts.device(i);
    for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
      EXPECT_EQ(ia->first, ib->first);
      EXPECT_EQ(ia->second.pre_us, ib->second.pre_us);
      EXPECT_EQ(ia->second.floor_us, ib->second.floor_us);
    }
    measured += a.size();
  }
  EXPECT_GT(measured, 0u) << "no table measured a dispatch: the comparison above compared nothing";
}

}  // namespace
}  // namespace pm2lat
