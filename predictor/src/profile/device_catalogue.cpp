#include "pm2lat/device_catalogue.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "pm2lat/mig_partition.h"
#include "pm2lat/text.h"
#include "profile/json_fields.h"

namespace pm2lat {
namespace {

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Edit distance between two keys, for "did you mean" suggestions.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      cur[j] =
          std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

UnknownDeviceError::UnknownDeviceError(std::string name, std::vector<std::string> close,
                                       std::string_view why)
    : std::runtime_error("unknown GPU '" + name + "'" +
                         (why.empty() ? std::string() : ": " + std::string(why)) +
                         (close.empty() ? std::string() : "; did you mean: " + join(close)) +
                         " (`pm2lat devices` lists every known GPU)"),
      name_(std::move(name)),
      close_(std::move(close)) {}

std::string device_name_key(std::string_view name) {
  std::string key;
  for (char c : name) {
    c = ascii_lower(c);
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) key.push_back(c);
  }
  return key;
}

std::string device_model_key(std::string_view name) {
  std::string model;
  std::size_t i = 0;
  while (i < name.size()) {
    std::size_t j = i;
    std::string word;
    bool digit = false;
    for (; j < name.size(); ++j) {
      char c = name[j];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c >= '0' && c <= '9') digit = true;
      if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
        word.push_back(c);
      else
        break;
    }
    i = j + 1;
    if (word.empty() || word == "nvidia" || word == "tesla" || word == "geforce") continue;
    model += word;
    if (digit) return model;
  }
  return "";
}

double DeviceSpec::peak_tflops(DType compute) const noexcept {
  auto first = [](std::initializer_list<double> v) {
    for (double x : v) {
      if (x > 0) return x;
    }
    return 0.0;
  };
  switch (compute) {
    case DType::kFp64: return first({fp64_tflops, fp32_tflops / 32});
    case DType::kTf32: return first({tf32_tflops, fp32_tflops});
    case DType::kFp16: return first({fp16_tflops, fp32_tflops});
    case DType::kBf16: return first({bf16_tflops, fp16_tflops, fp32_tflops});
    case DType::kFp8E4M3:
    case DType::kFp8E5M2: return first({fp8_tflops, bf16_tflops, fp16_tflops, fp32_tflops});
    case DType::kFp4E2M1: return first({fp4_tflops, fp8_tflops, bf16_tflops, fp32_tflops});
    case DType::kInt8: return first({int8_tops, fp16_tflops, fp32_tflops});
    default: return fp32_tflops;
  }
}

DeviceCatalogue::DeviceCatalogue() : partitions_(std::make_shared<Partitions>()) {}

DeviceCatalogue::DeviceCatalogue(std::vector<DeviceSpec> specs)
    : specs_(std::move(specs)), partitions_(std::make_shared<Partitions>()) {}

// A copy derives its own partitions: theirs point at the copy's entries.
DeviceCatalogue::DeviceCatalogue(const DeviceCatalogue& other)
    : specs_(other.specs_), partitions_(std::make_shared<Partitions>()) {}

DeviceCatalogue& DeviceCatalogue::operator=(const DeviceCatalogue& other) {
  if (this != &other) {
    specs_ = other.specs_;
    partitions_ = std::make_shared<Partitions>();
  }
  return *this;
}

DeviceCatalogue::DeviceCatalogue(DeviceCatalogue&&) noexcept = default;
DeviceCatalogue& DeviceCatalogue::operator=(DeviceCatalogue&&) noexcept = default;
DeviceCatalogue::~DeviceCatalogue() = default;

void DeviceCatalogue::add(DeviceSpec spec) { specs_.push_back(std::move(spec)); }

