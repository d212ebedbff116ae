#include "pm2lat/reports/eval/bounds_cases.h"

#include "pm2lat/classifier.h"
#include "pm2lat/reports/replay/gpu_inference.h"
#include "pm2lat/reports/replay/kineto_trace.h"
#include "pm2lat/reports/replay/trace_records.h"

namespace pm2lat::reports {

void add_trace_bounds_cases(const std::filesystem::path& trace, Predictor& predictor,
                            std::vector<BoundsCase>& cases) {
  const DeviceCatalogue& catalogue = predictor.catalogue();
  KinetoTrace kineto = read_kineto_trace(trace);
  KernelClassCache classes;
  TraceRecords records = records_from_trace(kineto, classes);
  std::string gpu = records.gpu;
  if (gpu.empty()) {
    std::vector<std::string> names;
    for (const auto& r : records.records) names.push_back(r.launch.name);
    gpu = infer_trace_gpu(predictor, names, records.records, records.classes).device;
  }
  const DeviceSpec* source =
      gpu.empty() ? nullptr : catalogue.stand_in(gpu, records.gpu_hardware).spec;
  std::string set = trace.filename().string();
  set = set.substr(0, set.find(".json"));
  for (std::size_t i = 0; i < records.records.size(); ++i)
    cases.push_back({set, std::move(records.records[i]), *records.classes[i], source, false});
}

void add_table_bounds_cases(const std::vector<calibrate::MeasuredCall>& calls,
                            const std::string& set, bool graph_replay,
                            const DeviceCatalogue& catalogue, std::vector<BoundsCase>& cases) {
  for (const auto& c : calls) {
    const DeviceSpec* source = catalogue.find(c.device);
    if (source == nullptr) continue;
    cases.push_back({set, c.record,
                     c.kernel_class ? *c.kernel_class : classify_kernel(c.record.launch.name),
                     source, graph_replay});
  }
}

}  // namespace pm2lat::reports
