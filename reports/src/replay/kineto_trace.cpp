// Kineto trace parsing: a filtering DOM parse. nlohmann's parser callback hands over each
// trace event when it is complete; the event is turned into a TraceKernel/TraceOp/
// TraceLaunch and dropped, so memory stays proportional to what replay keeps.
#include "pm2lat/reports/replay/kineto_trace.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>

#include "pm2lat/reports/eval/progress_bar.h"
#include "pm2lat/reports/input_file.h"
#include "pm2lat/text.h"

namespace pm2lat::reports {

std::uint32_t StringTable::intern(std::string_view s) {
  if (auto it = index_.find(s); it != index_.end()) return it->second;
  strings_.emplace_back(s);
  const auto id = static_cast<std::uint32_t>(strings_.size() - 1);
  index_.emplace(std::string_view(strings_.back()), id);
  return id;
}

const TraceDevice* KinetoTrace::device(std::int32_t id) const noexcept {
  for (const auto& d : devices) {
    if (d.id == id) return &d;
  }
  return nullptr;
}

namespace {

using nlohmann::json;

// ---- tolerant field access: a garbled field gives the default, never an exception ----

const json* field(const json& obj, std::initializer_list<const char*> names) {
  if (!obj.is_object()) return nullptr;
  for (const char* n : names) {
    auto it = obj.find(n);
    if (it != obj.end() && !it->is_null()) return &*it;
  }
  return nullptr;
}

double number_or(const json* v, double fallback) {
  if (v == nullptr) return fallback;
  if (v->is_number()) {
    const double d = v->get<double>();
    return std::isfinite(d) ? d : fallback;
  }
  if (v->is_string()) {
    // Some exporters quote numbers; accept them, nothing else.
    const std::string& s = v->get_ref<const std::string&>();
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (end != s.c_str() && *end == '\0' && std::isfinite(d)) return d;
  }
  return fallback;
}

std::int64_t int_or(const json* v, std::int64_t fallback) {
  const double d = number_or(v, std::numeric_limits<double>::quiet_NaN());
  if (!std::isfinite(d) || d < -9.2e18 || d > 9.2e18) return fallback;
  return static_cast<std::int64_t>(d);
}

std::uint32_t u32_or(const json* v, std::uint32_t fallback) {
  const std::int64_t i = int_or(v, -1);
  if (i < 0 || i > std::numeric_limits<std::uint32_t>::max()) return fallback;
  return static_cast<std::uint32_t>(i);
}

std::string string_or(const json* v, std::string fallback = {}) {
  if (v != nullptr && v->is_string()) return v->get<std::string>();
  return fallback;
}

Dim3 dim3_or(const json* v) {
  Dim3 d;
  if (v == nullptr || !v->is_array() || v->empty()) return d;
  std::uint32_t xyz[3] = {1, 1, 1};
  for (std::size_t i = 0; i < 3 && i < v->size(); ++i) xyz[i] = std::max(1u, u32_or(&(*v)[i], 1));
  d.x = xyz[0];
  d.y = xyz[1];
  d.z = xyz[2];
  return d;
}

// A JSON array of integers, or nullopt if `v` is anything else.
bool int_array(const json& v, std::vector<std::int64_t>& out) {
  if (!v.is_array()) return false;
  out.clear();
  out.reserve(v.size());
  for (const auto& e : v) {
    if (!e.is_number()) return false;
    out.push_back(int_or(&e, 0));
  }
  return true;
}

// Types whose empty "Input Dims" entry means "no tensor" rather than a 0-dim tensor
// (tensor lists are recorded as [] in most PyTorch versions).
bool is_scalar_type(std::string_view t) {
  return t.empty() || t == "Scalar" || t == "ScalarList" || t == "None" || t == "Device" ||
         t == "Layout" || t == "ScalarType" || t == "MemoryFormat" || t == "GenericList" ||
         t == "TensorList" || t == "Generator" || t == "Storage" || t == "Stream" || t == "string";
}

std::vector<OpInput> op_inputs(const json& args) {
  std::vector<OpInput> inputs;
  const json* dims = field(args, {"Input Dims", "Input dims", "input_dims"});
  const json* types = field(args, {"Input type", "Input types", "input_type"});
  const json* strides = field(args, {"Input Strides", "Input strides", "input_strides"});
  const json* concrete = field(args, {"Concrete Inputs", "Concrete inputs", "concrete_inputs"});
  std::size_t n = 0;
  for (const json* j : {dims, types, strides, concrete}) {
    if (j != nullptr && j->is_array()) n = std::max(n, j->size());
  }
  // Far more inputs than any operator has means a garbled field: keep a sane bound.
  n = std::min<std::size_t>(n, 4096);
  inputs.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    OpInput& in = inputs[i];
    if (types != nullptr && types->is_array() && i < types->size())
      in.type = string_or(&(*types)[i]);
    if (concrete != nullptr && concrete->is_array() && i < concrete->size()) {
      const json& c = (*concrete)[i];
      in.concrete = c.is_string() ? c.get<std::string>() : (c.is_null() ? "" : c.dump());
    }
    if (dims != nullptr && dims->is_array() && i < dims->size()) {
      const json& d = (*dims)[i];
      std::vector<std::int64_t> shape;
      if (int_array(d, shape)) {
        // [] is a 0-dim tensor only when the type names an element type.
        if (!shape.empty() || !is_scalar_type(in.type)) in.shapes.push_back(std::move(shape));
      } else if (d.is_array()) {
        for (const auto& e : d) {
          if (int_array(e, shape)) in.shapes.push_back(shape);
        }
      }
    }
    if (strides != nullptr && strides->is_array() && i < strides->size()) {
      std::vector<std::int64_t> s;
      if (int_array((*strides)[i], s)) in.strides = std::move(s);
    }
  }
  return inputs;
}

CollectiveArgs collective_args(const json& args) {
  CollectiveArgs c;
  c.name = string_or(field(args, {"Collective name", "collective_name"}));
  c.in_elements = int_or(field(args, {"In msg nelems", "In msg size"}), -1);
  c.out_elements = int_or(field(args, {"Out msg nelems", "Out msg size"}), -1);
  c.dtype = string_or(field(args, {"dtype"}));
  c.group_size = static_cast<std::int32_t>(
      std::clamp<std::int64_t>(int_or(field(args, {"Group size"}), 0), 0, 1 << 24));
  return c;
}

enum class EventKind { kOther, kKernel, kOp, kAnnotation, kLaunch, kCopy, kFill };

EventKind kind_of(const std::string& cat_lower) {
  if (cat_lower == "kernel") return EventKind::kKernel;
  if (cat_lower == "gpu_memcpy") return EventKind::kCopy;
  if (cat_lower == "gpu_memset") return EventKind::kFill;
  if (cat_lower == "cpu_op" || cat_lower == "operator") return EventKind::kOp;
  if (cat_lower == "user_annotation") return EventKind::kAnnotation;
  if (cat_lower == "cuda_runtime" || cat_lower == "runtime" || cat_lower == "cuda_driver")
    return EventKind::kLaunch;
  return EventKind::kOther;
}

class TraceBuilder {
 public:
  explicit TraceBuilder(KinetoTrace& trace) : t_(trace) {}

