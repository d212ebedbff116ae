#include "pm2lat/models/broadcast_traffic.h"

#include <gtest/gtest.h>

#include <vector>

#include "pm2lat/predictor.h"
#include "shipped_catalogue_test.h"

namespace pm2lat {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// OPT's attention-mask add: [8, 32, 2048, 2048] + [8, 1, 2048, 2048] in fp32. The mask is
// used again every head, 48 MiB of both operands and the output later.
KernelRecord mask_add() {
  const double out = 8.0 * 32 * 2048 * 2048 * 4, mask = 8.0 * 2048 * 2048 * 4;
  KernelRecord r;
  r.op.kind = OpKind::kElementwise;
  r.op.name = "add";
  r.op.vec.rows = 8L * 32 * 2048;
  r.op.vec.cols = 2048;
  r.op.vec.bytes_read = out + mask;
  r.op.vec.bytes_written = out;
  r.op.vec.dtype = DType::kFp32;
  r.op.vec.broadcast_reuse_bytes = 48 * kMiB;
  r.op.vec.broadcast_reread_bytes = out - mask;
  return r;
}

class BroadcastTrafficTest : public ShippedCatalogueTest {};

TEST_F(BroadcastTrafficTest, AnOperandIsReadAgainOnlyWhereTheL2CannotHoldItBetweenReuses) {
  const KernelRecord r = mask_add();
  const VectorShape& v = r.op.vec;
  // 48 MiB between reuses: more than any of these L2s holds (H100 50 MB, A100 40 MB, V100 6 MB).
  for (const char* name : {"V100-PCIE-32GB", "A100-PCIE-40GB", "H100-SXM"}) {
    EXPECT_TRUE(rereads_broadcast(r, gpu(name))) << name;
    EXPECT_DOUBLE_EQ(broadcast_bytes_read(v, gpu(name)), v.bytes_read + v.broadcast_reread_bytes);
  }
  // BERT's position add, [1, 512, 1024] over [B, 512, 1024]: 6 MiB between reuses. The
  // A100's L2 keeps it, the V100's (6 MB, shared with the stream) does not.
  KernelRecord position = r;
  position.op.vec.broadcast_reuse_bytes = 6 * kMiB;
  EXPECT_TRUE(rereads_broadcast(position, gpu("V100-PCIE-32GB")));
  EXPECT_FALSE(rereads_broadcast(position, gpu("A100-PCIE-40GB")));
  EXPECT_DOUBLE_EQ(broadcast_bytes_read(position.op.vec, gpu("A100-PCIE-40GB")), v.bytes_read);
}

TEST_F(BroadcastTrafficTest, NoReuseStatedOrNoL2KnownReadsNothingAgain) {
  KernelRecord plain = mask_add();
  plain.op.vec.broadcast_reread_bytes = 0;
  EXPECT_FALSE(rereads_broadcast(plain, gpu("V100-PCIE-32GB")));
  DeviceSpec unknown = gpu("V100-PCIE-32GB");
  unknown.l2_mb = 0;
  EXPECT_FALSE(rereads_broadcast(mask_add(), unknown));
}

TEST_F(BroadcastTrafficTest, TheRereadsAreCountedOnceInTheBytesTheModelsSee) {
  const KernelRecord r = mask_add();
  const KernelRecord counted = with_broadcast_rereads(r, gpu("V100-PCIE-32GB"));
  EXPECT_DOUBLE_EQ(counted.op.vec.bytes_read,
                   r.op.vec.bytes_read + r.op.vec.broadcast_reread_bytes);
  EXPECT_FALSE(rereads_broadcast(counted, gpu("V100-PCIE-32GB")));
}

// The reuse distance from shapes: one step of the innermost dimension the operand lacks, of
// the output and every full-size operand, and the operand's own block.
TEST_F(BroadcastTrafficTest, TheReuseDistanceCountsTheOperandsOwnBlockWhateverItsRank) {
  const std::vector<std::int64_t> out{16, 512, 1024}, padded{1, 512, 1024}, lower_rank{512, 1024};
  for (const auto* position : {&padded, &lower_rank}) {
    const std::vector<PointwiseOperand> operands{{out, 4}, {*position, 4}};
    VectorShape v;
    state_broadcast_reuse(operands, out, 4, v);
    EXPECT_DOUBLE_EQ(v.broadcast_reuse_bytes, 512.0 * 1024 * (4 + 4) + 512.0 * 1024 * 4)
        << position->size() << "-d operand";
    EXPECT_DOUBLE_EQ(v.broadcast_reread_bytes, 15.0 * 512 * 1024 * 4);
  }
}

// Through the predictor (no profiles: the roofline, which prices bytes): the rereads cost
// time on the GPU whose L2 misses them and nothing on one whose L2 holds them.
TEST_F(BroadcastTrafficTest, ThePredictorPricesTheRereadsOnlyOnTheGpuThatMakesThem) {
  Predictor predictor(DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json"), {});
  const TargetId v100 = predictor.add_target("V100-PCIE-32GB");
  const TargetId a100 = predictor.add_target("A100-PCIE-40GB");
  KernelRecord position = mask_add();
  position.op.vec.broadcast_reuse_bytes = 6 * kMiB;
  KernelRecord once = position;  // the operand read once, as if every reuse hit
  once.op.vec.broadcast_reuse_bytes = once.op.vec.broadcast_reread_bytes = 0;
  KernelRecord materialised = once;  // read at every use
  materialised.op.vec.bytes_read += position.op.vec.broadcast_reread_bytes;
  const KernelClass cls = family(KernelFamily::kElementwise);
  const double v100_us = predictor.predict(position, cls, v100).us;
  EXPECT_GT(v100_us, 1.3 * predictor.predict(once, cls, v100).us);
  EXPECT_DOUBLE_EQ(v100_us, predictor.predict(materialised, cls, v100).us);
  EXPECT_DOUBLE_EQ(predictor.predict(position, cls, a100).us,
                   predictor.predict(once, cls, a100).us);
}

}  // namespace
}  // namespace pm2lat
