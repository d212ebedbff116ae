// The lock-free structures under real concurrency (run under ThreadSanitizer too).
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "launch_path/handle_cache.h"
#include "launch_path/string_table.h"
#include "launch_path/thread_ring.h"
#include "launch_path/thread_state.h"

namespace pm2lat::shim {
namespace {

TEST(Concurrency, OneProducerOneConsumerLoseNothingAndKeepOrder) {
  ThreadRing* ring = ThreadRing::create(256, 1);
  constexpr std::uint64_t kCount = 200000;
  std::thread producer([&] {
    for (std::uint64_t i = 0; i < kCount;) {
      if (LaunchSlot* s = ring->try_reserve()) {
        s->seq = i++;
        ring->publish();
      } else {
        std::this_thread::yield();
      }
    }
  });
  std::uint64_t expected = 0;
  while (expected < kCount) {
    if (LaunchSlot* s = ring->peek()) {
      ASSERT_EQ(s->seq, expected);
      ring->pop();
      ++expected;
    }
  }
  producer.join();
  ThreadRing::destroy(ring);
}

TEST(Concurrency, EveryThreadGetsItsOwnRegisteredRing) {
  std::vector<std::thread> threads;
  std::vector<ThreadRing*> rings(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      rings[t] = current_thread_ring();
      EXPECT_EQ(current_thread_ring(), rings[t]);
    });
  }
  for (auto& t : threads) t.join();
  std::set<ThreadRing*> distinct(rings.begin(), rings.end());
  EXPECT_EQ(distinct.size(), 8u);
  std::set<ThreadRing*> registered;
  for (ThreadRing* r = RingRegistry::instance().head(); r != nullptr; r = r->next)
    registered.insert(r);
  for (ThreadRing* r : rings) {
    EXPECT_EQ(registered.count(r), 1u);
    EXPECT_TRUE(r->retired.load());  // their threads have exited
  }
}

TEST(Concurrency, InterningFromManyThreadsGivesOneIdPerName) {
  StringTable table;
  std::vector<std::thread> threads;
  std::vector<std::vector<std::uint32_t>> ids(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const std::uint32_t id = table.intern("kernel_" + std::to_string(i));
        ids[t].push_back(id);
        EXPECT_EQ(table.get(id), "kernel_" + std::to_string(i));
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int t = 1; t < 4; ++t) EXPECT_EQ(ids[t], ids[0]);
}

TEST(Concurrency, HandleCacheReadersSeeCompleteEntries) {
  HandleCache cache;
  std::atomic<bool> stop{false};
  std::thread reader([&] {
    while (!stop.load()) {
      for (std::uint64_t h = 1; h <= 500; ++h) {
        if (const KernelInfo* info = cache.find(h * 64)) {
          ASSERT_EQ(info->name_id, h);
          ASSERT_EQ(info->registers, h + 1);
        }
      }
    }
  });
  for (std::uint64_t h = 1; h <= 500; ++h) {
    KernelFacts f;
    f.name_id = static_cast<std::uint32_t>(h);
    f.registers = static_cast<std::uint32_t>(h + 1);
    cache.insert(h * 64, f);
  }
  stop = true;
  reader.join();
}

}  // namespace
}  // namespace pm2lat::shim
