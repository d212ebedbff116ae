// Cost of one prediction per (kernel, target) with the shipped profiles: the figure behind
// "prediction cost <= 1 µs", and "a first prediction for another GPU costs at most 1.5x one
// for the run's GPU". Every GEMM benchmark but the repeated one predicts a shape for the
// first time (nothing cached). Classification is excluded: the runtime and replay classify
// each distinct kernel once and cache the class. Also: what the loaded predictor holds in
// memory.
//
//   taskset -c 0 build/ci/predictor/bench/pm2lat_predict_benchmark
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <random>
#include <vector>

#include "pm2lat/call_dispatch.h"
#include "pm2lat/classifier.h"
#include "pm2lat/models/attention_predictor.h"
#include "pm2lat/models/conv_predictor.h"
#include "pm2lat/models/gemm_predictor.h"
#include "pm2lat/models/memory_family_predictor.h"
#include "pm2lat/models/operator_fit_predictor.h"
#include "pm2lat/models/scaled_gemm_predictor.h"
#include "pm2lat/predictor.h"
#include "pm2lat/profile_io.h"
#include "pm2lat/target_set.h"

namespace {

// The heap in use and its peak, counted by this binary's global operator new and delete (every
// allocation of the predictor and its JSON reader; malloc's own size of each block).
std::atomic<std::size_t> g_heap_in_use{0};
std::atomic<std::size_t> g_heap_peak{0};

void* counted_new(std::size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  const std::size_t size = malloc_usable_size(p);
  const std::size_t now = g_heap_in_use.fetch_add(size, std::memory_order_relaxed) + size;
  std::size_t peak = g_heap_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_heap_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {}
  return p;
}

void counted_delete(void* p) noexcept {
  if (p == nullptr) return;
  g_heap_in_use.fetch_sub(malloc_usable_size(p), std::memory_order_relaxed);
  std::free(p);
}

}  // namespace

