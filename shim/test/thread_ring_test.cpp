#include "launch_path/thread_ring.h"

#include <gtest/gtest.h>

#include <memory>

namespace pm2lat::shim {
namespace {

struct RingDeleter {
  void operator()(ThreadRing* r) const { ThreadRing::destroy(r); }
};
using Ring = std::unique_ptr<ThreadRing, RingDeleter>;

TEST(ThreadRing, SlotsBecomeVisibleInOrderWhenPublished) {
  Ring ring(ThreadRing::create(64, 1));
  ASSERT_EQ(ring->capacity(), 64u);
  LaunchSlot* a = ring->try_reserve();
  a->seq = 1;
  EXPECT_EQ(ring->peek(), nullptr);  // not published yet
  ring->publish();
  LaunchSlot* b = ring->try_reserve();
  b->seq = 2;
  ring->publish();
  ASSERT_NE(ring->peek(), nullptr);
  EXPECT_EQ(ring->peek()->seq, 1u);
  ring->pop();
  EXPECT_EQ(ring->peek()->seq, 2u);
  ring->pop();
  EXPECT_TRUE(ring->empty());
}

TEST(ThreadRing, NestedReservationsPublishTogetherWithTheOutermost) {
  Ring ring(ThreadRing::create(64, 1));
  LaunchSlot* outer = ring->try_reserve();  // a launch in progress
  outer->seq = 10;
  LaunchSlot* inner = ring->try_reserve();  // e.g. a graph event during it
  inner->seq = 11;
  ring->publish();
  EXPECT_EQ(ring->peek(), nullptr);  // the outer one is still being written
  ring->publish();
  ASSERT_NE(ring->peek(), nullptr);
  EXPECT_EQ(ring->peek()->seq, 10u);
  EXPECT_EQ(ring->occupancy(), 2u);
}

TEST(ThreadRing, AFullRingDropsAndCountsInsteadOfBlocking) {
  Ring ring(ThreadRing::create(64, 1));
  for (int i = 0; i < 64; ++i) {
    ASSERT_NE(ring->try_reserve(), nullptr);
    ring->publish();
  }
  EXPECT_EQ(ring->try_reserve(), nullptr);
  EXPECT_EQ(ring->try_reserve(), nullptr);
  EXPECT_EQ(ring->dropped(), 2u);
  ring->pop();
  EXPECT_NE(ring->try_reserve(), nullptr);  // room again once the worker consumed one
}

TEST(ThreadRing, CapacityIsAPowerOfTwo) {
  Ring ring(ThreadRing::create(1000, 1));
  EXPECT_EQ(ring->capacity(), 1024u);
  EXPECT_EQ(ring->index_of(ring->try_reserve()), 0u);
}

}  // namespace
}  // namespace pm2lat::shim
