#include "launch_path/thread_ring.h"

#include <gtest/gtest.h>

#include <algorithm>
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

TEST(ThreadRing, AReservationNotYetPublishedShowsItsSequenceNumber) {
  Ring ring(ThreadRing::create(64, 1));
  EXPECT_EQ(ring->oldest_open_seq(), ThreadRing::kNoneOpen);
  LaunchSlot* outer = ring->try_reserve();
  outer->seq = 10;
  ring->mark_open(outer->seq);
  EXPECT_EQ(ring->oldest_open_seq(), 10u);
  LaunchSlot* inner = ring->try_reserve();  // nested: the outermost one is the oldest
  inner->seq = 11;
  ring->mark_open(inner->seq);
  EXPECT_EQ(ring->oldest_open_seq(), 10u);
  ring->publish();
  EXPECT_EQ(ring->oldest_open_seq(), 10u);
  EXPECT_EQ(ring->peek(), nullptr);
  ring->publish();
  // Published: visible in the ring instead.
  EXPECT_EQ(ring->oldest_open_seq(), ThreadRing::kNoneOpen);
  ASSERT_NE(ring->peek(), nullptr);
  EXPECT_EQ(ring->peek()->seq, 10u);
  LaunchSlot* next = ring->try_reserve();
  next->seq = 12;
  ring->mark_open(next->seq);
  EXPECT_EQ(ring->oldest_open_seq(), 12u);
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
  // Room again once the worker has emptied a segment.
  for (std::uint32_t i = 0; i + 1 < ring->segment_slots(); ++i) ring->pop();
  EXPECT_EQ(ring->try_reserve(), nullptr);
  ring->pop();
  EXPECT_NE(ring->try_reserve(), nullptr);
}

// A ring the worker keeps up with writes the same few segments over and over: its memory in
// use is what it holds at once, not its capacity.
TEST(ThreadRing, ReusesEmptiedSegmentsBeforeUntouchedOnes) {
  Ring ring(ThreadRing::create(8192, 1));
  ASSERT_EQ(ring->capacity(), 8192u);
  const std::uint32_t segment = ring->segment_slots();
  ASSERT_LT(segment, ring->capacity());
  std::uint32_t highest = 0;
  std::uint64_t seq = 0, expected = 0;
  for (int round = 0; round < 200; ++round) {
    // Bursts of up to one and a half segments, then the worker drains what is there.
    for (std::uint32_t i = 0; i < segment + segment / 2 - static_cast<std::uint32_t>(round); ++i) {
      LaunchSlot* s = ring->try_reserve();
      ASSERT_NE(s, nullptr);
      s->seq = seq++;
      highest = std::max(highest, ring->index_of(s));
      ring->publish();
    }
    for (LaunchSlot* s = ring->peek(); s != nullptr; s = ring->peek()) {
      ASSERT_EQ(s->seq, expected++);
      ring->pop();
    }
  }
  EXPECT_EQ(ring->dropped(), 0u);
  EXPECT_LT(highest, 3 * segment);  // at most three segments ever written
}

TEST(ThreadRing, CapacityIsAPowerOfTwo) {
  Ring ring(ThreadRing::create(1000, 1));
  EXPECT_EQ(ring->capacity(), 1024u);
  EXPECT_EQ(ring->index_of(ring->try_reserve()), 0u);
}

}  // namespace
}  // namespace pm2lat::shim