const DeviceSpec* DeviceCatalogue::find(std::string_view name) const noexcept {
  const std::string key = device_name_key(name);
  if (key.empty()) return nullptr;
  for (const auto& s : specs_) {
    if (device_name_key(s.name) == key) return &s;
    for (const auto& a : s.aliases) {
      if (device_name_key(a) == key) return &s;
    }
  }
  // A unique-enough prefix: the first catalogue entry whose name starts with the key
  // ("h100" -> "H100-SXM": entries of a family are listed default variant first). The key
  // must name a whole model ("a10" must not match "A100"), so the next character of the
  // catalogue key must not be a digit.
  for (const auto& s : specs_) {
    const std::string sk = device_name_key(s.name);
    if (sk.size() > key.size() && sk.compare(0, key.size(), key) == 0 &&
        !(sk[key.size()] >= '0' && sk[key.size()] <= '9')) {
      return &s;
    }
  }
  // "nvidia" / "tesla" / "geforce" prefixes and memory suffixes: strip and retry once.
  for (std::string_view prefix : {"nvidia", "tesla", "geforce"}) {
    if (key.rfind(prefix, 0) == 0 && key.size() > prefix.size()) {
      return find(key.substr(prefix.size()));
    }
  }
  return nullptr;
}

namespace {

// The letters of each word of a name ("SXM3" -> "sxm", "32GB" -> "gb"): what variants of one
// model share (form factor, memory type) whatever their numbers.
std::vector<std::string> word_stems(std::string_view name) {
  std::vector<std::string> stems;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty() && std::find(stems.begin(), stems.end(), cur) == stems.end())
      stems.push_back(cur);
    cur.clear();
  };
  for (char c : name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c >= 'a' && c <= 'z')
      cur.push_back(c);
    else if (!(c >= '0' && c <= '9'))
      flush();
  }
  flush();
  return stems;
}

// Whether a name is a laptop part's ("NVIDIA GeForce RTX 4090 Laptop GPU"): it shares its
// desktop model's number, not its chip (that one is an AD103 of 76 SMs, the desktop RTX 4090
// an AD102 of 128), so its name says less than its hardware (closest_by_hardware).
// `stems` are the name's word_stems.
bool names_laptop_part(const std::vector<std::string>& stems) {
  return std::any_of(stems.begin(), stems.end(),
                     [](const std::string& w) { return w == "laptop" || w == "mobile"; });
}

}  // namespace

const DeviceSpec& DeviceCatalogue::resolve(std::string_view name) const {
  if (const DeviceSpec* s = find(name)) return *s;
  // A target named as a MIG partition of a listed GPU ("H100 MIG 3g.40gb"): its share of it.
  if (const std::optional<MigDeviceName> mig = parse_mig_device_name(name)) {
    const DeviceSpec* whole = find(mig->gpu);
    if (whole != nullptr && mig_profile_fits(*whole, mig->profile))
      return partition(*whole, *mig, 0);
  }
  if (names_laptop_part(word_stems(name))) {
    throw UnknownDeviceError(std::string(name), {},
                             "a laptop part, another chip than the desktop card of its number; a "
                             "run on it is priced as the GPU of its compute capability nearest "
                             "in SMs");
  }
  const std::string key = device_name_key(name);
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& s : specs_) {
    std::size_t best = edit_distance(key, device_name_key(s.name));
    for (const auto& a : s.aliases) best = std::min(best, edit_distance(key, device_name_key(a)));
    scored.emplace_back(best, s.name);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> close;
  for (const auto& [d, n] : scored) {
    if (close.size() >= 3 || d > std::max<std::size_t>(3, key.size() / 2)) break;
    close.push_back(n);
  }
  throw UnknownDeviceError(std::string(name), std::move(close));
}

