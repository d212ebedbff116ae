// The "scaled_gemm" section of a profile (low-precision GEMM backends measured as calls):
//
//   "scaled_gemm": {"version": 1,
//                   "configs": [{"config", "dtype", "scaling", "tile_m", "tile_n", "tile_k",
//                                "blocks_per_sm", "c0", "c_wave_k", "c_block_k", "c_wave",
//                                "c_mem", "quant_c0", "quant_c_byte", "host_us",
//                                "host_unaligned_us", "points", "fit_mape_pct"}, ...],
//                   "points": {"config": [...], "m": [...], "n": [...], "k": [...],
//                              "us": [...]}}
//
// Points are stored column-wise like the other sections. Errors name the exact field
// ("scaled_gemm.configs[2].scaling").
#pragma once

#include <vector>

#include "pm2lat/profile.h"
#include "profile/json_fields.h"

namespace pm2lat::scaled_gemm_json {

// Reads the section into `profile` (scaled_gemm_fits and scaled_gemm_points).
void read_section(const json_fields::Reader& section, Profile& profile);

// The section of `profile`; call only when it has scaled GEMM fits.
json_fields::json section_json(const Profile& profile);

}  // namespace pm2lat::scaled_gemm_json
