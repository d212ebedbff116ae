// A device profile: everything calibrated about one GPU, and where it came from.
//
// Two kinds of content:
//  - fitted model coefficients, one set per kernel configuration (GEMM wave model) or per
//    operator and kernel (memory-bound model), plus per-operator call overheads;
//  - the calibration points themselves (shape, kernel, launch grid, measured latency). They
//    let the predictor choose the kernel cuBLAS picks on this GPU for a shape (nearest
//    calibrated shape) and interpolate what the fitted model leaves unexplained.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pm2lat/dtype.h"
#include "pm2lat/gemm_scaling.h"
#include "pm2lat/kernel_launch.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/profile_error.h"

namespace pm2lat {

inline constexpr int kProfileSchemaVersion = 1;
inline constexpr const char* kProfileSchemaName = "pm2lat.profile";

struct Provenance {
  std::string source;   // measurements the profile was built from, with licence
  std::string tool;     // "pm2lat-calibrate import 0.1.0"
  std::string created;  // ISO-8601 date
  std::map<std::string, std::string> environment;  // driver, CUDA, cuBLAS versions, clocks
  std::string notes;
};

// Host-side cost of one framework call timed with CUDA events (TimeBasis::kCall): the call
// never measures below `floor_us`, and its kernel starts `pre_us` after the start event.
struct CallOverhead {
  double floor_us = 0;
  double pre_us = 0;