const DeviceSpec* DeviceCatalogue::closest_relative(std::string_view name) const noexcept {
  try {
    std::string model = device_model_key(name);
    if (model.empty()) return nullptr;
    const std::vector<std::string> stems = word_stems(name);
    if (names_laptop_part(stems)) return nullptr;
    // Words every variant's names may carry say nothing of which variant: the vendor and brand,
    // and a memory size's unit ("94GB" would otherwise tie "H100 NVL 94GB" with every entry
    // listing a size, and the default variant wins the tie over the NVL it names).
    auto says_variant = [](const std::string& w) {
      return w != "nvidia" && w != "tesla" && w != "geforce" && w != "gb";
    };
    auto shared = [&](std::string_view other) {
      std::size_t n = 0;
      for (const auto& w : word_stems(other))
        if (says_variant(w)) n += std::count(stems.begin(), stems.end(), w);
      return n;
    };
    // Among the entries of the same model, the one sharing most words with the name (form
    // factor, memory); the catalogue's first (default) variant on a tie.
    auto same_model = [&](const std::string& m) -> const DeviceSpec* {
      const DeviceSpec* best = nullptr;
      std::size_t best_shared = 0;
      for (const auto& s : specs_) {
        std::size_t here = 0;
        bool match = false;
        auto consider = [&](std::string_view n) {
          if (device_model_key(n) != m) return;
          match = true;
          here = std::max(here, shared(n));
        };
        consider(s.name);
        for (const auto& alias : s.aliases) consider(alias);
        if (match && (best == nullptr || here > best_shared)) {
          best = &s;
          best_shared = here;
        }
      }
      return best;
    };
    if (const DeviceSpec* s = same_model(model)) return s;
    // "a100x", "h100e": the model without its suffix letters.
    while (!model.empty() && model.back() >= 'a' && model.back() <= 'z') model.pop_back();
    if (!model.empty()) return same_model(model);
  } catch (...) {}
  return nullptr;
}

const DeviceSpec* DeviceCatalogue::closest_by_hardware(GpuHardware hw) const noexcept {
  if (hw.cc_major <= 0 || hw.cc_minor < 0 || hw.sm_count <= 0) return nullptr;
  const DeviceSpec* best = nullptr;
  double best_distance = 0;
  for (const auto& s : specs_) {
    if (s.cc_major != hw.cc_major || s.cc_minor != hw.cc_minor || s.sm_count <= 0) continue;
    const double distance = std::abs(std::log(static_cast<double>(s.sm_count) / hw.sm_count));
    if (best == nullptr || distance < best_distance) {
      best = &s;
      best_distance = distance;
    }
  }
  return best;
}

struct DeviceCatalogue::Partitions {
  std::mutex mutex;
  std::deque<DeviceSpec> specs;
};

const DeviceSpec& DeviceCatalogue::partition(const DeviceSpec& whole, const MigDeviceName& mig,
                                             int reported_sm_count) const {
  if (partitions_ == nullptr)  // moved from
    throw std::logic_error("a moved-from device catalogue derives no MIG partition");
  const std::string name = mig_partition_name(whole, mig.profile_name);
  std::scoped_lock lock(partitions_->mutex);
  for (const DeviceSpec& p : partitions_->specs) {
    if (p.name == name && (reported_sm_count <= 0 || p.sm_count == reported_sm_count)) return p;
  }
  return partitions_->specs.emplace_back(
      mig_partition_spec(whole, mig.profile, name, reported_sm_count));
}

StandIn DeviceCatalogue::stand_in(std::string_view name, GpuHardware hardware) const noexcept {
  const std::optional<MigDeviceName> mig = parse_mig_device_name(name);
  if (!mig || find(name) != nullptr) return whole_gpu(name, hardware);
  // The whole GPU by its name only: the hardware reported is the partition's.
  const StandIn whole = whole_gpu(mig->gpu, GpuHardware{});
  if (whole.spec == nullptr || !mig_profile_fits(*whole.spec, mig->profile))
    return whole_gpu(name, hardware);
  try {
    return {&partition(*whole.spec, *mig, hardware.sm_count), StandIn::Found::kMigPartition};
  } catch (...) {  // out of memory: the whole GPU, said as such
    return whole;
  }
}

StandIn DeviceCatalogue::whole_gpu(std::string_view name, GpuHardware hardware) const noexcept {
  if (const DeviceSpec* s = find(name)) return {s, StandIn::Found::kNamed};
  if (const DeviceSpec* s = closest_relative(name)) return {s, StandIn::Found::kSameModel};
  if (const DeviceSpec* s = closest_by_hardware(hardware))
    return {s, StandIn::Found::kSameArchitecture};
  return {};
}