  void event(const json& e) {
    if (!e.is_object()) return;
    ++events_;
    const std::string ph = string_or(field(e, {"ph"}), "X");
    if (ph != "X") return;
    const EventKind kind = kind_of(ascii_lower(string_or(field(e, {"cat"}))));
    if (kind == EventKind::kOther) return;
    const json* args_p = field(e, {"args"});
    static const json kEmpty = json::object();
    const json& args = (args_p != nullptr && args_p->is_object()) ? *args_p : kEmpty;
    const double ts = number_or(field(e, {"ts"}), std::numeric_limits<double>::quiet_NaN());
    // A kernel's duration is its measurement: without one it has nothing to be judged by. An
    // operator without one still gives its shapes.
    const double dur =
        number_or(field(e, {"dur"}),
                  kind == EventKind::kKernel ? std::numeric_limits<double>::quiet_NaN() : 0.0);
    if (!std::isfinite(ts) || !std::isfinite(dur) || dur < 0) {
      if (kind == EventKind::kKernel) ++t_.skipped_kernels;
      return;
    }
    if (kind == EventKind::kCopy) {
      ++t_.transfers.copies;
      t_.transfers.copy_us += dur;
      return;
    }
    if (kind == EventKind::kFill) {
      ++t_.transfers.memsets;
      t_.transfers.memset_us += dur;
      return;
    }
    const std::string name = string_or(field(e, {"name"}));
    switch (kind) {
      case EventKind::kKernel: {
        TraceKernel k;
        k.name = t_.strings.intern(name);
        k.ts_us = ts;
        k.dur_us = dur;
        k.device = static_cast<std::int32_t>(int_or(field(args, {"device"}), 0));
        k.stream = int_or(field(args, {"stream"}), 0);
        k.correlation = int_or(field(args, {"correlation", "correlation id"}), -1);
        k.grid = dim3_or(field(args, {"grid"}));
        k.block = dim3_or(field(args, {"block"}));
        k.registers = u32_or(field(args, {"registers per thread"}), 0);
        k.shared_mem = u32_or(field(args, {"shared memory"}), 0);
        k.collective = collective_args(args);
        t_.kernels.push_back(std::move(k));
        break;
      }
      case EventKind::kOp:
      case EventKind::kAnnotation: {
        TraceOp op;
        op.name = t_.strings.intern(name);
        op.annotation = kind == EventKind::kAnnotation;
        op.pid = int_or(field(e, {"pid"}), 0);
        op.tid = int_or(field(e, {"tid"}), 0);
        op.ts_us = ts;
        op.dur_us = dur;
        op.inputs = op_inputs(args);
        op.collective = collective_args(args);
        t_.ops.push_back(std::move(op));
        break;
      }
      case EventKind::kLaunch: {
        const std::int64_t corr = int_or(field(args, {"correlation", "correlation id"}), -1);
        if (corr < 0) break;
        TraceLaunch l;
        l.name = t_.strings.intern(name);
        l.pid = int_or(field(e, {"pid"}), 0);
        l.tid = int_or(field(e, {"tid"}), 0);
        l.ts_us = ts;
        t_.launches[corr] = l;
        break;
      }
      case EventKind::kCopy:
      case EventKind::kFill:
      case EventKind::kOther: break;
    }
  }

