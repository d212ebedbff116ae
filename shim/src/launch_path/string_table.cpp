#include "launch_path/string_table.h"

#include <cstring>
#include <new>

namespace pm2lat::shim {

namespace {
constexpr char kFullText[] = "<name table full>";
}

StringTable::StringTable(std::size_t max_bytes) : max_bytes_(max_bytes) {
  intern("");
  intern(kFullText);
}

StringTable::~StringTable() {
  for (char* b : blocks_) delete[] b;
  for (auto& c : chunks_) delete[] c.load(std::memory_order_relaxed);
}

StringTable& StringTable::instance() {
  static StringTable* table = new StringTable();  // never destroyed: read at exit
  return *table;
}

const char* StringTable::store(std::string_view s) {
  const std::size_t need = s.size() + 1;
  if (need > block_left_) {
    const std::size_t size = need > kArenaBlock ? need : kArenaBlock;
    block_ = new (std::nothrow) char[size];
    if (block_ == nullptr) {
      block_left_ = 0;
      return nullptr;
    }
    blocks_.push_back(block_);
    block_left_ = size;
  }
  char* out = block_;
  std::memcpy(out, s.data(), s.size());
  out[s.size()] = '\0';
  block_ += need;
  block_left_ -= need;
  used_bytes_ += need;
  return out;
}

std::uint32_t StringTable::intern(std::string_view s) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = ids_.find(s); it != ids_.end()) return it->second;
  const std::uint32_t id = count_.load(std::memory_order_relaxed);
  if (id >= kChunkEntries * kMaxChunks || used_bytes_ + s.size() + 1 > max_bytes_) return kFull;
  const std::size_t chunk = id / kChunkEntries;
  Entry* entries = chunks_[chunk].load(std::memory_order_relaxed);
  if (entries == nullptr) {
    entries = new (std::nothrow) Entry[kChunkEntries];
    if (entries == nullptr) return kFull;
    chunks_[chunk].store(entries, std::memory_order_release);
  }
  const char* data = store(s);
  if (data == nullptr) return kFull;
  entries[id % kChunkEntries] = Entry{data, static_cast<std::uint32_t>(s.size())};
  ids_.emplace(std::string_view(data, s.size()), id);
  count_.store(id + 1, std::memory_order_release);
  return id;
}

std::string_view StringTable::get(std::uint32_t id) const noexcept {
  if (id >= count_.load(std::memory_order_acquire)) return {};
  const Entry* entries = chunks_[id / kChunkEntries].load(std::memory_order_acquire);
  if (entries == nullptr) return {};
  const Entry& e = entries[id % kChunkEntries];
  return {e.data, e.size};
}

void StringTable::reset_lock_after_fork() noexcept { new (&mu_) std::mutex(); }

}  // namespace pm2lat::shim
