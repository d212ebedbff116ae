#include "fake_device_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <iterator>
#include <map>
#include <mutex>

namespace fake_cuda {
namespace {

struct Allocation {
  std::size_t bytes = 0;   // as asked
  std::size_t mapped = 0;  // whole pages, both mappings
  void* host = nullptr;    // the host-visible mapping the fake copies through
};

struct Registry {
  std::mutex mu;
  std::map<CUdeviceptr, Allocation> by_base;
};

Registry& registry() {
  static auto* r = new Registry();  // never destroyed: copies may run during exit
  return *r;
}

std::size_t whole_pages(std::size_t bytes) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

// The allocation holding `ptr`, or end(). Caller holds the lock.
std::map<CUdeviceptr, Allocation>::iterator holding(Registry& r, CUdeviceptr ptr) {
  auto it = r.by_base.upper_bound(ptr);
  if (it == r.by_base.begin()) return r.by_base.end();
  --it;
  return ptr - it->first < it->second.bytes ? it : r.by_base.end();
}

}  // namespace

CUdeviceptr device_alloc(std::size_t bytes) {
  const std::size_t mapped = whole_pages(bytes);
  void* device =
      mmap(nullptr, mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (device == MAP_FAILED) return 0;
  void* host = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (host == MAP_FAILED) {
    munmap(device, mapped);
    return 0;
  }
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const auto base = reinterpret_cast<CUdeviceptr>(device);
  r.by_base[base] = Allocation{bytes, mapped, host};
  return base;
}

bool device_free(CUdeviceptr ptr) {
  Registry& r = registry();
  Allocation a;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    const auto it = r.by_base.find(ptr);
    if (it == r.by_base.end()) return false;
    a = it->second;
    r.by_base.erase(it);
  }
  munmap(reinterpret_cast<void*>(ptr), a.mapped);
  munmap(a.host, a.mapped);
  return true;
}

void* device_bytes(CUdeviceptr ptr, std::size_t bytes) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const auto it = holding(r, ptr);
  if (it == r.by_base.end()) return nullptr;
  const std::size_t offset = ptr - it->first;
  if (bytes > it->second.bytes - offset) return nullptr;
  return static_cast<char*>(it->second.host) + offset;
}

bool is_device_pointer(CUdeviceptr ptr) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return holding(r, ptr) != r.by_base.end();
}

}  // namespace fake_cuda