  void device_properties(const json& list) {
    if (!list.is_array()) return;
    for (const auto& d : list) {
      if (!d.is_object()) continue;
      TraceDevice dev;
      dev.id = static_cast<int>(int_or(field(d, {"id"}), 0));
      dev.name = string_or(field(d, {"name"}));
      dev.sm_count = static_cast<int>(int_or(field(d, {"numSms"}), 0));
      dev.cc_major = static_cast<int>(int_or(field(d, {"computeMajor"}), 0));
      dev.cc_minor = static_cast<int>(int_or(field(d, {"computeMinor"}), 0));
      t_.devices.push_back(std::move(dev));
    }
  }

  void distributed_info(const json& info) {
    t_.rank = static_cast<std::int32_t>(int_or(field(info, {"rank"}), -1));
    t_.world_size = static_cast<std::int32_t>(
        std::max<std::int64_t>(0, int_or(field(info, {"world_size"}), 0)));
  }

  std::size_t events() const noexcept { return events_; }

 private:
  KinetoTrace& t_;
  std::size_t events_ = 0;
};

// An input iterator over the text that reports how far the parser got, so a progress bar
// can follow one long parse.
class ProgressIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  ProgressIterator() = default;
  ProgressIterator(const char* p, const char* base, ProgressBar* bar)
      : p_(p), base_(base), bar_(bar) {}
  reference operator*() const { return *p_; }
  ProgressIterator& operator++() {
    ++p_;
    if (((p_ - base_) & 0xFFFFF) == 0 && bar_ != nullptr)
      bar_->update(static_cast<std::uint64_t>(p_ - base_));
    return *this;
  }
  ProgressIterator operator++(int) {
    ProgressIterator old = *this;
    ++*this;
    return old;
  }
  [[maybe_unused]] friend bool operator==(const ProgressIterator& a, const ProgressIterator& b) {
    return a.p_ == b.p_;
  }
  friend bool operator!=(const ProgressIterator& a, const ProgressIterator& b) {
    return a.p_ != b.p_;
  }

