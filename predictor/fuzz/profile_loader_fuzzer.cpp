// libFuzzer target: any text as a profile either parses or throws ProfileError; a profile
// that parses must serialise and parse again to the same content, and must be usable by a
// Predictor (index building must not crash on any accepted profile).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "pm2lat/predictor.h"
#include "pm2lat/profile_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  pm2lat::Profile p;
  try {
    p = pm2lat::parse_profile(text, "fuzz.json");
  } catch (const pm2lat::ProfileError&) {
    return 0;
  }
  const pm2lat::Profile q = pm2lat::parse_profile(pm2lat::serialize_profile(p), "again.json");
  if (q.gemm_points.size() != p.gemm_points.size() ||
      q.gemm_configs.size() != p.gemm_configs.size())
    std::abort();
  pm2lat::DeviceSpec spec;
  spec.name = p.device;
  spec.sm_count = 40;
  spec.mem_bw_gbps = 320;
  spec.fp32_tflops = 8;
  pm2lat::DeviceCatalogue cat({spec});
  try {
    pm2lat::Predictor predictor(std::move(cat), {p});
    (void)predictor.add_target(p.device);
  } catch (const pm2lat::ProfileError&) {}
  return 0;
}
