// The predictor: routes a kernel record to the model of its family on a target GPU. The
// routing table below is the one place that decides where a kernel goes; each model lives in
// its own unit under models/ and answers a ModelQuery.
#include "pm2lat/predictor.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <span>
#include <system_error>
#include <utility>

#include "pm2lat/models/attention_kernel.h"
#include "pm2lat/models/attention_predictor.h"
#include "pm2lat/models/bounded_prediction.h"
#include "pm2lat/models/broadcast_traffic.h"
#include "pm2lat/models/collective_model.h"
#include "pm2lat/models/conv_model.h"
#include "pm2lat/models/conv_predictor.h"
#include "pm2lat/models/donor_ranking.h"
#include "pm2lat/models/gemm_predictor.h"
#include "pm2lat/models/memory_family_predictor.h"
#include "pm2lat/models/operator_fit_predictor.h"
#include "pm2lat/models/roofline_model.h"
#include "pm2lat/models/scaled_gemm_predictor.h"
#include "pm2lat/profile_io.h"

namespace pm2lat {
namespace {

// When a step of a family's route applies, beyond the kernel's family itself.
enum class When : std::uint8_t {
  kAlways,
  kOpIsGemm,            // the launching call was a GEMM
  kOpIsConv,            // the launching call was a convolution (cuDNN runs GEMM kernels too)
  kLooksLikeAttention,  // an attention call, or a name the attention decoder knows
  kNoWorkStated,        // no bytes stated, and an elementwise-like call or none
  kBytesStated,         // the call states the bytes it moves
  kKernelTime,          // the caller wants kernel time, not a framework call's
};

struct Step {
  ModelRoute model;
  When when = When::kAlways;
};

using R = ModelRoute;
using W = When;

// The routes, per family. Before any of them, a collective call is a collective whatever its
// kernel's name. A model that does not know the kernel (no fit of its family, a helper it
// does not serve) declines, and the next step is tried.
constexpr Step kUnknownRoute[] = {
    {R::kAttention, W::kLooksLikeAttention}, {R::kUnnamedKernel, W::kNoWorkStated},
    {R::kScaledGemm, W::kOpIsGemm},          {R::kGemm, W::kOpIsGemm},
    {R::kOperatorFits, W::kBytesStated},     {R::kRoofline}};
// Low-precision GEMMs (FP8, block-scaled FP8, NVFP4) go to their calibrated backends first;
// a type no profile calibrated goes on to the wave model of another type (flag
// dtype_substituted or spec_scaled).
constexpr Step kGemmRoute[] = {
    {R::kConv, W::kOpIsConv}, {R::kScaledGemm, W::kOpIsGemm}, {R::kGemm}};
// Per-operator fits size a kernel by its call's bytes, else by what its launch implies
// (models/launch_work.h). A row kernel that neither sizes takes its family's geometry fit
// over the launched threads rather than a roofline of nothing.
constexpr Step kOperatorRoute[] = {{R::kOperatorFits}, {R::kShapelessRowFits}};
constexpr Step kKernelFamilyRoute[] = {{R::kFamilyFits}, {R::kOperatorFits}};
// Layer-norm and softmax kernels on a GPU whose own kernels were measured: those fits first,
// before per-operator tables timed as framework calls (or borrowed from another GPU).
// Elementwise kernels stay with the per-operator tables: their own-kernel fits pool too many
// operators (leave-one-trace-out, 30 ms of absolute error against 25 ms).
constexpr Step kRowRoute[] = {
    {R::kOwnKernelFits, W::kKernelTime}, {R::kOperatorFits}, {R::kShapelessRowFits}};
constexpr Step kConvRoute[] = {{R::kConv}, {R::kRoofline}};
constexpr Step kAttentionRoute[] = {{R::kAttention}};
constexpr Step kTritonTemplateRoute[] = {
    {R::kScaledGemm, W::kOpIsGemm}, {R::kGemm, W::kOpIsGemm}, {R::kRoofline}};
// Activation quantisation before a low-precision GEMM: the backend's quantisation model,
// else the per-operator fits by the bytes its call states; a launch with no stated bytes (a
// trace without shapes, a kernel launched outside any call) streams what its threads touch,
// as an unnamed kernel does, not a launch floor.
constexpr Step kQuantizeRoute[] = {
    {R::kScaledGemm}, {R::kOperatorFits}, {R::kUnnamedKernel, W::kNoWorkStated}};
constexpr Step kCollectiveRoute[] = {{R::kCollective}};

struct FamilyRoute {
  KernelFamily family;
  std::span<const Step> steps;
};

constexpr FamilyRoute kRoutingTable[] = {
    {KernelFamily::kUnknown, kUnknownRoute},
    {KernelFamily::kGemm, kGemmRoute},
    {KernelFamily::kSplitKReduce, kKernelFamilyRoute},
    {KernelFamily::kGemv, kOperatorRoute},
    {KernelFamily::kElementwise, kOperatorRoute},
    {KernelFamily::kReduction, kKernelFamilyRoute},
    {KernelFamily::kSoftmax, kRowRoute},
    {KernelFamily::kLayerNorm, kRowRoute},
    {KernelFamily::kEmbedding, kKernelFamilyRoute},
    {KernelFamily::kCopy, kKernelFamilyRoute},
    {KernelFamily::kMemset, kKernelFamilyRoute},
    {KernelFamily::kConv, kConvRoute},
    {KernelFamily::kAttention, kAttentionRoute},
    {KernelFamily::kTritonPointwise, kKernelFamilyRoute},
    {KernelFamily::kTritonReduction, kKernelFamilyRoute},
    {KernelFamily::kTritonTemplate, kTritonTemplateRoute},
    {KernelFamily::kOptimizer, kKernelFamilyRoute},
    {KernelFamily::kCollective, kCollectiveRoute},
    {KernelFamily::kQuantize, kQuantizeRoute},
};

constexpr bool table_in_family_order() {
  for (std::size_t i = 0; i < std::size(kRoutingTable); ++i) {
    if (static_cast<std::size_t>(kRoutingTable[i].family) != i) return false;
  }
  return std::size(kRoutingTable) == kKernelFamilyCount;
}
static_assert(table_in_family_order(), "one routing-table row per KernelFamily, in enum order");

std::span<const Step> route_of(KernelFamily family) noexcept {
  const auto f = static_cast<std::size_t>(family);
  return f < std::size(kRoutingTable) ? kRoutingTable[f].steps : kUnknownRoute;
}

bool applies(When when, const KernelRecord& r, const KernelClass& cls,
             const PredictOptions& o) noexcept {
  switch (when) {
    case When::kAlways: return true;
    case When::kOpIsGemm: return r.op.kind == OpKind::kGemm;
    case When::kOpIsConv: return r.op.kind == OpKind::kConv;
    case When::kLooksLikeAttention:
      // Attention kernels the classifier does not name (vLLM's Triton unified attention...).
      return cls.family == KernelFamily::kAttention || r.op.kind == OpKind::kAttention ||
             decode_attention_kernel(r.launch.name).recognised();
    case When::kNoWorkStated:
      return r.op.vec.bytes() <= 0 &&
             (r.op.kind == OpKind::kUnknown || r.op.kind == OpKind::kElementwise ||
              r.op.kind == OpKind::kCopy || r.op.kind == OpKind::kReduction);
    case When::kBytesStated: return r.op.vec.bytes() > 0;
    case When::kKernelTime: return o.basis == TimeBasis::kKernel;
  }
  return false;
}

// The same kernel as another family (a convolution's helper as a copy, an unnamed kernel as
// a pointwise one): the class to query a model with.
KernelClass as_family(const KernelClass& cls, KernelFamily family) {
  KernelClass c = cls;
  c.family = family;
  return c;
}

// One kind of calibration point dropped from every profile, once the model reading it has
// built what it keeps. Swapped out, not cleared: clear() keeps the storage.
template <typename Point>
void release_points(std::vector<Profile>& profiles, std::vector<Point> Profile::*points) {
  for (Profile& p : profiles) std::vector<Point>().swap(p.*points);
}

// Reads one point table into every profile that left it in its file (a no-op for profiles
// loaded with their points).
void load_points(std::vector<Profile>& profiles, PointTable table) {
  for (Profile& p : profiles) pm2lat::load_points(p, table);
}

}  // namespace

bool routes_to(KernelFamily family, ModelRoute route) noexcept {
  return std::ranges::any_of(route_of(family), [route](const Step& s) { return s.model == route; });
}

bool fitted_as_kernel_family(KernelFamily family) noexcept {
  return std::ranges::any_of(kRoutingTable, [family](const FamilyRoute& row) {
    const bool kernel_fits = routes_to(row.family, ModelRoute::kFamilyFits) ||
                             routes_to(row.family, ModelRoute::kOwnKernelFits);
    return kernel_fits && (row.family == family || kernel_family_stand_in(row.family) == family);
  });
}

struct Predictor::Impl {
  DeviceCatalogue catalogue;
  std::vector<Profile> profiles;
  std::vector<Target> targets;
  GemmPredictor gemm;
  OperatorFitPredictor operator_fits;
  MemoryFamilyPredictor family_fits;
  AttentionPredictor attention;
  ConvPredictor conv;
  ScaledGemmPredictor scaled_gemm;
  HostDispatchTable host_dispatch;  // every call-timed table's measured dispatch
  ErrorBandTable bands;             // empty unless the profile directory ships error_bands.json

