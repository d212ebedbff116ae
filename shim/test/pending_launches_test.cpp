#include "collect/pending_launches.h"

#include <gtest/gtest.h>

namespace pm2lat::shim {
namespace {

LaunchSlot slot(std::uint64_t seq) {
  LaunchSlot s;
  s.seq = seq;
  return s;
}

TEST(PendingLaunches, InsertFindEraseAndOldestFirst) {
  PendingLaunches p;
  p.insert(5, slot(50), 100);
  p.insert(3, slot(30), 200);
  p.insert(9, slot(90), 300);
  EXPECT_EQ(p.size(), 3u);
  ASSERT_NE(p.find(3), nullptr);
  EXPECT_EQ(p.find(3)->slot.seq, 30u);
  EXPECT_EQ(p.find(4), nullptr);
  EXPECT_EQ(p.oldest().first, 5u);
  p.erase(5);
  EXPECT_EQ(p.find(5), nullptr);
  EXPECT_EQ(p.oldest().first, 3u);
  EXPECT_EQ(p.oldest().second->arrived_ns, 200u);
  p.erase(3);
  p.erase(9);
  EXPECT_EQ(p.size(), 0u);
  EXPECT_EQ(p.oldest().second, nullptr);
}

TEST(PendingLaunches, ChurnLikeAStreamOfLaunchesAndRecords) {
  PendingLaunches p;
  std::uint64_t next_in = 1, next_out = 1;
  for (int round = 0; round < 200; ++round) {
    for (int i = 0; i < 3000; ++i, ++next_in) p.insert(next_in, slot(next_in), next_in);
    for (int i = 0; i < 2990; ++i, ++next_out) {
      PendingLaunches::Entry* e = p.find(next_out);
      ASSERT_NE(e, nullptr) << next_out;
      ASSERT_EQ(e->slot.seq, next_out);
      p.erase(next_out);
    }
  }
  EXPECT_EQ(p.size(), next_in - next_out);
  EXPECT_EQ(p.oldest().first, next_out);
}

}  // namespace
}  // namespace pm2lat::shim
