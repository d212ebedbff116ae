#include "driver/cublaslt_api.h"

#include <dlfcn.h>
#include <fmt/core.h>

#include <type_traits>

#include "pm2lat/calibrate/run/measurement_backend.h"

namespace pm2lat::calibrate::run::driver {

CublasLtApi CublasLtApi::load(const std::string& library) {
  CublasLtApi api;
  api.library = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (api.library == nullptr) {
    const char* err = dlerror();
    throw BackendError(
        fmt::format("cannot load cuBLASLt ({}): {}", library, err ? err : "unknown error"));
  }
  std::string missing;
  auto need = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(api.library, name));
    if (fn == nullptr) missing += fmt::format(" {}", name);
  };
  need(api.create, "cublasLtCreate");
  need(api.destroy, "cublasLtDestroy");
  need(api.get_version, "cublasLtGetVersion");
  need(api.desc_create, "cublasLtMatmulDescCreate");
  need(api.desc_destroy, "cublasLtMatmulDescDestroy");
  need(api.desc_set, "cublasLtMatmulDescSetAttribute");
  need(api.layout_create, "cublasLtMatrixLayoutCreate");
  need(api.layout_destroy, "cublasLtMatrixLayoutDestroy");
  need(api.layout_set, "cublasLtMatrixLayoutSetAttribute");
  need(api.pref_create, "cublasLtMatmulPreferenceCreate");
  need(api.pref_destroy, "cublasLtMatmulPreferenceDestroy");
  need(api.pref_set, "cublasLtMatmulPreferenceSetAttribute");
  need(api.get_heuristic, "cublasLtMatmulAlgoGetHeuristic");
  need(api.algo_check, "cublasLtMatmulAlgoCheck");
  need(api.algo_config_get, "cublasLtMatmulAlgoConfigGetAttribute");
  need(api.matmul, "cublasLtMatmul");
  if (!missing.empty()) throw BackendError(fmt::format("{} lacks:{}", library, missing));
  return api;
}

}  // namespace pm2lat::calibrate::run::driver
