// dlsym interposer. cudart, cuBLAS, cuDNN and Triton all reach libcuda with
// dlopen("libcuda.so.1") + dlsym(handle, ...), a lookup LD_PRELOAD symbol interposition does
// not affect; so a handle-specific lookup of a driver entry point we hook is answered with
// our wrapper of exactly the pointer the real dlsym found, and of a runtime or library
// function we interpose with our interposer.
//
// RTLD_NEXT and RTLD_DEFAULT are both resolved relative to the caller: glibc finds it from the
// return address (RTLD_NEXT: after the caller; RTLD_DEFAULT: the caller's scope, which for a
// library loaded RTLD_LOCAL includes its own dependencies). For both handles the entry point
// is a tail jump (x86-64 assembly below) that leaves the caller's return address in place, so
// other preloaded interposers, and modules that find their own dependencies' symbols with
// RTLD_DEFAULT, get the answers they get without libpm2lat.so. RTLD_DEFAULT finds our exported
// interposers first anyway: there is nothing to substitute.
//
// dlvsym is deliberately not interposed: it is the one loader entry point through which the
// shim reaches glibc's own dlsym without GLIBC_PRIVATE symbols, and CUDA libraries do not use
// it to find driver entry points (libcuda's symbols carry no versions).
#include <dlfcn.h>

#include <cctype>
#include <cstring>

#include "interpose/entry_points.h"
#include "interpose/export.h"
#include "interpose/real_dl.h"

namespace {

// Runtime and library functions libpm2lat.so interposes by name. A handle-specific dlsym of
// one returns our interposer, provided it forwards to the very function the handle holds.
const char* const kInterposedNames[] = {
    "cudaLaunchKernel",
    "cudaLaunchKernel_ptsz",
    "cudaLaunchKernelExC",
    "cudaLaunchKernelExC_ptsz",
    "__cudaLaunchKernel",
    "__cudaLaunchKernel_ptsz",
    "cublasLtMatmul",
    "cublasGemmEx",
    "cublasGemmEx_64",
    "cublasGemmStridedBatchedEx",
    "cublasGemmStridedBatchedEx_64",
    "cublasGemmBatchedEx",
    "cublasGemmBatchedEx_64",
    "cublasSgemm_v2",
    "cublasHgemm",
    "cublasSgemmStridedBatched",
    "cudnnConvolutionForward",
    "cudnnBackendExecute",
    "cudnnBackendDestroyDescriptor",
    "cuptiActivityRegisterCallbacks",
    "cuptiActivityEnable",
    "cuptiActivityDisable",
};

void* own_definition(const char* name) noexcept {
  static void* self = [] {
    Dl_info info{};
    return dladdr(reinterpret_cast<void*>(&own_definition), &info)
               ? dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)
               : nullptr;
  }();
  return self ? pm2lat::shim::real_dlsym(self, name) : nullptr;
}

void* substitute(const char* name, void* found) noexcept {
  using namespace pm2lat::shim;
  if (name[0] != 'c' && name[0] != '_') return found;
  if (name[0] == 'c' && name[1] == 'u' && std::isupper(static_cast<unsigned char>(name[2]))) {
    // A driver entry point (cuLaunchKernel, cuGetProcAddress_v2, ...; library functions are
    // cublas*, cudnn*, cuda*, cupti*): resolve-then-wrap on the pointer found.
    return wrap_entry_point(found, name, 0);
  }
  for (const char* n : kInterposedNames) {
    if (std::strcmp(n, name) != 0) continue;
    void* ours = own_definition(name);
    if (ours == nullptr || ours == found) return found;
    // Only when our interposer would forward to this very function.
    return find_next_definition(name) == found ? ours : found;
  }
  return found;
}

}  // namespace

// Not instrumented up to the point where it may substitute: sanitizer runtimes call dlsym
// before they are initialised (see real_dl.cpp).
extern "C"
    __attribute__((visibility("hidden"), no_sanitize("address", "undefined", "thread"))) void*
    pm2lat_dlsym_impl(void* handle, const char* name) {
  void* found = pm2lat::shim::real_dlsym(handle, name);
  // RTLD_DEFAULT already finds our exported interposers first.
  if (found == nullptr || name == nullptr || handle == RTLD_DEFAULT) return found;
  if (name[0] != 'c' && name[0] != '_') return found;  // no substitution possible
  return substitute(name, found);
}

#if defined(__x86_64__)
// dlsym(handle, name): RTLD_NEXT (-1) and RTLD_DEFAULT (0) tail-jump to glibc's dlsym, so the
// return address it sees is the caller's; every other handle goes to pm2lat_dlsym_impl.
__asm__(
    ".text\n"
    ".globl dlsym\n"
    ".type dlsym, @function\n"
    "dlsym:\n"
    "  .cfi_startproc\n"
    "  cmpq $-1, %rdi\n"
    "  je 4f\n"
    "  testq %rdi, %rdi\n"
    "  jne 1f\n"
    "4:\n"
    "  movq pm2lat_real_dlsym_ptr(%rip), %rax\n"
    "  testq %rax, %rax\n"
    "  jz 2f\n"
    "  jmp *%rax\n"
    "2:\n"
    "  pushq %rdi\n"
    "  .cfi_adjust_cfa_offset 8\n"
    "  pushq %rsi\n"
    "  .cfi_adjust_cfa_offset 8\n"
    "  subq $8, %rsp\n"
    "  .cfi_adjust_cfa_offset 8\n"
    "  call pm2lat_resolve_real_dlsym\n"
    "  addq $8, %rsp\n"
    "  .cfi_adjust_cfa_offset -8\n"
    "  popq %rsi\n"
    "  .cfi_adjust_cfa_offset -8\n"
    "  popq %rdi\n"
    "  .cfi_adjust_cfa_offset -8\n"
    "  testq %rax, %rax\n"
    "  jz 3f\n"
    "  jmp *%rax\n"
    "3:\n"
    "  ret\n"
    "1:\n"
    "  jmp pm2lat_dlsym_impl\n"
    "  .cfi_endproc\n"
    ".size dlsym, .-dlsym\n");
#else
// Elsewhere RTLD_NEXT and RTLD_DEFAULT are resolved relative to libpm2lat.so itself (the
// position of the preloaded library, right after the executable, in the global scope), which
// is what most callers mean; a module loaded RTLD_LOCAL does not find its own dependencies.
extern "C" PM2LAT_EXPORT void* dlsym(void* handle, const char* name) noexcept {
  if (handle == RTLD_NEXT || handle == RTLD_DEFAULT) return pm2lat::shim::real_dlsym(handle, name);
  return pm2lat_dlsym_impl(handle, name);
}
#endif
