// CUPTI's activity registration, for the program's own CUPTI client (torch.profiler: kineto
// calls these through libtorch's PLT). CUPTI keeps one pair of buffer callbacks per process,
// so a profiler started mid-run would otherwise take every record from the runtime and drop
// ours as unknown buffers; its disabling kinds at stop would end our measurements. Here the
// runtime shares: see CuptiActivity. Our own calls go to CUPTI directly (CuptiApi), never here.
#include <cupti.h>

#include "cupti/cupti_activity_collector.h"
#include "interpose/export.h"
#include "interpose/library_context.h"

using namespace pm2lat::shim;

extern "C" {

PM2LAT_EXPORT CUptiResult
cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                               CUpti_BuffersCallbackCompleteFunc funcBufferCompleted) {
  static NextDefinition next;
  auto real = next.get<decltype(&cuptiActivityRegisterCallbacks)>("cuptiActivityRegisterCallbacks",
                                                                  __builtin_return_address(0));
  return CuptiActivity::instance().client_registers_callbacks(funcBufferRequested,
                                                              funcBufferCompleted, real);
}

PM2LAT_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  static NextDefinition next;
  auto real =
      next.get<decltype(&cuptiActivityEnable)>("cuptiActivityEnable", __builtin_return_address(0));
  return CuptiActivity::instance().client_enables(kind, real);
}

PM2LAT_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
  static NextDefinition next;
  auto real = next.get<decltype(&cuptiActivityDisable)>("cuptiActivityDisable",
                                                        __builtin_return_address(0));
  return CuptiActivity::instance().client_disables(kind, real);
}

}  // extern "C"
