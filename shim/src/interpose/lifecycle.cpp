// Entry points of the library's life cycle. Loading libpm2lat.so does nothing observable:
// processes that never initialise CUDA (compilers, shells, data-loader workers) run exactly
// as without it. Everything starts at the first successful cuInit (see driver_hooks.cpp),
// or at InitializeInjection when loaded through CUDA_INJECTION64_PATH instead of LD_PRELOAD.
#include "interpose/export.h"
#include "runtime.h"

extern "C" __attribute__((visibility("hidden"))) void* pm2lat_resolve_real_dlsym();

namespace {

// Only resolves glibc's dlsym for the dlsym entry point and notes the pid: no CUDA, no
// files, no threads.
__attribute__((constructor)) void on_load() {
  pm2lat_resolve_real_dlsym();
  pm2lat::shim::Runtime::note_loaded();
}

}  // namespace

// The driver calls this inside cuInit when CUDA_INJECTION64_PATH names this library: the
// CUPTI-based modes then work without any interposition.
extern "C" PM2LAT_EXPORT int InitializeInjection(void) {
  pm2lat::shim::Runtime::instance().on_cuda_initialised();
  return 1;
}
