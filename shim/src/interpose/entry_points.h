// Resolve-then-wrap for driver entry points handed out by cuGetProcAddress and dlsym: the
// real resolver is always asked first with the caller's exact symbol, version and flags;
// the pointer it returns is then identified by comparing it with the driver's exported
// variants (cuLaunchKernel, cuLaunchKernel_ptsz, ...), which fixes its ABI without ever
// guessing a _v2/_v3 suffix, or, when it is not an exported symbol, by the request itself (a
// pointer inside the driver answering "cuLaunchKernel" with the per-thread flag at 12000 is
// cuLaunchKernel_ptsz's ABI); it is then swapped for our wrapper.
#pragma once

#include <cstdint>

namespace pm2lat::shim {

enum class EntryPoint : std::uint8_t {
  kInit,
  kGetProcAddress,    // the CUDA 11.3 four-argument resolver
  kGetProcAddressV2,  // cuGetProcAddress_v2
  kLaunchKernel,
  kLaunchKernelPtsz,
  kLaunchKernelEx,
  kLaunchKernelExPtsz,
  kLaunchCooperativeKernel,
  kLaunchCooperativeKernelPtsz,
  kGraphLaunch,
  kGraphLaunchPtsz,
  kGraphInstantiateWithFlags,
  kGraphInstantiateWithParams,
  kGraphInstantiateWithParamsPtsz,
  kGraphExecDestroy,
  kGraphDestroy,
  kStreamBeginCaptureV2,
  kStreamBeginCaptureV2Ptsz,
  kStreamBeginCaptureToGraph,
  kStreamBeginCaptureToGraphPtsz,
  kStreamEndCapture,
  kStreamEndCapturePtsz,
  kModuleUnload,
  kLibraryUnload,
  kCount,
};

// The driver's exported name of an entry point, e.g. "cuLaunchKernel_ptsz".
const char* exported_name(EntryPoint e) noexcept;
// Our wrapper with the entry point's exact ABI.
void* wrapper_of(EntryPoint e) noexcept;
// The real function the wrapper of `e` calls (null until it has been wrapped once).
void* real_of(EntryPoint e) noexcept;
// Records `real` as the function behind `e` (first one wins).
void set_real(EntryPoint e, void* real) noexcept;

// Which entry point `real` is, comparing with the exported variants of the library that
// contains it. False for pointers we do not wrap.
bool identify_entry_point(void* real, EntryPoint* out) noexcept;

// Which entry point a cuGetProcAddress request (base name, version, flags) selects; false for
// entry points we do not wrap.
bool entry_point_for_request(const char* symbol, int version, std::uint64_t flags,
                             EntryPoint* out) noexcept;

// Resolve-then-wrap: our wrapper when `real` is an entry point we hook, else `real`. A pointer
// that is not one of the driver's exported symbols is still recognised when it lies inside
// the driver and answers a cuGetProcAddress request (`symbol`, `version`, `flags`) for an
// entry point we hook; `version` 0 means the pointer came from dlsym by exported name.
void* wrap_entry_point(void* real, const char* symbol, int version,
                       std::uint64_t flags = 0) noexcept;

}  // namespace pm2lat::shim