  // Whether the record was observed on the target GPU itself (then its kernel is one this
  // GPU runs).
  bool observed_on_target(const Target& t, const PredictOptions& o) const {
    if (o.source_spec != nullptr) return o.source_spec == t.spec;
    if (o.source_device.empty() || o.source_device == t.name) return true;
    return catalogue.find(o.source_device) == t.spec;
  }

  // The GPU the record was observed on; null when unknown (the target itself).
  const DeviceSpec* source_spec(const PredictOptions& o) const {
    if (o.source_spec != nullptr || o.source_device.empty()) return o.source_spec;
    return catalogue.find(o.source_device);
  }

  // The answer of one model, or nullopt when it declines the kernel.
  std::optional<Prediction> ask(ModelRoute model, const ModelQuery& q) const;
  // The answer of the first model of the family's route that takes the kernel, unbounded.
  Prediction route(const KernelRecord& record, const KernelClass& cls, TargetId target,
                   const PredictOptions& options, const DeviceSpec* source) const;
};

std::optional<Prediction> Predictor::Impl::ask(ModelRoute model, const ModelQuery& q) const {
  const Target& t = targets[q.target];
  switch (model) {
    case ModelRoute::kCollective: return collective_prediction(q.record, *t.spec);
    case ModelRoute::kAttention: return attention.predict(q);
    case ModelRoute::kConv: {
      // cuDNN's helpers inside a convolution (offset tables, Winograd transforms, layout
      // transforms) move memory: they are copies.
      if (!is_conv_helper_kernel(q.record, q.cls)) return conv.predict(q);
      const KernelClass copy = as_family(q.cls, KernelFamily::kCopy);
      return family_fits.predict(
          {q.record, copy, q.target, q.options, q.observed_on_target, q.source});
    }
    case ModelRoute::kFamilyFits: return family_fits.predict(q);
    case ModelRoute::kOwnKernelFits: return family_fits.predict_own(q);
    case ModelRoute::kUnnamedKernel: {
      // No rule names it and its call states no work: the pointwise geometry fit over its
      // launched threads beats a roofline of nothing (flag no_shape).
      const KernelClass pointwise = as_family(q.cls, KernelFamily::kTritonPointwise);
      return family_fits.predict(
          {q.record, pointwise, q.target, q.options, q.observed_on_target, q.source});
    }
    case ModelRoute::kScaledGemm:
      return scaled_gemm.predict(q.record, q.cls, q.target, q.options, q.observed_on_target);
    case ModelRoute::kGemm: return gemm.predict(q);
    case ModelRoute::kOperatorFits: {
      // The tables timed calls of tensors large enough to be bandwidth-bound; how short a
      // launch of this configuration gets is what the target's own kernels measured.
      std::optional<Prediction> p = operator_fits.predict(q);
      if (p && p->basis == TimeBasis::kKernel)
        if (const auto floor = family_fits.own_fixed_cost_us(q); floor && *floor > p->us)
          p->us = *floor;
      return p;
    }
    case ModelRoute::kShapelessRowFits: return family_fits.predict_row_without_shape(q);
    case ModelRoute::kRoofline: return roofline_prediction(q.record, q.cls, *t.spec);
  }
  return std::nullopt;
}

Predictor Predictor::from_directory(const std::filesystem::path& profile_dir) {
  DeviceCatalogue catalogue = DeviceCatalogue::load(profile_dir / "devices.json");
  Predictor p(std::move(catalogue), load_profiles_without_points(profile_dir));
  if (const auto bands = profile_dir / kErrorBandsFile; std::filesystem::exists(bands))
    p.set_error_bands(ErrorBandTable::load(bands));
  return p;
}

std::filesystem::path Predictor::default_profile_dir() {
  if (const char* env = std::getenv("PM2LAT_PROFILES"); env != nullptr && *env != '\0') return env;
#ifdef PM2LAT_INSTALL_PROFILE_DIR
  // Not the throwing overload: a directory the user may not enter (EACCES) means "not
  // installed here", not an error in the program that loaded the library.
  std::error_code unreadable;
  if (std::filesystem::exists(std::filesystem::path(PM2LAT_INSTALL_PROFILE_DIR) / "devices.json",
                              unreadable))
    return PM2LAT_INSTALL_PROFILE_DIR;
#endif
#ifdef PM2LAT_SOURCE_PROFILE_DIR
  return PM2LAT_SOURCE_PROFILE_DIR;
#else
  return "profiles";
#endif
}

Predictor::Predictor(DeviceCatalogue catalogue, std::vector<Profile> profiles)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.catalogue = std::move(catalogue);
  m.profiles = std::move(profiles);
  for (Profile& p : m.profiles) {
    const DeviceSpec* spec = m.catalogue.find(p.device);
    if (spec == nullptr) {
      throw ProfileError(p.file, "device", "'" + p.device + "' is not in the device catalogue");
    }
    p.device = spec->name;
  }
  // The models hold what predictions read of the calibration points (indexes, residuals,
  // launch grids): each table is read when its model is built and goes once it is, so that
  // the tables of every profile are never all held at once. The peak of a step is the models
  // built before it, its points, its own model and the parse of a table's text (several times
  // the text). Attention, GEMM and low-precision models are built one profile at a time, the
  // attention ones first (their parse is the largest, so it comes while little is held);
  // per-operator fits borrow across GPUs and read every profile's vector points at once.
  // The dispatch summaries read GEMM and vector points, noted while each table is held.
  std::vector<SmallestCalls> smallest_calls(m.profiles.size());
  const auto note_calls_of = [&](std::size_t i) {
    const Profile& p = m.profiles[i];
    if (p.basis == TimeBasis::kCall)
      note_smallest_calls(p, *m.catalogue.find(p.device), smallest_calls[i]);
  };
  for (Profile& p : m.profiles) {
    pm2lat::load_points(p, PointTable::kAttention);
    m.attention.add_profile(m.catalogue, p);
    std::vector<AttentionPoint>().swap(p.attention_points);
  }
  for (std::size_t i = 0; i < m.profiles.size(); ++i) {
    Profile& p = m.profiles[i];
    pm2lat::load_points(p, PointTable::kGemm);
    note_calls_of(i);
    m.gemm.add_profile(m.catalogue, m.profiles, i);
    std::vector<GemmPoint>().swap(p.gemm_points);
  }
  for (Profile& p : m.profiles) {
    pm2lat::load_points(p, PointTable::kScaledGemm);
    m.scaled_gemm.add_profile(m.catalogue, p);
    std::vector<ScaledGemmPoint>().swap(p.scaled_gemm_points);
  }
  load_points(m.profiles, PointTable::kVector);
  for (std::size_t i = 0; i < m.profiles.size(); ++i) note_calls_of(i);
  m.host_dispatch = HostDispatchTable(m.profiles, smallest_calls);
  m.operator_fits = OperatorFitPredictor(m.catalogue, m.profiles, smallest_calls, m.host_dispatch);
  release_points(m.profiles, &Profile::vector_points);
  load_points(m.profiles, PointTable::kFamily);
  m.family_fits = MemoryFamilyPredictor(m.catalogue, m.profiles);
  release_points(m.profiles, &Profile::family_points);
  load_points(m.profiles, PointTable::kConv);
  m.conv = ConvPredictor(m.catalogue, m.profiles);
  release_points(m.profiles, &Profile::conv_points);
}

