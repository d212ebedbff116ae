#include "launch_path/handle_cache.h"

#include <gtest/gtest.h>

namespace pm2lat::shim {
namespace {

KernelFacts facts(std::uint32_t name) {
  KernelFacts f;
  f.name_id = name;
  f.registers = 64;
  f.n_params = 2;
  f.param_size[0] = 8;
  f.param_size[1] = 4;
  f.param_offset[1] = 8;
  return f;
}

TEST(HandleCache, FindsWhatWasInserted) {
  HandleCache cache;
  EXPECT_EQ(cache.find(0x1000), nullptr);
  KernelInfo* info = cache.insert(0x1000, facts(7));
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(cache.find(0x1000), info);
  EXPECT_EQ(info->name_id, 7u);
  EXPECT_EQ(info->param_offset[1], 8u);
  EXPECT_EQ(cache.find(0x2000), nullptr);
  EXPECT_EQ(cache.insert(0, facts(1)), nullptr);  // null handles are never cached
}

TEST(HandleCache, ASecondResolutionOfTheSameHandleKeepsTheFirstEntry) {
  HandleCache cache;
  KernelInfo* first = cache.insert(0x1000, facts(7));
  EXPECT_EQ(cache.insert(0x1000, facts(9)), first);
  EXPECT_EQ(first->name_id, 7u);
}

TEST(HandleCache, UnloadsInvalidateEverythingAndHandlesCanComeBackAsOtherKernels) {
  HandleCache cache;
  cache.insert(0x1000, facts(7));
  cache.invalidate_all();
  EXPECT_EQ(cache.find(0x1000), nullptr);
  KernelInfo* again = cache.insert(0x1000, facts(9));
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(cache.find(0x1000)->name_id, 9u);
}

TEST(HandleCache, ManyHandlesFit) {
  HandleCache cache;
  for (std::uint64_t h = 1; h <= 20000; ++h)
    ASSERT_NE(cache.insert(h * 4096, facts(std::uint32_t(h))), nullptr);
  for (std::uint64_t h = 1; h <= 20000; ++h) ASSERT_EQ(cache.find(h * 4096)->name_id, h);
}

}  // namespace
}  // namespace pm2lat::shim
