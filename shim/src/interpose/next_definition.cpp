#include "interpose/next_definition.h"

#include <dlfcn.h>

#include "interpose/real_dl.h"

namespace pm2lat::shim {

namespace {

// The definition the loader would bind `name` to from the object at `anchor`: that object's
// local scope (itself, then its dependencies). Null when it has none, or only ours.
void* lookup_in_scope(const char* name, const void* anchor) noexcept {
  Dl_info info{};
  if (dladdr(anchor, &info) == 0 || info.dli_fname == nullptr) return nullptr;
  void* handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  void* p = real_dlsym(handle, name);
  dlclose(handle);
  return (p == nullptr || is_own_address(p)) ? nullptr : p;
}

}  // namespace

const void* object_of(const void* address) noexcept {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
  // Lock-free (glibc 2.35): no loader lock on the hot path of a library call.
  dl_find_object found{};
  if (_dl_find_object(const_cast<void*>(address), &found) == 0) return found.dlfo_map_start;
  return nullptr;
#else
  Dl_info info{};
  return dladdr(address, &info) != 0 ? info.dli_fbase : nullptr;
#endif
}

void* NextDefinition::lookup(const char* name, const void* anchor) noexcept {
  const void* object = object_of(anchor);
  if (object != nullptr) {
    for (Entry& e : entries_) {
      const void* o = e.object.load(std::memory_order_acquire);
      if (o == nullptr) break;
      if (o == object) return e.definition.load(std::memory_order_relaxed);
    }
  }
  void* p = lookup_in_scope(name, anchor);
  if (p == nullptr) p = find_next_definition(name);
  if (p == nullptr || object == nullptr) return p;
  // Publish: claim a free entry, fill it, then show it under its key. A full cache, or an
  // entry lost to a racing thread, only means this lookup is not cached.
  static const char kClaimed = 0;
  for (Entry& e : entries_) {
    const void* expected = nullptr;
    if (!e.object.compare_exchange_strong(expected, &kClaimed, std::memory_order_acq_rel)) {
      if (expected == object) break;
      continue;
    }
    e.definition.store(p, std::memory_order_relaxed);
    e.object.store(object, std::memory_order_release);
    break;
  }
  return p;
}

}  // namespace pm2lat::shim
