// A table of calls of one nominal GEMM configuration (whichever kernels a library runs, none
// named, as AIConfigurator's tables time them) for tests that need a calibrated GPU whose
// every point follows the configuration's own wave model, or a fixed multiple of it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pm2lat/device_spec.h"
#include "pm2lat/dtype.h"
#include "pm2lat/models/gemm_wave_model.h"
#include "pm2lat/profile.h"

namespace pm2lat {

// The configuration: 64 x 64 x 64 tiles, as the AIConfigurator import's nominal class.
inline GemmConfigFit nominal_gemm_fit(DType dtype) {
  GemmConfigFit c;
  c.config = "library_default_" + std::string(to_string(dtype)) + "_gemm";
  c.dtype = dtype;
  c.tile_m = c.tile_n = c.tile_k = 64;
  c.c0 = 3;
  c.c_block_k = 0.02;
  c.c_wave = 1;
  c.c_mem = 1.1;
  c.nominal_launch = true;
  return c;
}

struct NominalGemmCall {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
};

// `calls` timed on `spec` (nn.Linear, launched as 64 x 64 output tiles), each at `residual`
// times what the fit says: the residual the fit then carries to its calibrated neighbours.
inline Profile nominal_gemm_table(const DeviceSpec& spec, DType dtype,
                                  const std::vector<NominalGemmCall>& calls,
                                  double residual = 1.0) {
  Profile p;
  p.device = spec.name;
  const GemmConfigFit c = nominal_gemm_fit(dtype);
  p.gemm_configs.push_back(c);
  for (const NominalGemmCall& call : calls) {
    GemmPoint pt;
    pt.op = "linear";
    pt.config = 0;
    pt.m = call.m;
    pt.n = call.n;
    pt.k = call.k;
    pt.grid = {static_cast<std::uint32_t>((call.n + 63) / 64),
               static_cast<std::uint32_t>((call.m + 63) / 64), 1};
    const GemmShape s{.m = call.m, .n = call.n, .k = call.k};
    pt.us = residual *
            gemm_wave_kernel_us(
                c, spec, gemm_work(c, s, blocks_from_grid(pt.grid, 1), 1, dtype_bytes(dtype)));
    p.gemm_points.push_back(pt);
  }
  return p;
}

}  // namespace pm2lat