std::string StandIn::note(std::string_view name, GpuHardware hw) const {
  if (found == Found::kNamed) return {};
  std::string out = "GPU '" + std::string(name) + "' is not in the device catalogue: ";
  switch (found) {
    case Found::kSameModel:
      return out + "predicted and scored as its closest relative " + spec->name;
    case Found::kSameArchitecture:
      return out + "predicted and scored as " + spec->name + ", of the same compute capability (" +
             std::to_string(hw.cc_major) + "." + std::to_string(hw.cc_minor) +
             ") and nearest in SMs (" + std::to_string(spec->sm_count) + " against its " +
             std::to_string(hw.sm_count) + ")";
    case Found::kMigPartition: {
      const DeviceSpec& whole = *spec->partition_of;
      return fmt::format(
          "GPU '{}' is a MIG partition of {}: predicted and scored as {} of its {} SMs{}, "
          "{:.0f} of its {:.0f} GB/s and {:.1f} of its {:.1f} MB of L2",
          name, whole.name, spec->sm_count, whole.sm_count,
          hw.sm_count > 0 ? "" : " (not reported: its whole compute slices)", spec->mem_bw_gbps,
          whole.mem_bw_gbps, spec->l2_mb, whole.l2_mb);
    }
    case Found::kNamed:
    case Found::kNone: break;
  }
  return out + "no accuracy on the run's own GPU";
}

DeviceCatalogue DeviceCatalogue::load(const std::filesystem::path& file) {
  const auto root_json = json_fields::parse_file(file);
  const json_fields::Reader root(root_json, file.string(), "");
  json_fields::check_schema(root, "pm2lat.devices", 1);
  const auto devices = root.child("devices");
  std::vector<DeviceSpec> specs;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto d = devices.at(i);
    DeviceSpec s;
    s.name = d.child("name").string();
    if (d.has("aliases")) {
      for (std::size_t a = 0; a < d.child("aliases").size(); ++a) {
        s.aliases.push_back(d.child("aliases").at(a).string());
      }
    }
    s.arch = d.string("arch", "");
    const std::string cc = d.child("compute_capability").string();
    const auto dot = cc.find('.');
    if (dot == std::string::npos) d.child("compute_capability").fail("expected 'major.minor'");
    try {
      s.cc_major = std::stoi(cc.substr(0, dot));
      s.cc_minor = std::stoi(cc.substr(dot + 1));
    } catch (const std::exception&) {
      d.child("compute_capability").fail("expected 'major.minor'");
    }
    s.sm_count = static_cast<int>(d.child("sm_count").integer());
    if (s.sm_count <= 0) d.child("sm_count").fail("must be positive");
    s.boost_clock_mhz = d.child("boost_clock_mhz").non_negative();
    s.mem_bw_gbps = d.child("mem_bw_gbps").non_negative();
    if (s.mem_bw_gbps <= 0) d.child("mem_bw_gbps").fail("must be positive");
    s.mem_gb = d.number("mem_gb", 0);
    s.l2_mb = d.number("l2_mb", 0);
    s.smem_per_sm_bytes = static_cast<std::uint32_t>(d.number("smem_per_sm_kb", 0) * 1024);
    s.fp32_tflops = d.child("fp32_tflops").non_negative();
    if (s.fp32_tflops <= 0) d.child("fp32_tflops").fail("must be positive");
    s.fp64_tflops = d.number("fp64_tflops", 0);
    s.tf32_tflops = d.number("tf32_tflops", 0);
    s.fp16_tflops = d.number("fp16_tflops", 0);
    s.bf16_tflops = d.number("bf16_tflops", 0);
    s.fp8_tflops = d.number("fp8_tflops", 0);
    s.fp4_tflops = d.number("fp4_tflops", 0);
    s.int8_tops = d.number("int8_tops", 0);
    s.nvlink_gbps = d.number("nvlink_gbps", 0);
    s.pcie_gbps = d.number("pcie_gbps", 0);
    s.host_cpu = d.string("host_cpu", "");
    if (d.has("mig_compute_slices")) {
      s.mig_compute_slices = static_cast<int>(d.child("mig_compute_slices").integer());
      if (s.mig_compute_slices <= 0) d.child("mig_compute_slices").fail("must be positive");
    }
    specs.push_back(std::move(s));
  }
  return DeviceCatalogue(std::move(specs));
}

}  // namespace pm2lat
