#include "real_dl.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

namespace pm2lat::shim {

namespace {

using DlsymFn = void* (*)(void*, const char*);

// glibc's dlsym is found with dlvsym, which the shim deliberately does not interpose (see
// dl_interposer.cpp): it is the one loader entry point left that reaches glibc directly.
DlsymFn resolve_libc_dlsym() noexcept {
  for (const char* version : {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"}) {
    if (void* p = dlvsym(RTLD_NEXT, "dlsym", version)) return reinterpret_cast<DlsymFn>(p);
  }
  return nullptr;
}

std::atomic<DlsymFn> g_libc_dlsym{nullptr};

int marker;  // an address inside libpm2lat.so

}  // namespace

// Shared with the assembly dlsym entry point, which tail-jumps to it for RTLD_NEXT.
extern "C" {
__attribute__((visibility("hidden"))) void* pm2lat_real_dlsym_ptr = nullptr;
}

extern "C" __attribute__((visibility("hidden"))) void* pm2lat_resolve_real_dlsym() {
  DlsymFn fn = g_libc_dlsym.load(std::memory_order_acquire);
  if (fn == nullptr) {
    fn = resolve_libc_dlsym();
    g_libc_dlsym.store(fn, std::memory_order_release);
    __atomic_store_n(&pm2lat_real_dlsym_ptr, reinterpret_cast<void*>(fn), __ATOMIC_RELEASE);
  }
  return reinterpret_cast<void*>(fn);
}

void* real_dlsym(void* handle, const char* name) noexcept {
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
