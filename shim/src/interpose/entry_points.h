// Resolve-then-wrap for driver entry points handed out by cuGetProcAddress and dlsym: the
// real resolver is always asked first with the caller's exact symbol, version and flags;
// the pointer it returns is then identified by comparing it with the driver's exported
// variants (cuLaunchKernel, cuLaunchKernel_ptsz, ...), which fixes its ABI without ever
// guessing a _v2/_v3 suffix, and swapped for our wrapper bound to that exact pointer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

// Resolve-then-wrap: our wrapper when `real` is an entry point we hook, else `real`.
// `symbol`/`version` (when known) only serve the report of pointers we could not identify.
void* wrap_entry_point(void* real, const char* symbol, int version) noexcept;

// Symbols a resolver returned that we would have wanted to wrap but could not identify
// ("cuLaunchKernel@12000"), reported in the summary.
std::vector<std::string> unwrapped_entry_points();

}  // namespace pm2lat::shim
