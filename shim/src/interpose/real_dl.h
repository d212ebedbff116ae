// Access to the dynamic loader that bypasses the shim's own dlsym interposer, and lookup of
// the definitions the shim's exported interposers stand in front of.
#pragma once

namespace pm2lat::shim {

// glibc's dlsym, never ours.
void* real_dlsym(void* handle, const char* name) noexcept;

// The next definition of `name` after libpm2lat.so: RTLD_NEXT first, then every loaded
// object, because a library opened with RTLD_LOCAL (as Python extension modules load theirs)
// is not in the global scope but still calls our interposer through its PLT. Null if none.
void* find_next_definition(const char* name) noexcept;

// True if `addr` lies inside libpm2lat.so.
bool is_own_address(const void* addr) noexcept;

// Handle of the already-loaded libcuda.so.1, or null. Never loads it.
void* loaded_driver_handle() noexcept;

}  // namespace pm2lat::shim
