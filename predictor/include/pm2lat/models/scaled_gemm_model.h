// Low-precision GEMM calls (FP8 per-tensor, block-scaled FP8, NVFP4, ...): what one framework
// linear call y[m, n] = x[m, k] W[n, k]^T does when its weight is stored quantised.
//
//   call_us = max(host_us, quant_us + gemm_us)      (host_us = 0 for graph-timed calls)
//
//   quant_us = quant_c0 + quant_c_byte * quant_bytes / bandwidth
//       the activation quantisation kernel: reads the BF16 activations (2 m k bytes), writes
//       their low-precision copy and its scale factors;
//   gemm_us  = the GEMM wave model (models/gemm_wave_model.h) of a nominal tile, its K loop
//       counted in the operand type's K step, its bytes the quantised operands, their scale
//       factors and the BF16 output;
//   host_us  = the host's time per call when the framework runs the call eagerly (launches,
//       tensor allocation, Python): a device time shorter than it is hidden.
//
// The throughput of the operand type enters through the fitted per-K-step coefficients, and
// through the ratio of per-SM tensor throughputs when a fit is carried to another GPU.
#pragma once

#include <array>
#include <cstdint>

#include "pm2lat/device_spec.h"
#include "pm2lat/models/gemm_wave_model.h"
#include "pm2lat/profile.h"

namespace pm2lat {

// Activation scales are stored token-major in FP32; TMA needs 16-byte aligned strides, so a
// token count that is not a multiple of 4 makes the backend re-lay the scales out (vLLM pads
// M to a multiple of 4 for CUTLASS block FP8, vllm-project/vllm#23280; DeepGEMM aligns the
// scale tensor with get_tma_aligned_size).
inline constexpr std::int64_t kScaleRowAlignment = 4;

// Bytes of the output element (BF16) every backend in the tables writes.
inline constexpr double kScaledGemmOutputBytes = 2;
// Bytes of the activation element the quantisation kernel reads (BF16).
inline constexpr double kScaledGemmInputBytes = 2;

struct ScaledGemmWork {
  GemmWork gemm;           // blocks, K steps, bytes of the GEMM kernel
  double quant_bytes = 0;  // bytes the quantisation kernel moves
  bool m_aligned = true;   // m is a multiple of kScaleRowAlignment
};

ScaledGemmWork scaled_gemm_work(const ScaledGemmFit& fit, std::int64_t m, std::int64_t n,
                                std::int64_t k) noexcept;

// The regressors a calibration fits against: the wave model's plus the quantisation kernel's
// bandwidth pass (µs).
struct ScaledGemmFeatures {
  GemmWaveFeatures wave;
  double quant = 0;
};

ScaledGemmFeatures scaled_gemm_features(const ScaledGemmFit& fit, const DeviceSpec& spec,
                                        const ScaledGemmWork& work) noexcept;

struct ScaledGemmTime {
  double quant_us = 0;
  double gemm_us = 0;
  double host_us = 0;  // 0 = graph-timed
  double device_us() const noexcept { return quant_us + gemm_us; }
  double call_us() const noexcept { return host_us > device_us() ? host_us : device_us(); }
};

// `k_loop_scale` multiplies the K-loop terms (c_wave_k, c_block_k): 1 on the GPU the fit was
// calibrated on, scaled_gemm_k_step_scale() on another.
ScaledGemmTime scaled_gemm_time(const ScaledGemmFit& fit, const DeviceSpec& spec,
                                const ScaledGemmWork& work, double k_loop_scale = 1.0) noexcept;

// How the K loop of a call carries from the GPU a fit was calibrated on (`from`) to another
// (`to`): a K step streams operands and runs the tensor cores, so its time scales with the
// bandwidth ratio and with the ratio of per-SM tensor throughput of the operand type, weighted
// by the share each takes at `from`'s peaks for this call (a roofline of its FLOPs against its
// operand bytes). A throughput gain is realised at ratio^(2/3): across
// operand types on one GPU the AIConfigurator tables show a 2x peak buying 1.29x (H100 FP8 over
// BF16) to 1.82x (RTX PRO 6000), median 2^0.66, at the shapes over 2 TFLOP. Fixed and per-wave
// costs do not carry (latencies: GB200's one-wave calls take what B200's take although its
// clock is 5 % higher). Chosen over scaling the whole K loop by tensor throughput, and over
// scaling only its throughput term, by the B200 <-> GB200 leave-one-out (FP4 median 4.1 % vs
// 4.6-4.8 % and 3.8-3.9 %) and because only this form gives H200 its bandwidth on few-token calls.
double scaled_gemm_k_step_scale(const ScaledGemmFit& fit, const DeviceSpec& from,
                                const DeviceSpec& to, std::int64_t m, std::int64_t n,
                                std::int64_t k) noexcept;

// The quantisation kernel alone for an activation of `bytes_read` BF16 bytes.
double scaled_gemm_quant_us(const ScaledGemmFit& fit, const DeviceSpec& spec,
                            double quant_bytes) noexcept;

// Where a call sits for interpolating what the model leaves unexplained: log2 of m, n, k, the
// wave count (weighted: shapes either side of a wave boundary must not pass their residuals to
// each other) and whether m is aligned for the activation scales (aligned and unaligned token
// counts run different host paths).
std::array<double, 5> scaled_gemm_residual_key(const ScaledGemmFit& fit, const DeviceSpec& spec,
                                               std::int64_t m, std::int64_t n,
                                               std::int64_t k) noexcept;

// Bytes the quantisation kernel moves for an m x k BF16 activation.
double scaled_gemm_quant_bytes(DType dtype, GemmScaling scaling, double m, double k) noexcept;

}  // namespace pm2lat
