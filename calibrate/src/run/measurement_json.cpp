#include "pm2lat/calibrate/run/measurement_json.h"

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace pm2lat::calibrate::run {
namespace {

using nlohmann::json;

json dim3(const Dim3& d) { return json::array({d.x, d.y, d.z}); }

Dim3 dim3_from(const json& j) {
  Dim3 d;
  if (!j.is_array() || j.size() != 3) throw std::invalid_argument("dim3: expected [x, y, z]");
  d.x = j[0].get<std::uint32_t>();
  d.y = j[1].get<std::uint32_t>();
  d.z = j[2].get<std::uint32_t>();
  return d;
}

json kernel(const KernelObservation& k) {
  return json{{"name", k.name},
              {"grid", dim3(k.grid)},
              {"block", dim3(k.block)},
              {"cluster", dim3(k.cluster)},
              {"us", k.duration_us}};
}

KernelObservation kernel_from(const json& j) {
  KernelObservation k;
  k.name = j.at("name").get<std::string>();
  k.grid = dim3_from(j.at("grid"));
  k.block = dim3_from(j.at("block"));
  k.cluster = dim3_from(j.at("cluster"));
  k.duration_us = j.at("us").get<double>();
  return k;
}

json timing(const TimingSample& t) {
  return json{{"launches", t.launches},
              {"reps", t.reps},
              {"median_us", t.median_us},
              {"min_us", t.min_us},
              {"max_us", t.max_us}};
}

TimingSample timing_from(const json& j) {
  TimingSample t;
  t.launches = j.at("launches").get<std::int32_t>();
  t.reps = j.at("reps").get<std::int32_t>();
  t.median_us = j.at("median_us").get<double>();
  t.min_us = j.at("min_us").get<double>();
  t.max_us = j.at("max_us").get<double>();
  return t;
}

json algo(const GemmAlgo& a) {
  json data = json::array();
  for (std::uint64_t v : a.data) data.push_back(v);
  return json{{"data", data},       {"id", a.id},           {"tile", a.tile},
              {"stages", a.stages}, {"split_k", a.split_k}, {"swizzle", a.swizzle},
              {"custom", a.custom}, {"cluster", a.cluster}, {"workspace", a.workspace_bytes}};
}

GemmAlgo algo_from(const json& j) {
  GemmAlgo a;
  const json& data = j.at("data");
  if (!data.is_array() || data.size() != a.data.size())
    throw std::invalid_argument("algo: data needs 8 words");
  for (std::size_t i = 0; i < a.data.size(); ++i) a.data[i] = data[i].get<std::uint64_t>();
  a.id = j.at("id").get<std::int32_t>();
  a.tile = j.at("tile").get<std::int32_t>();
  a.stages = j.at("stages").get<std::int32_t>();
  a.split_k = j.at("split_k").get<std::int32_t>();
  a.swizzle = j.at("swizzle").get<std::int32_t>();
  a.custom = j.at("custom").get<std::int32_t>();
  a.cluster = j.at("cluster").get<std::int32_t>();
  a.workspace_bytes = j.at("workspace").get<std::uint64_t>();
  return a;
}

}  // namespace

std::string to_json_line(const TaskResult& r) {
  json j{{"task", r.task_id}, {"kind", std::string(to_string(r.kind))}, {"wall_s", r.wall_s}};
  if (!r.error.empty()) j["error"] = r.error;
  if (!r.gemm.empty()) {
    json runs = json::array();
    for (const GemmRun& g : r.gemm) {
      json k = json::array();
      for (const auto& o : g.kernels) k.push_back(kernel(o));
      json run{
          {"rank", g.rank}, {"algo", algo(g.algo)}, {"kernels", k}, {"timing", timing(g.timing)}};
      if (!g.error.empty()) run["error"] = g.error;
      runs.push_back(run);
    }
    j["gemm"] = runs;
  }
  if (r.kind == TaskKind::kMemory && r.error.empty()) {
    j["kernel"] = kernel(r.memory_kernel);
    j["timing"] = timing(r.memory_timing);
  }
  if (r.kind == TaskKind::kLaunch && r.error.empty()) {
    const LaunchOverhead& l = r.launch;
    j["launch"] = json{{"kernel", l.kernel},
                       {"kernel_us", l.kernel_us},
                       {"graph_per_launch_us", l.graph_per_launch_us},
                       {"single_call_us", l.single_call_us},
                       {"host_launch_us", l.host_launch_us}};
  }
  return j.dump();
}

TaskResult task_result_from_json(const std::string& line) {
  try {
    const json j = json::parse(line);
    TaskResult r;
    r.task_id = j.at("task").get<std::string>();
    const auto kind = parse_task_kind(j.at("kind").get<std::string>());
    if (!kind) throw std::invalid_argument("unknown task kind");
    r.kind = *kind;
    r.wall_s = j.value("wall_s", 0.0);
    r.error = j.value("error", std::string());
    if (j.contains("gemm")) {
      for (const json& g : j.at("gemm")) {
        GemmRun run;
        run.rank = g.at("rank").get<std::int32_t>();
        run.algo = algo_from(g.at("algo"));
        for (const json& k : g.at("kernels")) run.kernels.push_back(kernel_from(k));
        run.timing = timing_from(g.at("timing"));
        run.error = g.value("error", std::string());
        r.gemm.push_back(std::move(run));
      }
    }
    if (j.contains("kernel")) r.memory_kernel = kernel_from(j.at("kernel"));
    if (j.contains("timing")) r.memory_timing = timing_from(j.at("timing"));
    if (j.contains("launch")) {
      const json& l = j.at("launch");
      r.launch.kernel = l.at("kernel").get<std::string>();
      r.launch.kernel_us = l.at("kernel_us").get<double>();
      r.launch.graph_per_launch_us = l.at("graph_per_launch_us").get<double>();
      r.launch.single_call_us = l.at("single_call_us").get<double>();
      r.launch.host_launch_us = l.at("host_launch_us").get<double>();
    }
    return r;
  } catch (const json::exception& e) {
    throw std::invalid_argument(std::string("bad measurement line: ") + e.what());
  }
}

}  // namespace pm2lat::calibrate::run
