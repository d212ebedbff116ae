#include "interpose/real_dl.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

// Sanitizer runtimes look their interceptors up with dlsym(RTLD_NEXT, ...) while they start,
// and our dlsym is in the global scope: the code on that path must run before the sanitizer
// is initialised, so it is not instrumented and uses no out-of-line library code.
#define PM2LAT_UNINSTRUMENTED \
  __attribute__((no_sanitize("address", "undefined", "thread"), noinline))

namespace pm2lat::shim {

namespace {

using DlsymFn = void* (*)(void*, const char*);

// glibc's dlsym is found with dlvsym, which the shim deliberately does not interpose (see
// dl_interposer.cpp): it is the one loader entry point left that reaches glibc directly.
PM2LAT_UNINSTRUMENTED DlsymFn resolve_libc_dlsym() noexcept {
  if (void* p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34")) return reinterpret_cast<DlsymFn>(p);
  if (void* p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5")) return reinterpret_cast<DlsymFn>(p);
  return reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.17"));
}

int marker;  // an address inside libpm2lat.so

}  // namespace

// Shared with the assembly dlsym entry point, which tail-jumps to it for RTLD_NEXT.
extern "C" {
__attribute__((visibility("hidden"))) void* pm2lat_real_dlsym_ptr = nullptr;
}

extern "C" __attribute__((visibility("hidden"))) PM2LAT_UNINSTRUMENTED void*
pm2lat_resolve_real_dlsym() {
  void* fn = __atomic_load_n(&pm2lat_real_dlsym_ptr, __ATOMIC_ACQUIRE);
  if (fn == nullptr) {
    fn = reinterpret_cast<void*>(resolve_libc_dlsym());
    __atomic_store_n(&pm2lat_real_dlsym_ptr, fn, __ATOMIC_RELEASE);
  }
  return fn;
}

PM2LAT_UNINSTRUMENTED void* real_dlsym(void* handle, const char* name) noexcept {
  auto fn = reinterpret_cast<DlsymFn>(pm2lat_resolve_real_dlsym());
  return fn ? fn(handle, name) : nullptr;
}

bool is_own_address(const void* addr) noexcept {
  Dl_info self{}, other{};
  if (dladdr(&marker, &self) == 0 || dladdr(addr, &other) == 0) return false;
  return self.dli_fbase == other.dli_fbase;
}

void* find_next_definition(const char* name) noexcept {
  if (void* p = real_dlsym(RTLD_NEXT, name); p != nullptr && !is_own_address(p)) return p;
  // Collect object names first: dlopen must not run under dl_iterate_phdr's lock.
  std::vector<std::string> objects;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0') {
          static_cast<std::vector<std::string>*>(data)->emplace_back(info->dlpi_name);
        }
        return 0;
      },
      &objects);
  for (const std::string& object : objects) {
    void* h = dlopen(object.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (h == nullptr) continue;
    void* p = real_dlsym(h, name);
    dlclose(h);
    if (p != nullptr && !is_own_address(p)) return p;
  }
  return nullptr;
}

void* loaded_driver_handle() noexcept {
  static std::atomic<void*> cached{nullptr};
  void* h = cached.load(std::memory_order_acquire);
  if (h != nullptr) return h;
  h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (h != nullptr) cached.store(h, std::memory_order_release);
  return h;
}

}  // namespace pm2lat::shim