Predictor::Predictor(Predictor&&) noexcept = default;
Predictor& Predictor::operator=(Predictor&&) noexcept = default;
Predictor::~Predictor() = default;

TargetId Predictor::add_target(std::string_view gpu_name) {
  return add_target(impl_->catalogue.resolve(gpu_name));
}

TargetId Predictor::add_target(const DeviceSpec& spec) {
  Impl& m = *impl_;
  for (std::size_t i = 0; i < m.targets.size(); ++i) {
    if (m.targets[i].name == spec.name) return i;
  }
  const TargetId whole =
      spec.partition_of != nullptr ? add_target(*spec.partition_of) : Target::kNoWhole;
  Target t;
  t.name = spec.name;
  t.spec = &spec;
  t.whole = whole;
  for (const Profile& p : m.profiles) {
    if (p.device == spec.name) t.profiles.push_back(&p);
  }
  if (!t.profiles.empty()) {
    t.profile_spec = &spec;
  } else {
    // No profile of its own: borrow the most similar calibrated GPU's.
    std::vector<DonorCandidate> candidates;
    candidates.reserve(m.profiles.size());
    for (const Profile& p : m.profiles) candidates.push_back({m.catalogue.find(p.device), p.basis});
    const std::vector<std::size_t> order = rank_donors(spec, candidates, kGemmDonorWeights);
    if (!order.empty()) {
      const Profile& donor = m.profiles[order.front()];
      for (const Profile& p : m.profiles) {
        if (p.device == donor.device) t.profiles.push_back(&p);
      }
      t.profile_spec = candidates[order.front()].spec;
      t.spec_scaled = true;
    }
  }
  m.gemm.add_target(t);
  m.operator_fits.add_target(t);
  m.family_fits.add_target(t);
  m.attention.add_target(t);
  m.conv.add_target(t);
  m.scaled_gemm.add_target(spec);
  m.targets.push_back(std::move(t));
  return m.targets.size() - 1;
}

