#include "launch_path/launch_recorder.h"

#include <gtest/gtest.h>

#include "interpose/library_context.h"
#include "launch_path/handle_cache.h"
#include "launch_path/string_table.h"
#include "launch_path/thread_ring.h"
#include "launch_path/thread_state.h"

namespace pm2lat::shim {
namespace {

// A handle whose facts are already cached (no driver needed).
std::uint64_t known_handle(std::uint64_t h, const char* name) {
  KernelFacts f;
  f.name_id = StringTable::instance().intern(name);
  f.registers = 40;
  f.static_smem = 1024;
  f.n_params = 4;
  const std::uint8_t sizes[] = {8, 8, 4, 16};  // ptr, i64, i32, a struct
  const std::uint16_t offsets[] = {0, 8, 16, 24};
  for (int i = 0; i < 4; ++i) {
    f.param_size[i] = sizes[i];
    f.param_offset[i] = offsets[i];
  }
  HandleCache::instance().insert(h, f);
  return h;
}

LaunchSlot take_last() {
  ThreadRing* ring = thread_state().ring;
  LaunchSlot last;
  while (LaunchSlot* s = ring->peek()) {
    last = *s;
    ring->pop();
  }
  return last;
}

TEST(LaunchRecorder, CopiesGeometryNameAndTheScalarArguments) {
  LaunchCall c;
  c.api = LaunchApi::kCuLaunchKernel;
  c.handle = known_handle(0xA000, "triton_poi_fused_add_0");
  c.grid[0] = 32;
  c.block[0] = 128;
  c.smem = 512;
  std::uint64_t ptr = 0x7f0000001000;
  std::int64_t big = 1 << 20;
  int n = 4096;
  char blob[16] = {};
  void* params[] = {&ptr, &big, &n, blob};
  c.params = params;
  LaunchSlot* s = begin_kernel_slot(c, 77, 0);
  ASSERT_NE(s, nullptr);
  commit_slot(s, 0);
  const LaunchSlot got = take_last();
  EXPECT_EQ(StringTable::instance().get(got.name_id), "triton_poi_fused_add_0");
  EXPECT_EQ(got.grid[0], 32u);
  EXPECT_EQ(got.block[0], 128u);
  EXPECT_EQ(got.smem, 512u + 1024u);  // dynamic + static
  EXPECT_EQ(got.regs, 40u);
  EXPECT_EQ(got.correlation_id, 77u);
  ASSERT_EQ(got.n_args, 3);  // the struct parameter is not a scalar
  EXPECT_EQ(got.args[0], std::int64_t(ptr));
  EXPECT_EQ(got.args[1], big);
  EXPECT_EQ(got.args[2], 4096);
  EXPECT_EQ(got.arg_is_8byte, 0b011);
  EXPECT_EQ(got.call_id, 0u);
}

TEST(LaunchRecorder, ReadsArgumentsFromAnExtraBufferToo) {
  LaunchCall c;
  c.handle = known_handle(0xB000, "packed_args_kernel");
  unsigned char buffer[40] = {};
  const std::int32_t n = 1234;
  std::memcpy(buffer + 16, &n, 4);
  std::size_t size = sizeof(buffer);
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  c.extra = extra;
  commit_slot(begin_kernel_slot(c, 0, 0), 0);
  const LaunchSlot got = take_last();
  ASSERT_EQ(got.n_args, 3);
  EXPECT_EQ(got.args[2], 1234);
}

TEST(LaunchRecorder, KernelsInsideALibraryCallCarryItsIdAndARuntimeLaunchIsConsumedOnce) {
  LibraryCallScope scope(LibrarySource::kCublas, LibraryApi::kCublasSgemm, OpKind::kGemm);
  RuntimePending& rt = thread_state().runtime;
  rt.active = true;
  rt.consumed = false;
  rt.api = LaunchApi::kCudaLaunchKernelInternal;
  LaunchCall c;
  c.handle = known_handle(0xC000, "ampere_sgemm_128x64_tn");
  commit_slot(begin_kernel_slot(c, 0, 0), 0);
  LaunchSlot first = take_last();
  EXPECT_EQ(first.call_id, scope.op().call_id);
  EXPECT_EQ(first.runtime_api, LaunchApi::kCudaLaunchKernelInternal);
  EXPECT_TRUE(rt.consumed);
  commit_slot(begin_kernel_slot(c, 0, 0), 0);  // a second kernel of the same runtime call
  EXPECT_EQ(take_last().runtime_api, LaunchApi::kUnknown);
  rt.active = false;
}

TEST(LaunchRecorder, ReadsClusterAndCooperativeAttributesOfLaunchConfigs) {
  CUlaunchAttribute attrs[2] = {};
  attrs[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attrs[0].value.clusterDim.x = 2;
  attrs[0].value.clusterDim.y = 1;
  attrs[0].value.clusterDim.z = 1;
  attrs[1].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
  attrs[1].value.cooperative = 1;
  CUlaunchConfig cfg{};
  cfg.gridDimX = 8;
  cfg.blockDimX = 256;
  cfg.sharedMemBytes = 4096;
  cfg.attrs = attrs;
  cfg.numAttrs = 2;
  LaunchCall c;
  read_launch_config(&cfg, c);
  EXPECT_EQ(c.grid[0], 8u);
  EXPECT_EQ(c.smem, 4096u);
  EXPECT_EQ(c.cluster[0], 2u);
  EXPECT_TRUE(c.cooperative);
}

}  // namespace
}  // namespace pm2lat::shim