  // A call's time around a kernel of `kernel_us`.
  double call_us(double kernel_us) const noexcept { return std::max(floor_us, pre_us + kernel_us); }
};

// GEMM wave model of one kernel configuration on this GPU (see models/gemm_wave_model.h):
//   kernel_us = c0 + c_wave_k * waves * k_iters + c_block_k * blocks / sm_count * k_iters
//             + c_wave * waves + c_mem * bytes / bandwidth
// waves = ceil(blocks / (sm_count * blocks_per_sm)); k_iters = ceil(k / split / tile_k).
struct GemmConfigFit {
  std::string config;          // normalised kernel name (KernelClass::config)
  DType dtype = DType::kFp32;  // operand type the configuration was measured with
  std::int32_t blocks_per_sm = 1;
  std::int32_t tile_m = 0;  // tile as decoded, copied for readers of the JSON
  std::int32_t tile_n = 0;
  std::int32_t tile_k = 8;   // K consumed per main-loop iteration
  bool tile_m_on_n = false;  // the kernel's tile_m runs along the output's n dimension
  // The configuration stands for the library's own choice (a table that does not name its
  // kernels): its calibration launches are the model's tiles, the same for every call, so the
  // fit at a shape is the table's time for that call, whatever kernel the library ran.
  bool nominal_launch = false;
  double c0 = 0;
  double c_wave_k = 0;
  double c_block_k = 0;
  double c_wave = 0;
  double c_mem = 0;
  std::int32_t points = 0;
  double fit_mape_pct = 0;
};

// One calibration measurement of a GEMM call.
struct GemmPoint {
  std::string op;                  // "bmm", "linear", "matmul", ... (call-overhead key)
  bool transposed_weight = false;  // B stored transposed (nn.Linear's y = x W^T)
  std::int32_t config = -1;        // index into Profile::gemm_configs
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
  Dim3 grid;
  double us = 0;  // measured latency in the profile's basis
};

// Memory-bound model of one operator/kernel on this GPU:
//   kernel_us = c0 + c_byte * bytes / bandwidth + c_row * rows / sm_count
struct VectorFit {
  std::string op;      // "add", "softmax", "layernorm", ... or a family name
  std::string config;  // kernel (KernelClass::config), empty = any kernel of the op
  double c0 = 0;
  double c_byte = 0;
  double c_row = 0;
  std::int32_t points = 0;
  double fit_mape_pct = 0;
  // Bytes of the smallest and largest kernel the fit was made on (0 = not recorded).
  double bytes_min = 0, bytes_max = 0;
  // Rows of the kernel with the most rows a fit with a per-row term was made on (0 = not
  // recorded): the term is not extrapolated past them.
  double rows_max = 0;
};

struct VectorPoint {
  std::int32_t fit = -1;  // index into Profile::vector_fits
  std::int64_t rows = 0, cols = 0;
  double bytes = 0;
  double us = 0;
};

// Fused attention of one kernel configuration on this GPU (see models/attention_model.h):
//   kernel_us = c0 + c_iter * makespan + c_cta * waves + c_qo * qo_bytes / bandwidth
//             + c_kv * kv_bytes / bandwidth
// The configuration is what the kernel template fixes: implementation, head dimension, KV
// element type and whether the mask is a sliding window; tile, CTAs per SM and the packing
// of grouped query heads are the calibration's choice.
struct AttentionConfigFit {
  std::string variant;  // "flash2", "flash3", ... (to_string(AttentionVariant))
  std::int32_t head_dim = 0;
  DType kv_dtype = DType::kBf16;
  bool local = false;  // sliding-window mask
  std::int32_t tile_m = 128;
  std::int32_t tile_n = 64;
  std::int32_t ctas_per_sm = 1;
  std::int32_t gqa_packing = 0;  // GqaPacking
  double c0 = 0;
  double c_iter = 0;
  double c_cta = 0;
  double c_qo = 0;
  double c_kv = 0;
  std::int32_t points = 0;
  double fit_mape_pct = 0;
  // The calls it was fitted on also wrote the new tokens' K and V into the KV cache (a kernel
  // of its own before the attention kernel): vLLM before 0.16 did so inside the attention
  // backend's forward, which is what AIConfigurator's collector times.
  bool calls_write_kv_cache = false;
};

// One calibration measurement of an attention call (causal prefill unless stated).
struct AttentionPoint {
  std::int32_t config = -1;  // index into Profile::attention_configs
  std::int64_t batch = 0, seqlen_q = 0, seqlen_kv = 0, heads = 0, kv_heads = 0, window = 0;
  bool causal = true;
  double us = 0;
};

// One calibration measurement of a convolution; the configuration's fit is a GemmConfigFit
// of the implicit GEMM the kernel computes (models/conv_model.h).
struct ConvPoint {
  std::int32_t config = -1;  // index into Profile::conv_configs
  std::int64_t batch = 0, in_channels = 0, out_channels = 0, in_h = 0, in_w = 0;
  std::int64_t kernel_h = 0, kernel_w = 0, stride = 1, pad = 0;
  Dim3 grid;
  double us = 0;
};

// A low-precision GEMM backend (FP8 per-tensor, block-scaled FP8, NVFP4, ...) measured as
// whole framework calls (see models/scaled_gemm_model.h): the activation quantisation kernel
// (memory-bound: reads BF16 activations, writes the low-precision copy and its scales), then
// the GEMM kernel (the wave model at the operand type's tensor throughput, scale factors among
// its bytes), and for calls run eagerly the host's own time per call, which the device time
// hides only when it is longer.
struct ScaledGemmFit {
  std::string config;  // the backend as the measurements name it, e.g. "vllm:CutlassFP8..."
  DType dtype = DType::kFp8E4M3;
  GemmScaling scaling = GemmScaling::kPerTensor;
  // Nominal tile, blocks per SM and wave-model coefficients of the GEMM kernel.
  GemmConfigFit gemm;
  // Quantisation kernel: quant_c0 + quant_c_byte * its bytes / bandwidth.
  double quant_c0 = 0;
  double quant_c_byte = 0;
  // Eager calls: host time per call (0 = timed in a replayed graph: no host part), and the
  // same for token counts whose activation scales need re-aligning (0 = no difference).
  double host_us = 0;
  double host_unaligned_us = 0;
  std::int32_t points = 0;
  double fit_mape_pct = 0;
};

struct ScaledGemmPoint {
  std::int32_t config = -1;  // index into Profile::scaled_gemm_fits
  std::int64_t m = 0, n = 0, k = 0;
  double us = 0;
};

// Version of the "scaled_gemm" section of a profile (an optional, versioned extension of
// schema version 1: readers of other section versions refuse it naming the field).
inline constexpr int kScaledGemmSectionVersion = 1;

struct Profile {
  int version = kProfileSchemaVersion;
  std::string device;  // canonical catalogue name
  TimeBasis basis = TimeBasis::kKernel;
  // Kernel-basis measurements taken back to back in a replayed CUDA graph, averaged per call
  // (the AIConfigurator tables): each kernel's launch and drain overlap its neighbours', so
  // an isolated kernel (what CUPTI reports for an eager program) takes longer by a fixed
  // amount per kernel, graph_kernel_offset_us of a profile measured in isolation.
  bool graph_replay = false;
  // Measured on this GPU: isolated kernel duration minus its graph-replay time per call (the
  // median over small GEMM kernels); 0 = not measured.
  double graph_kernel_offset_us = 0;
  Provenance provenance;
  std::map<std::string, CallOverhead> call_overhead;  // by op key; "*" = any other op
  std::vector<GemmConfigFit> gemm_configs;
  std::vector<GemmPoint> gemm_points;
  std::vector<VectorFit> vector_fits;
  std::vector<VectorPoint> vector_points;
  // Optional sections of the models for the long tail of kernel families.
  std::vector<AttentionConfigFit> attention_configs;
  std::vector<AttentionPoint> attention_points;
  std::vector<GemmConfigFit> conv_configs;
  std::vector<ConvPoint> conv_points;
  // Memory-bound kernel families measured as kernels (reductions, copies, memsets, gathers,
  // optimizer and Triton kernels): VectorFit::op is the family name.
  std::vector<VectorFit> family_fits;
  std::vector<VectorPoint> family_points;
  // Low-precision GEMM backends measured as framework calls.
  std::vector<ScaledGemmFit> scaled_gemm_fits;
  std::vector<ScaledGemmPoint> scaled_gemm_points;

  std::string file;  // where it was loaded from (not serialised)
  // Point tables left in that file by load_profile_without_points, a bit per PointTable
  // (profile_io.h); read with load_points (not serialised).
  std::uint8_t points_in_file = 0;

  const CallOverhead& overhead_for(const std::string& op) const;
  int find_gemm_config(const std::string& config) const;  // -1 if absent
};

}  // namespace pm2lat
