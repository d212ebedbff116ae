// The function an interposer stands in front of, as its caller would have bound it. A process
// may hold two copies of one library (a cu12 and a cu13 cuBLAS, each the dependency of its own
// extension module loaded RTLD_LOCAL): one process-wide pointer per name would send the second
// module's calls to the first copy. So the definition is looked up in the caller's own scope
// (the object the return address lies in, and its dependencies, as the loader binds it:
// dladdr -> dlopen(RTLD_NOLOAD) -> dlsym), falling back to the next definition after
// libpm2lat.so (the executable's callers, objects that do not depend on the library), and
// cached per (caller object, name). The same lookup anchored at a real function finds that
// function's companions in its own copy (cublasGetMathMode next to the cublasGemmEx called).
#pragma once

#include <atomic>

namespace pm2lat::shim {

class NextDefinition {
 public:
  // The definition of `name` as seen from the object containing `anchor` (a return address,
  // or a function of the library). Null if none. The lock-free cache holds kObjects objects;
  // beyond, lookups are made every time (slower, still right).
  template <typename Fn>
  Fn get(const char* name, const void* anchor) noexcept {
    return reinterpret_cast<Fn>(lookup(name, anchor));
  }

 private:
  static constexpr int kObjects = 8;
  void* lookup(const char* name, const void* anchor) noexcept;

  struct Entry {
    std::atomic<const void*> object{nullptr};  // the anchor object's start, when filled
    std::atomic<void*> definition{nullptr};
  };
  Entry entries_[kObjects];
};

// The start of the loaded object containing `address` (null if none): the cache key.
const void* object_of(const void* address) noexcept;

}  // namespace pm2lat::shim