 private:
  const char* p_ = nullptr;
  const char* base_ = nullptr;
  ProgressBar* bar_ = nullptr;
};

std::string describe_parse_error(const json::parse_error& e, std::size_t size) {
  if (e.byte >= size) return "the JSON ends early (truncated file?)";
  return "invalid JSON at byte " + std::to_string(e.byte);
}

}  // namespace

KinetoTrace parse_kineto_trace(std::string_view text, const std::string& source,
                               ProgressBar* progress) {
  KinetoTrace trace;
  trace.source = source;
  TraceBuilder builder(trace);
  enum class Root { kUnknown, kObject, kArray } root = Root::kUnknown;
  std::string top_key;
  bool saw_events = false;

  json::parser_callback_t cb = [&](int depth, json::parse_event_t ev, json& parsed) -> bool {
    using E = json::parse_event_t;
    if (depth == 0 && (ev == E::object_start || ev == E::array_start)) {
      if (root == Root::kUnknown) root = ev == E::object_start ? Root::kObject : Root::kArray;
      if (root == Root::kArray) saw_events = true;
      return true;
    }
    if (root == Root::kObject && depth == 1 && ev == E::key) {
      top_key = parsed.is_string() ? parsed.get<std::string>() : "";
      // Only these top-level members are used; the others are parsed but never built.
      return top_key == "traceEvents" || top_key == "deviceProperties" ||
             top_key == "distributedInfo";
    }
    const bool in_events = (root == Root::kArray && depth == 1) ||
                           (root == Root::kObject && depth == 2 && top_key == "traceEvents");
    if (in_events && ev == E::object_end) {
      builder.event(parsed);
      return false;  // consumed: do not keep it in the document
    }
    if (root == Root::kObject && depth == 1 && top_key == "traceEvents" && ev == E::array_end) {
      saw_events = true;
    }
    return true;
  };

  json doc;
  try {
    if (progress != nullptr && progress->enabled()) {
      progress->stage("parsing " + source, text.size());
      const char* base = text.data();
      doc = json::parse(ProgressIterator(base, base, progress),
                        ProgressIterator(base + text.size(), base, progress), cb);
    } else {
      doc = json::parse(text.begin(), text.end(), cb);
    }
  } catch (const json::parse_error& e) {
    throw InputError(source + ": not a valid trace: " + describe_parse_error(e, text.size()));
  } catch (const json::exception& e) {
    throw InputError(source + ": not a valid trace: " + e.what());
  }
  if (doc.is_object()) {
    if (auto it = doc.find("deviceProperties"); it != doc.end()) builder.device_properties(*it);
    if (auto it = doc.find("distributedInfo"); it != doc.end()) builder.distributed_info(*it);
  }
  if (!saw_events) {
    throw InputError(source + ": not a PyTorch profiler trace (no \"traceEvents\" array)");
  }
  if (trace.kernels.empty() && trace.skipped_kernels > 0) {
    throw InputError(source + ": none of the trace's " + std::to_string(trace.skipped_kernels) +
                     " GPU kernel events has a start time and a duration");
  }
  if (trace.kernels.empty()) {
    throw InputError(source + ": the trace has no GPU kernel events (" +
                     std::to_string(builder.events()) +
                     " events; was it recorded with ProfilerActivity.CUDA?)");
  }
  std::stable_sort(trace.kernels.begin(), trace.kernels.end(),
                   [](const TraceKernel& a, const TraceKernel& b) { return a.ts_us < b.ts_us; });
  trace.whole_us_timestamps =
      std::all_of(trace.kernels.begin(), trace.kernels.end(), [](const TraceKernel& k) {
        return k.ts_us == std::floor(k.ts_us) && k.dur_us == std::floor(k.dur_us);
      });
  return trace;
}

KinetoTrace read_kineto_trace(const std::filesystem::path& file, ProgressBar* progress) {
  const std::string text = read_input_file(file, progress);
  return parse_kineto_trace(text, file.filename().string(), progress);
}

}  // namespace pm2lat::reports