void* operator new(std::size_t n) { return counted_new(n); }
void* operator new[](std::size_t n) { return counted_new(n); }
void operator delete(void* p) noexcept { counted_delete(p); }
void operator delete[](void* p) noexcept { counted_delete(p); }
void operator delete(void* p, std::size_t) noexcept { counted_delete(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_delete(p); }

namespace {

using namespace pm2lat;

std::size_t heap_in_use() { return g_heap_in_use.load(std::memory_order_relaxed); }
std::size_t heap_peak() { return g_heap_peak.load(std::memory_order_relaxed); }
void reset_heap_peak() { g_heap_peak.store(heap_in_use(), std::memory_order_relaxed); }

Predictor& shipped() {
  static Predictor p = Predictor::from_directory(PM2LAT_PROFILE_DIR);
  return p;
}

// Names the model that answered `r` on `t`: each line says which route it measured.
void label_model(benchmark::State& state, const Predictor& p, const KernelRecord& r,
                 const KernelClass& cls, TargetId t, const PredictOptions& o = {}) {
  state.SetLabel(std::string(to_string(p.predict(r, cls, t, o).model)));
}

// GEMM records of varied shapes, as an A100 launch would report them.
std::vector<KernelRecord> gemm_records(std::size_t n) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> e(6, 12);
  std::uniform_int_distribution<int> jitter(0, 63);  // distinct shapes: no memo hits
  std::vector<KernelRecord> out;
  for (std::size_t i = 0; i < n; ++i) {
    KernelRecord r;
    r.launch.name = "ampere_sgemm_128x64_tn";
    r.op.kind = OpKind::kGemm;
    r.op.name = "linear";
    r.op.gemm.m = (1 << e(rng)) + jitter(rng);
    r.op.gemm.n = (1 << e(rng)) + jitter(rng);
    r.op.gemm.k = (1 << e(rng)) + jitter(rng);
    r.op.gemm.a = DType::kFp32;
    r.launch.grid = {static_cast<std::uint32_t>(r.op.gemm.n / 128 + 1),
                     static_cast<std::uint32_t>(r.op.gemm.m / 64 + 1), 1};
    out.push_back(r);
  }
  return out;
}

// Predicts `recs` in turn, one per iteration (a power-of-two count: the index is masked), and
// labels the line with the model that answered `recs[labelled]`.
void predict_in_turn(benchmark::State& state, const Predictor& p,
                     const std::vector<KernelRecord>& recs, const KernelClass& cls, TargetId t,
                     const PredictOptions& o, std::size_t labelled = 0) {
  const std::size_t mask = recs.size() - 1;
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(p.predict(recs[i++ & mask], cls, t, o));
  }
  label_model(state, p, recs[labelled], cls, t, o);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

// Predicts `r` once per iteration on a grid of varying width (1 to `widest` blocks by
// `height`), and labels the line with the model that answered.
void predict_varied_grids(benchmark::State& state, const Predictor& p, KernelRecord r,
                          const KernelClass& cls, TargetId t, const PredictOptions& o,
                          std::uint32_t widest, std::uint32_t height) {
  std::uint32_t blocks = 1;
  for (auto _ : state) {
    blocks = 1 + (blocks * 37) % widest;  // vary the grid
    r.launch.grid = {blocks, height, 1};
    benchmark::DoNotOptimize(p.predict(r, cls, t, o));
  }
  label_model(state, p, r, cls, t, o);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

void BM_PredictGemmSameGpu(benchmark::State& state) {
  Predictor& p = shipped();
  const TargetId t = p.add_target("A100-PCIE-40GB");
  const auto recs = gemm_records(16384);
  const KernelClass cls = classify_kernel(recs[0].launch.name);
  PredictOptions o;
  o.source_spec = p.catalogue().find("A100-PCIE-40GB");
  predict_in_turn(state, p, recs, cls, t, o);
}
BENCHMARK(BM_PredictGemmSameGpu);

void BM_PredictGemmOtherGpu(benchmark::State& state) {
  Predictor& p = shipped();
  const TargetId t = p.add_target("T4");
  const auto recs = gemm_records(16384);
  const KernelClass cls = classify_kernel(recs[0].launch.name);
  PredictOptions o;
  o.source_spec = p.catalogue().find("A100-PCIE-40GB");  // T4's own kernel is chosen
  predict_in_turn(state, p, recs, cls, t, o);
}
BENCHMARK(BM_PredictGemmOtherGpu);

void BM_PredictGemmUncalibratedGpu(benchmark::State& state) {
  Predictor& p = shipped();
  const TargetId t = p.add_target("A10");  // spec-scaled
  const auto recs = gemm_records(16384);
  const KernelClass cls = classify_kernel(recs[0].launch.name);
  PredictOptions o;
  o.source_spec = p.catalogue().find("A100-PCIE-40GB");
  predict_in_turn(state, p, recs, cls, t, o);
}
BENCHMARK(BM_PredictGemmUncalibratedGpu);

// A training step's stream: the same 64 GEMM shapes again and again, as a run repeats its
// layers; the target set's prediction cache serves the repeats (one target per item).
void BM_PredictGemmOtherGpuStepStream(benchmark::State& state) {
  Predictor& p = shipped();
  TargetSet targets(p);
  targets.add("T4");
  const auto recs = gemm_records(64);
  const KernelClass cls = classify_kernel(recs[0].launch.name);
  PredictOptions o;
  o.source_spec = p.catalogue().find("A100-PCIE-40GB");
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(targets.predict(recs[i++ & 63], cls, o));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_PredictGemmOtherGpuStepStream);

// Loading the shipped profiles into a predictor with four targets as the runtime and the
// reports do (Predictor::from_directory: each point table is read while its model is built):
// time, the heap the predictor holds afterwards (what a run keeps resident for predictions,
// shared by all targets) and the heap's peak while it loads.
void BM_LoadShippedProfiles(benchmark::State& state) {
  double held_mb = 0, peak_mb = 0;
  for (auto _ : state) {
    const std::size_t before = heap_in_use();
    reset_heap_peak();
    Predictor p = Predictor::from_directory(PM2LAT_PROFILE_DIR);
    for (const char* gpu : {"H100", "A100", "L4", "T4"}) p.add_target(gpu);
    held_mb = static_cast<double>(heap_in_use() - before) / 1e6;
    peak_mb = static_cast<double>(heap_peak() - before) / 1e6;
    benchmark::DoNotOptimize(p);
  }
  state.counters["predictor_held_MB"] = held_mb;
  state.counters["load_peak_MB"] = peak_mb;
}
BENCHMARK(BM_LoadShippedProfiles)->Unit(benchmark::kMillisecond)->Iterations(1);

// Where the held memory goes: the heap each model's indexes take, built from the shipped
// profiles one model at a time, and the calibration points the loaded profiles carry (which
// the predictor releases once its models are built).

template <typename Model, typename... Extra>
double model_mb(const DeviceCatalogue& catalogue, const std::vector<Profile>& profiles,
                const Extra&... extra) {
  const std::size_t before = heap_in_use();
  const Model model(catalogue, profiles, extra...);
  benchmark::DoNotOptimize(&model);
  return static_cast<double>(heap_in_use() - before) / 1e6;
}

template <typename T>
double vector_mb(const std::vector<T>& v) {
  return static_cast<double>(v.capacity() * sizeof(T)) / 1e6;
}

void BM_PredictorMemoryBreakdown(benchmark::State& state) {
  const DeviceCatalogue catalogue =
      DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
  std::vector<Profile> profiles = load_profiles(PM2LAT_PROFILE_DIR);
  for (Profile& p : profiles) {
    if (const DeviceSpec* spec = catalogue.find(p.device)) p.device = spec->name;
  }
  for (auto _ : state) {
    state.counters["gemm_MB"] = model_mb<GemmPredictor>(catalogue, profiles);
    state.counters["scaled_gemm_MB"] = model_mb<ScaledGemmPredictor>(catalogue, profiles);
    state.counters["attention_MB"] = model_mb<AttentionPredictor>(catalogue, profiles);
    state.counters["conv_MB"] = model_mb<ConvPredictor>(catalogue, profiles);
    // No shortest calls noted: which operators' dispatch a table measured is a few map
    // entries, nothing the breakdown resolves.
    state.counters["operator_fits_MB"] = model_mb<OperatorFitPredictor>(
        catalogue, profiles, std::vector<SmallestCalls>(profiles.size()), HostDispatchTable{});
    state.counters["family_fits_MB"] = model_mb<MemoryFamilyPredictor>(catalogue, profiles);
  }
  double gemm = 0, scaled = 0, other = 0;
  for (const Profile& p : profiles) {
    gemm += vector_mb(p.gemm_points);
    scaled += vector_mb(p.scaled_gemm_points);
    other += vector_mb(p.vector_points) + vector_mb(p.attention_points) + vector_mb(p.conv_points) +
             vector_mb(p.family_points);
  }
  state.counters["gemm_points_MB"] = gemm;
  state.counters["scaled_gemm_points_MB"] = scaled;
  state.counters["other_points_MB"] = other;
}
BENCHMARK(BM_PredictorMemoryBreakdown)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_PredictElementwise(benchmark::State& state) {
  Predictor& p = shipped();
  const TargetId t = p.add_target("V100-PCIE-32GB");
  KernelRecord r;
  r.launch.name =
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3>)";
  r.op.kind = OpKind::kElementwise;
  r.op.name = "aten::add";
  r.op.vec.rows = 4096;
  r.op.vec.cols = 1024;
  r.op.vec.bytes_read = 2 * 4096 * 1024 * 4.0;
  r.op.vec.bytes_written = 4096 * 1024 * 4.0;
  const KernelClass cls = classify_kernel(r.launch.name);
  for (auto _ : state) {
    r.op.vec.rows = 1 + (r.op.vec.rows * 7) % 8191;  // vary the shape
    benchmark::DoNotOptimize(p.predict(r, cls, t));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_PredictElementwise);

// Long-tail families: a FlashAttention 2 forward with its name decoded per prediction, on
// its calibrated GPU and carried to another; a cuDNN convolution; a layout transform.
void BM_PredictAttention(benchmark::State& state) {
  Predictor& p = shipped();
  const TargetId t = p.add_target(state.range(0) == 0 ? "A100-SXM" : "H100-SXM");
  KernelRecord r;
  r.launch.name =
      "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
      "cutlass::bfloat16_t, "
      "Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, "
      "true, true, false, "
      "false>(Flash_fwd_params)";
  r.op.kind = OpKind::kAttention;
  AttentionShape& a = r.op.attention;
  a.batch = 4;
  a.heads = 32;
  a.kv_heads = 8;
  a.head_dim = 128;
  a.causal = true;
  a.dtype = DType::kBf16;
  const KernelClass cls = classify_kernel(r.launch.name);
  std::int64_t s = 1;
  for (auto _ : state) {
    s = 1 + (s * 37) % 16384;  // vary the sequence length
    a.seqlen_q = a.seqlen_kv = s;
    benchmark::DoNotOptimize(p.predict(r, cls, t));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_PredictAttention)->Arg(0)->Arg(1);

void BM_PredictConv(benchmark::State& state) {
  Predictor& p = shipped();
  const TargetId t = p.add_target("V100-PCIE-32GB");
  KernelRecord r;
  r.launch.name = "cudnn_infer_volta_scudnn_128x64_relu_small_nn_v1";
  r.launch.grid = {1, 1, 1};
  r.op.kind = OpKind::kConv;
  ConvShape& c = r.op.conv;
  c.batch = 32;
  c.in_channels = 64;
  c.out_channels = 128;
  c.in_h = c.in_w = 56;
  c.kernel_h = c.kernel_w = 3;
  c.pad_h = c.pad_w = 1;
  c.dtype = DType::kFp32;
  const KernelClass cls = classify_kernel(r.launch.name);
  for (auto _ : state) {
    c.in_channels = 16 + (c.in_channels * 7) % 1024;
    benchmark::DoNotOptimize(p.predict(r, cls, t));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_PredictConv);

void BM_PredictLayoutTransform(benchmark::State& state) {
  Predictor& p = shipped();
  const TargetId t = p.add_target("H100-SXM");
  KernelRecord r;
  r.launch.name =
      "void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, "
      "(cudnnKernelDataType_t)2>(...)";
  r.op.kind = OpKind::kCopy;
  r.op.vec.rows = 4096;
  r.op.vec.cols = 1024;
  const KernelClass cls = classify_kernel(r.launch.name);
  for (auto _ : state) {
    r.op.vec.rows = 1 + (r.op.vec.rows * 7) % 8191;
    r.op.vec.bytes_read = r.op.vec.bytes_written =
        4.0 * static_cast<double>(r.op.vec.rows * r.op.vec.cols);
    benchmark::DoNotOptimize(p.predict(r, cls, t));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_PredictLayoutTransform);

// A low-precision framework call (FP8 block-scaled, NVFP4) of varied shape: on a calibrated
// GPU (0) and on one nobody calibrated, carried from its generation's donor (1).
void BM_PredictScaledGemm(benchmark::State& state) {
  Predictor& p = shipped();
  const TargetId t = p.add_target(state.range(0) == 0 ? "B200-SXM" : "B300-SXM");
  auto recs = gemm_records(16384);
  for (std::size_t i = 0; i < recs.size(); ++i) {
    GemmShape& g = recs[i].op.gemm;
    const bool fp4 = i % 2 == 0;
    g.a = g.b = fp4 ? DType::kFp4E2M1 : DType::kFp8E4M3;
    g.scaling = fp4 ? GemmScaling::kNv16 : GemmScaling::kBlock128;
    g.trans_b = true;
  }
  KernelClass call;  // a whole call: no library kernel name
  call.family = KernelFamily::kGemm;
  PredictOptions o;
  o.graph_replay = true;
  predict_in_turn(state, p, recs, call, t, o, 1);
}
BENCHMARK(BM_PredictScaledGemm)->Arg(0)->Arg(1);

// An NCCL all-reduce of varied payload: the collective link model, whatever the kernel.
void BM_PredictCollective(benchmark::State& state) {
  Predictor& p = shipped();
  const TargetId t = p.add_target("H100-SXM");
  KernelRecord r;
  r.launch.name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
  r.launch.grid = {32, 1, 1};
  r.op.kind = OpKind::kCollective;
  r.op.name = "nccl:all_reduce";
  r.op.collective.ranks = 8;
  const KernelClass cls = classify_kernel(r.launch.name);
  double bytes = 1 << 20;
  for (auto _ : state) {
    bytes = 4096 + std::fmod(bytes * 7, 1 << 28);  // vary the payload
    r.op.collective.bytes = bytes;
    benchmark::DoNotOptimize(p.predict(r, cls, t));
  }
  label_model(state, p, r, cls, t);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_PredictCollective);

// A kernel no rule names, launched outside any library call (no shape, no bytes): priced
// from its launch geometry by the pointwise family fit.
void BM_PredictUnknownKernel(benchmark::State& state) {
  Predictor& p = shipped();
  const TargetId t = p.add_target("A100-SXM");
  KernelRecord r;
  r.launch.name = "_Z17my_custom_kernelPfPKfi";
  r.launch.block = {256, 1, 1};
  predict_varied_grids(state, p, r, classify_kernel(r.launch.name), t, {}, 65521, 1);
}
BENCHMARK(BM_PredictUnknownKernel);

// An ATen reduction launched outside any library call (no shape), measured on an H100 and
// forecast for an A100: the geometry fit the H100 takes, found through the H100's donor order
// ranked at prediction time (memory_family_predictor.cpp).
void BM_PredictShapelessReductionOtherGpu(benchmark::State& state) {
  Predictor& p = shipped();
  const TargetId t = p.add_target("A100-SXM");
  KernelRecord r;
  r.launch.name =
      "void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float, "
      "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>>, "
      "unsigned int, float, 4>>(...)";
  r.launch.block = {32, 4, 1};
  const KernelClass cls = classify_kernel(r.launch.name);
  PredictOptions o;
  o.source_spec = p.catalogue().find("H100-SXM");
  predict_varied_grids(state, p, r, cls, t, o, 65521, 16);
}
BENCHMARK(BM_PredictShapelessReductionOtherGpu);

// A GEMM launch recorded without its shape on an A100 (a trace without record_shapes) and
// forecast for an H100, whose architecture does not run the A100's kernel: the GEMM the
// launch implies on the A100's calibration, run with the configuration the H100 chooses for
// it (gemm_predictor.cpp, predict_launch): a calibration search and a selector vote.
void BM_PredictShapelessGemmOtherArchitecture(benchmark::State& state) {
  Predictor& p = shipped();
  const TargetId t = p.add_target("H100-SXM");
  KernelRecord r;
  r.launch.name = "ampere_sgemm_128x64_tn";
  r.launch.block = {128, 1, 1};
  const KernelClass cls = classify_kernel(r.launch.name);
  PredictOptions o;
  o.source_spec = p.catalogue().find("A100-PCIE-40GB");
  predict_varied_grids(state, p, r, cls, t, o, 4093, 8);
}
BENCHMARK(BM_PredictShapelessGemmOtherArchitecture);

// A cuBLASLt BF16 GEMM call of varied shape (a whole call: no kernel name), on a GPU that
// calibrated BF16 calls: the selector chooses the configuration for every shape.
void BM_PredictBf16GemmCall(benchmark::State& state) {
  Predictor& p = shipped();
  const TargetId t = p.add_target("H100-SXM");
  auto recs = gemm_records(16384);
  for (KernelRecord& r : recs) {
    r.op.source = "cublasLt";
    r.op.name = "cublasLtMatmul";
    r.op.gemm.a = r.op.gemm.b = DType::kBf16;
    r.op.gemm.trans_b = true;
    r.launch = {};
  }
  KernelClass call;  // a whole call: no library kernel name
  call.family = KernelFamily::kGemm;
  PredictOptions o;
  o.graph_replay = true;
  predict_in_turn(state, p, recs, call, t, o);
}
BENCHMARK(BM_PredictBf16GemmCall);

void BM_Classify(benchmark::State& state) {
  const std::string name =
      "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_"
      "alignc4_execute_kernel__5x_cublas";
  for (auto _ : state) benchmark::DoNotOptimize(classify_kernel(name));
}
BENCHMARK(BM_Classify);

}  // namespace

BENCHMARK_MAIN();
