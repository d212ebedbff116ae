// Replay throughput with the shipped profiles: the figure behind "1M kernel records x 4
// targets in <= 2 s on one core". The records are the real kernels of a public trace
// (TraceLens's BERT-small on H100: GEMMs, FlashAttention, layer norms, elementwise, gathers;
// read from the measurement directory PM2LAT_DATA_DIR, calibrate/DATA.md), repeated with
// advancing timestamps to a million. Without the measurements both benchmarks are skipped. Timed:
// what replay does after reading the trace — predicting every record on every target into the run
// table and summarising the run (families x targets, accuracy, and the step-time layout on each
// target).
//
//   build/ci/reports/bench/pm2lat_replay_benchmark
#include <benchmark/benchmark.h>

#include <unordered_set>

#include "pm2lat/reports/input_file.h"
#include "pm2lat/reports/replay/kineto_trace.h"
#include "pm2lat/reports/replay/trace_records.h"
#include "pm2lat/reports/replay/trace_replay.h"
#include "pm2lat/reports/run_predictor.h"
#include "pm2lat/reports/run_summary.h"
#include "pm2lat/test/measurement_data.h"

namespace {

using namespace pm2lat;
using namespace pm2lat::reports;

constexpr std::size_t kRecords = 1'000'000;
constexpr std::size_t kDistinctShare = 10;  // one record in ten is a new (kernel, shape) pair
constexpr const char* kTrace = "traces/tracelens_h100_bert-small.json.gz";

// Variant v of a record: its work grown by v rows/tokens, so every variant is a new shape.
void vary(KernelRecord& r, std::int64_t v) {
  OpContext& op = r.op;
  op.gemm.m += v;
  op.attention.seqlen_q += v;
  op.attention.seqlen_kv += v;
  op.conv.batch += op.conv.batch > 0 ? v : 0;
  if (op.vec.rows > 0) {
    const double grow = static_cast<double>(op.vec.rows + v) / static_cast<double>(op.vec.rows);
    op.vec.rows += v;
    op.vec.bytes_read *= grow;
    op.vec.bytes_written *= grow;
  }
}

struct Workload {
  Predictor predictor = Predictor::from_directory(PM2LAT_PROFILE_DIR);
  KernelClassCache classes;
  std::vector<KernelRecord> records;
  std::vector<const KernelClass*> record_classes;

  std::optional<std::filesystem::path> trace_file = test::measurement_file(kTrace);

  Workload() {
    if (!trace_file) return;
    KinetoTrace trace = read_kineto_trace(*trace_file);
    const TraceRecords one = records_from_trace(trace, classes);
    records.reserve(kRecords);
    record_classes.reserve(kRecords);
    const std::uint64_t period = one.records.back().ts_ns + 10'000;
    // Variants per template pair so that distinct pairs are kRecords / kDistinctShare.
    std::unordered_set<std::string> pairs;
    std::string key;
    for (std::size_t i = 0; i < one.records.size(); ++i) {
      PredictionCache::key_of(one.records[i], *one.classes[i], PredictOptions{}, key);
      pairs.insert(key);
    }
    const std::size_t variants = kRecords / kDistinctShare / pairs.size();
    for (std::size_t i = 0; i < kRecords; ++i) {
      const std::size_t j = i % one.records.size();
      KernelRecord r = one.records[j];
      const std::size_t repetition = i / one.records.size();
      vary(r, static_cast<std::int64_t>(repetition % variants));
      r.seq = i;
      r.ts_ns += (i / one.records.size()) * period;
      records.push_back(std::move(r));
      record_classes.push_back(one.classes[j]);
    }
  }
};

Workload& workload() {
  static Workload w;
  return w;
}

void BM_ReplayPredictAndSummarize(benchmark::State& state) {
  Workload& w = workload();
  if (!w.trace_file) {
    state.SkipWithError(test::missing_measurements(kTrace).c_str());
    return;
  }
  const DeviceSpec* source = w.predictor.catalogue().find("H100-SXM");
  for (auto _ : state) {
    // A fresh predictor per iteration: nothing memoised carries over between runs.
    RunPredictor targets(w.predictor, {"H100", "A100", "L4", "B200"});
    RunTable table;
    RankInfo rank;
    rank.gpu = "H100-SXM";
    table.add_rank(rank);
    targets.add_columns(table);
    predict_records(targets, w.records, w.record_classes, source, 0, table);
    const RunSummary s = summarize(table);
    benchmark::DoNotOptimize(s.accuracy.predicted_us);
    state.counters["distinct_pairs"] = static_cast<double>(targets.cache().size());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kRecords));
  state.counters["predictions"] = benchmark::Counter(
      static_cast<double>(state.iterations() * kRecords * 4), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ReplayPredictAndSummarize)->Unit(benchmark::kMillisecond)->Iterations(3);

// Reading a trace: JSON parse and event extraction, per byte of uncompressed trace.
void BM_ParseKinetoTrace(benchmark::State& state) {
  const auto file = test::measurement_file(kTrace);
  if (!file) {
    state.SkipWithError(test::missing_measurements(kTrace).c_str());
    return;
  }
  const std::string text = read_input_file(*file);
  for (auto _ : state) {
    KinetoTrace t = parse_kineto_trace(text, "demo");
    benchmark::DoNotOptimize(t.kernels.size());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseKinetoTrace)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
