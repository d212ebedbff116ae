// The published specification of one GPU: what spec-scaling and the roofline use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pm2lat/dtype.h"

namespace pm2lat {

struct DeviceSpec {
  std::string name;                  // canonical catalogue name, e.g. "H100-SXM"
  std::vector<std::string> aliases;  // other spellings: "H100", "NVIDIA H100 80GB HBM3"
  std::string arch;                  // "Hopper", "Ampere", ...
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  double boost_clock_mhz = 0;
  double mem_bw_gbps = 0;  // peak DRAM bandwidth, GB/s
  double mem_gb = 0;
  double l2_mb = 0;
  std::uint32_t smem_per_sm_bytes = 0;
  std::uint32_t max_threads_per_sm = 0;
  std::uint32_t regs_per_sm = 0;
  // Peak dense throughput in TFLOP/s (TOP/s for int8); 0 = not available on this GPU.
  double fp32_tflops = 0;  // SIMT FFMA
  double fp64_tflops = 0;
  double tf32_tflops = 0;  // tensor core
  double fp16_tflops = 0;
  double bf16_tflops = 0;
  double fp8_tflops = 0;
  double fp4_tflops = 0;
  double int8_tops = 0;
  double nvlink_gbps = 0;  // per-GPU NVLink bandwidth (one direction), 0 = none
  double pcie_gbps = 0;
  // The CPU packaged with the GPU in a superchip ("Grace" for GH200, GB200, GB300); empty for
  // boards in a separate (x86) host. It runs the host side of every eager framework call.
  std::string host_cpu;
  // The compute slices Multi-Instance GPU divides it into (mig_partition.h); 0 = no MIG.
  int mig_compute_slices = 0;
  // A MIG partition (mig_partition.h): the whole GPU it is a share of, an entry of the same
  // catalogue. Its calibrations are the partition's: the same SMs, fewer of them.
  const DeviceSpec* partition_of = nullptr;

  // Peak throughput for GEMMs whose math runs in `compute` (TFLOP/s). Falls back to the
  // closest available path (e.g. bf16 on a GPU without bf16 tensor cores -> fp32 SIMT).
  double peak_tflops(DType compute) const noexcept;
  // Same, in GFLOP/µs-friendly units: FLOP per microsecond.
  double peak_flop_per_us(DType compute) const noexcept { return peak_tflops(compute) * 1e6; }
  double bytes_per_us() const noexcept { return mem_bw_gbps * 1e3; }
  // L2 capacity in bytes: l2_mb is the data sheets' MB, 10^6 bytes.
  double l2_bytes() const noexcept { return l2_mb * 1e6; }
  int compute_capability() const noexcept { return cc_major * 10 + cc_minor; }
};

}  // namespace pm2lat
