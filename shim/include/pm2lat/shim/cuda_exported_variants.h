// Declarations of the driver entry points libcuda.so.1 exports under names cuda.h only
// declares in other build modes (per-thread default stream `_ptsz` variants, the pre-12.0
// four-argument cuGetProcAddress). Each is declared from its cudaTypedefs.h PFN type, so
// any definition of these names (the shim's interposers, the test fake driver) is checked
// by the compiler against NVIDIA's own signature.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>

#include <type_traits>

// The macros' arguments are a declarator's name and a type: parentheses would not compile.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define PM2LAT_DECLARE_DRIVER_VARIANT(name, pfn) extern "C" std::remove_pointer_t<pfn> name;

PM2LAT_DECLARE_DRIVER_VARIANT(cuLaunchKernel_ptsz, PFN_cuLaunchKernel_v7000_ptsz)
PM2LAT_DECLARE_DRIVER_VARIANT(cuLaunchKernelEx_ptsz, PFN_cuLaunchKernelEx_v11060_ptsz)
PM2LAT_DECLARE_DRIVER_VARIANT(cuLaunchCooperativeKernel_ptsz,
                              PFN_cuLaunchCooperativeKernel_v9000_ptsz)
PM2LAT_DECLARE_DRIVER_VARIANT(cuGraphLaunch_ptsz, PFN_cuGraphLaunch_v10000_ptsz)
PM2LAT_DECLARE_DRIVER_VARIANT(cuGraphInstantiateWithParams_ptsz,
                              PFN_cuGraphInstantiateWithParams_v12000_ptsz)
PM2LAT_DECLARE_DRIVER_VARIANT(cuStreamBeginCapture_v2_ptsz, PFN_cuStreamBeginCapture_v10010_ptsz)
PM2LAT_DECLARE_DRIVER_VARIANT(cuStreamBeginCaptureToGraph_ptsz,
                              PFN_cuStreamBeginCaptureToGraph_v12030_ptsz)
PM2LAT_DECLARE_DRIVER_VARIANT(cuStreamEndCapture_ptsz, PFN_cuStreamEndCapture_v10000_ptsz)
PM2LAT_DECLARE_DRIVER_VARIANT(cuStreamIsCapturing_ptsz, PFN_cuStreamIsCapturing_v10000_ptsz)
PM2LAT_DECLARE_DRIVER_VARIANT(cuStreamGetCaptureInfo_v3_ptsz,
                              PFN_cuStreamGetCaptureInfo_v12030_ptsz)
PM2LAT_DECLARE_DRIVER_VARIANT(cuStreamGetCaptureInfo_v2, PFN_cuStreamGetCaptureInfo_v11030)
PM2LAT_DECLARE_DRIVER_VARIANT(cuStreamGetCaptureInfo_v2_ptsz,
                              PFN_cuStreamGetCaptureInfo_v11030_ptsz)
PM2LAT_DECLARE_DRIVER_VARIANT(cuEventRecord_ptsz, PFN_cuEventRecord_v7000_ptsz)
PM2LAT_DECLARE_DRIVER_VARIANT(cuStreamGetId_ptsz, PFN_cuStreamGetId_v12000_ptsz)

// cuda.h maps cuGetProcAddress to cuGetProcAddress_v2 by macro; the four-argument CUDA 11.3
// entry point keeps the plain name in the driver's symbol table. This declares a function
// with a local C++ name whose symbol is "cuGetProcAddress"; define it under the local name.
#define PM2LAT_DECLARE_LEGACY_GET_PROC_ADDRESS(local_name)                          \
  extern "C" CUresult local_name(const char* symbol, void** pfn, int cudaVersion,   \
                                 cuuint64_t flags) __asm__("cuGetProcAddress");     \
  static_assert(std::is_same_v<decltype(&local_name), PFN_cuGetProcAddress_v11030>, \
                "legacy cuGetProcAddress must match cudaTypedefs.h");

// cuda.h maps cuEventElapsedTime to cuEventElapsedTime_v2 (CUDA 12.8) by macro; drivers before
// 12.8 have only the original, under the plain name.
#define PM2LAT_DECLARE_EVENT_ELAPSED_TIME_V1(local_name)                             \
  extern "C" CUresult local_name(float* pMilliseconds, CUevent hStart,               \
                                 CUevent hEnd) __asm__("cuEventElapsedTime");        \
  static_assert(std::is_same_v<decltype(&local_name), PFN_cuEventElapsedTime_v2000>, \
                "cuEventElapsedTime must match cudaTypedefs.h");
// NOLINTEND(bugprone-macro-parentheses)
