// Interned kernel names. Interning happens once per distinct name (on a handle's first
// launch, under a lock); lookups by id are lock-free so the worker can read names of slots
// while launching threads keep adding new ones. Storage is append-only and bounded.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace pm2lat::shim {

class StringTable {
 public:
  static constexpr std::uint32_t kUnknown = 0;  // ""
  static constexpr std::uint32_t kFull = 1;     // "<name table full>"

  explicit StringTable(std::size_t max_bytes = std::size_t(64) << 20);
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;
  ~StringTable();

  static StringTable& instance();

  // Id of `s`, adding it if new. Returns kFull once `max_bytes` are used.
  std::uint32_t intern(std::string_view s);
  // The string of an id returned by intern(); "" for unknown ids.
  std::string_view get(std::uint32_t id) const noexcept;
  std::size_t size() const noexcept { return count_.load(std::memory_order_acquire); }

  // After fork in the child: another thread may have held the lock.
  // Around fork: hold the lock so the child never inherits a half-updated table.
  void lock_for_fork() noexcept { mu_.lock(); }
  void unlock_after_fork() noexcept { mu_.unlock(); }
  void reset_lock_after_fork() noexcept;

 private:
  static constexpr std::size_t kChunkEntries = 4096;
  static constexpr std::size_t kMaxChunks = 1024;
  static constexpr std::size_t kArenaBlock = 64 * 1024;

  const char* store(std::string_view s);

  std::mutex mu_;
  std::size_t max_bytes_;
  std::size_t used_bytes_ = 0;
  std::vector<char*> blocks_;
  char* block_ = nullptr;
  std::size_t block_left_ = 0;
  std::unordered_map<std::string_view, std::uint32_t> ids_;
  struct Entry {
    const char* data;
    std::uint32_t size;
  };
  std::atomic<Entry*> chunks_[kMaxChunks] = {};
  std::atomic<std::uint32_t> count_{0};
};

}  // namespace pm2lat::shim