const Target& Predictor::target(TargetId id) const { return impl_->targets.at(id); }
const DeviceCatalogue& Predictor::catalogue() const noexcept { return impl_->catalogue; }
const HostDispatchTable& Predictor::host_dispatch() const noexcept { return impl_->host_dispatch; }

Prediction Predictor::Impl::route(const KernelRecord& record, const KernelClass& cls,
                                  TargetId target, const PredictOptions& options,
                                  const DeviceSpec* source) const {
  const Target& t = targets[target];
  const ModelQuery query{record, cls, target, options, observed_on_target(t, options), source};
  if (record.op.kind == OpKind::kCollective) return *ask(ModelRoute::kCollective, query);
  for (const Step& step : route_of(cls.family)) {
    if (!applies(step.when, record, cls, options)) continue;
    if (auto p = ask(step.model, query)) return *p;
  }
  return roofline_prediction(record, cls, *t.spec);
}

Prediction Predictor::predict(const KernelRecord& record, const KernelClass& cls, TargetId target,
                              const PredictOptions& options) const {
  if (target >= impl_->targets.size()) return Prediction{};
  const Target& t = impl_->targets[target];
  // A broadcast operand this GPU's L2 cannot hold between reuses is read again at every
  // reuse: the models and the bounds see those bytes (models/broadcast_traffic.h).
  if (rereads_broadcast(record, *t.spec))
    return predict(with_broadcast_rereads(record, *t.spec), cls, target, options);
  // The one exit: work the launch cannot have done is replaced by its geometry, and every
  // answer is held within the physical bounds (models/bounded_prediction.h).
  const DeviceSpec* source = impl_->source_spec(options);
  const AppliedBounds applied = applied_bounds(record, cls, *t.spec, source, options.basis);
  Prediction p = applied.stated_work_rejected
                     ? impl_->route(without_stated_work(record), cls, target, options, source)
                     : impl_->route(record, cls, target, options, source);
  // Rejected here or by whoever built the record (its work dropped or the launch geometry's).
  if (applied.stated_work_rejected || record.op.source == kRejectedWorkSource)
    p.flags |= prediction_flags::kShapeRejected;
  // A MIG partition runs on a share of its whole GPU's SMs and memory: never faster than it
  // (the partition and the whole may take different routes: a kernel observed on one of them
  // runs as itself there).
  if (t.whole != Target::kNoWhole) p.us = std::max(p.us, predict(record, cls, t.whole, options).us);
  p = within_bounds(p, applied.bounds);
  // The band after the bounds: a clamped answer belongs to the clamped flag group.
  p.band_pct = impl_->bands.band_pct(cls.family, p, impl_->observed_on_target(t, options));
  return p;
}

void Predictor::set_error_bands(ErrorBandTable bands) { impl_->bands = std::move(bands); }
const ErrorBandTable& Predictor::error_bands() const noexcept { return impl_->bands; }

}  // namespace pm2lat
