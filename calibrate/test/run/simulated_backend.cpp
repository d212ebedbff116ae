#include "simulated_backend.h"

#include <algorithm>

#include "fake_gemm_law.h"

namespace pm2lat::calibrate::run::test {
namespace {

// Tile codes carried in GemmAlgo::tile (the fake cuBLASLt's cublasLtMatmulTile_t values).
constexpr int kTileNvjet = 23;  // 128x256
constexpr int kTileXmma = 20;   // 128x128
constexpr int kTileSimt = 18;   // 128x64

const char* kNvjet = "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT";
const char* kXmmaBf16 =
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
    "segment_k_off_kernel__5x_"
    "cublas";
const char* kSimt =
    "sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x64x8_stage3_warpsize2x2x1_ffma_aligna4_"
    "alignc4_execute_kernel__"
    "5x_cublas";
const char* kReduce = "splitKreduce_kernel";

unsigned ceil_div(std::int64_t a, std::int64_t b) { return static_cast<unsigned>((a + b - 1) / b); }

double law_us(const std::string& name, const Dim3& grid, const fake_sim::GemmWork& w) {
  const std::uint32_t g[3] = {grid.x, grid.y, grid.z};
  return static_cast<double>(fake_sim::gemm_duration_ns(name, g, w, 132, 1500)) * 1e-3;
}

double plain_us(const std::string& name, const Dim3& grid, unsigned threads) {
  return static_cast<double>(
             fake_sim::kernel_duration_ns(name, grid.x, grid.y, grid.z, threads, 1, 1, 1500)) *
         1e-3;
}

GemmAlgo algo(int tile, int split) {
  GemmAlgo a;
  a.id = tile == kTileNvjet ? 66 : tile == kTileSimt ? 5 : 21;
  a.tile = tile;
  a.split_k = split;
  a.data[0] = static_cast<std::uint64_t>(tile);
  a.data[1] = static_cast<std::uint64_t>(split);
  return a;
}

}  // namespace

Environment SimulatedBackend::environment() {
  return {{"device", device_name()}, {"driver_version", "13.0"}, {"cublaslt_version", "130000"}};
}

GemmAlgo SimulatedBackend::heuristic(const GemmProblem& p, int rank) const {
  const bool simt = p.dtype == DType::kFp32;
  const bool long_k = p.k >= 4 * std::max(p.m, p.n);
  std::vector<GemmAlgo> list;
  if (simt) {
    list.push_back(algo(kTileSimt, long_k ? 4 : 1));
    for (int s : {1, 2, 4}) {
      if (s != list[0].split_k) list.push_back(algo(kTileSimt, s));
    }
  } else {
    const bool big = p.m * p.n >= 1024 * 1024;
    list.push_back(big ? algo(kTileNvjet, 1) : algo(kTileXmma, long_k ? 4 : 1));
    if (!big) list.push_back(algo(kTileNvjet, 1));
    for (int s : {1, 2, 4}) {
      if (big || s != list[0].split_k) list.push_back(algo(kTileXmma, s));
    }
  }
  if (rank < 0 || rank >= static_cast<int>(list.size())) return GemmAlgo{};
  return list[static_cast<std::size_t>(rank)];
}

std::vector<KernelObservation> SimulatedBackend::gemm_kernels(const GemmProblem& p,
                                                              const GemmAlgo& a) const {
  // The library's column-major problem: M = n, N = m.
  fake_sim::GemmWork w;
  w.m = p.n;
  w.n = p.m;
  w.k = p.k;
  w.batch = p.batch;
  w.element_bytes =
      static_cast<std::uint32_t>(p.dtype == DType::kFp32 || p.dtype == DType::kTf32 ? 4 : 2);
  w.math = p.dtype == DType::kFp32 ? fake_sim::GemmMath::kFp32Simt : fake_sim::GemmMath::kHalf;
  std::vector<KernelObservation> out;
  KernelObservation k;
  const unsigned batch = static_cast<unsigned>(p.batch);
  if (a.tile == kTileNvjet) {
    w.tile_m = 128;
    w.tile_n = 256;
    w.tile_k = 64;
    k.name = kNvjet;
    k.grid = Dim3{ceil_div(w.m, 128), (ceil_div(w.n, 256) + 1) / 2 * 2, batch};
    k.block = Dim3{384, 1, 1};
    k.cluster = Dim3{1, 2, 1};
    k.duration_us = law_us(k.name, k.grid, w);
    out.push_back(k);
    return out;
  }
  const bool simt = a.tile == kTileSimt;
  const unsigned split = static_cast<unsigned>(std::max(1, a.split_k));
  w.tile_m = 128;
  w.tile_n = simt ? 64 : 128;
  w.tile_k = simt ? 8 : 64;
  w.split_k = split;
  k.name = simt ? kSimt : kXmmaBf16;
  k.grid = Dim3{ceil_div(w.m, 128), ceil_div(w.n, w.tile_n), batch * split};
  k.block = Dim3{256, 1, 1};
  k.duration_us = law_us(k.name, k.grid, w);
  out.push_back(k);
  if (split > 1) {
    KernelObservation r;
    r.name = kReduce;
    r.grid = Dim3{ceil_div(w.m * w.n, 256), 1, batch};
    r.block = Dim3{256, 1, 1};
    r.duration_us = plain_us(r.name, r.grid, 256);
    out.push_back(r);
  }
  return out;
}

TaskResult SimulatedBackend::measure(const MeasurementTask& task, const GemmAlgo* forced) {
  ++measured;
  ++measured_ids[task.id];
  TaskResult r;
  r.task_id = task.id;
  r.kind = task.kind;
  auto timing = [&](double kernels_us, std::size_t n) {
    TimingSample t;
    t.launches = task.timing.launches;
    t.reps = task.timing.reps;
    t.median_us = t.min_us = t.max_us = kernels_us + kGapUs * static_cast<double>(n);
    return t;
  };
  switch (task.kind) {
    case TaskKind::kLaunch:
      r.launch.kernel = "pm2lat_calibrate_empty_kernel";
      r.launch.kernel_us = kEmptyKernelUs;
      r.launch.graph_per_launch_us = kEmptyKernelUs + kGapUs;
      r.launch.single_call_us = kEmptyKernelUs + 4.0;
      r.launch.host_launch_us = 2.5;
      break;
    case TaskKind::kMemory: {
      const MemoryProblem& p = task.memory;
      const double vectors = static_cast<double>(p.rows * p.cols) * dtype_bytes(p.dtype) / 16.0;
      KernelObservation k;
      k.block = Dim3{256, 1, 1};
      if (p.pattern == MemoryPattern::kSoftmaxRows) {
        k.name = p.dtype == DType::kFp32 ? "pm2lat_softmax_rows_f32" : "pm2lat_softmax_rows_bf16";
        k.grid = Dim3{static_cast<std::uint32_t>(p.rows), 1, 1};
      } else {
        k.name = p.pattern == MemoryPattern::kCopy ? "pm2lat_copy_kernel_vec4"
                 : p.dtype == DType::kFp32         ? "pm2lat_vectorized_elementwise_add_f32"
                                                   : "pm2lat_vectorized_elementwise_add_bf16";
        k.grid = Dim3{static_cast<std::uint32_t>((vectors + 255) / 256), 1, 1};
      }
      k.duration_us = plain_us(k.name, k.grid, 256);
      r.memory_kernel = k;
      r.memory_timing = timing(k.duration_us, 1);
      break;
    }
    case TaskKind::kGemm:
    case TaskKind::kGemmCandidates:
    case TaskKind::kGemmFill: {
      std::vector<std::pair<int, GemmAlgo>> runs;
      if (forced != nullptr) {
        runs.emplace_back(-1, *forced);
      } else if (task.kind == TaskKind::kGemm) {
        runs.emplace_back(0, heuristic(task.gemm, 0));
      } else {
        for (int i = 1; i < task.candidates; ++i) {
          const GemmAlgo a = heuristic(task.gemm, i);
          if (a.id >= 0) runs.emplace_back(i, a);
        }
      }
      for (const auto& [rank, a] : runs) {
        GemmRun run;
        run.rank = rank;
        run.algo = a;
        if (forced != nullptr && (a.tile == kTileSimt) != (task.gemm.dtype == DType::kFp32)) {
          run.error = "algorithm not supported for this problem";
        } else {
          run.kernels = gemm_kernels(task.gemm, a);
          double sum = 0;
          for (const auto& k : run.kernels) sum += k.duration_us;
          run.timing = timing(sum, run.kernels.size());
        }
        r.gemm.push_back(std::move(run));
      }
      break;
    }
  }
  return r;
}

}  // namespace pm2lat::calibrate::run::test
