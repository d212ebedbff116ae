#include "pm2lat/models/operator_fit_predictor.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "octaves.h"
#include "pm2lat/call_dispatch.h"
#include "pm2lat/models/donor_ranking.h"
#include "pm2lat/models/launch_work.h"
#include "pm2lat/models/memory_bound_model.h"
#include "pm2lat/models/physical_bounds.h"
#include "pm2lat/models/residual_interpolator.h"

namespace pm2lat {
namespace {

using residual_interpolation::kNeighbours;
// A donor's fits must have seen this many shapes: a GPU measured at a handful only
// extrapolates its per-row and per-byte terms far outside them.
constexpr std::size_t kRichDonorPoints = 500;
// Fits of the plain elementwise bandwidth: what any memory-bound operator falls back to.
constexpr const char* kGenericOperator = "elementwise";

// Bytes of the smallest and largest shape a fit was calibrated on.
struct FitByteRange {
  double lo = 0, hi = 0;
  bool known() const noexcept { return hi > 0; }
};

std::array<double, 2> vector_key(std::int64_t rows, std::int64_t cols) {
  return {octaves(static_cast<double>(rows)), octaves(static_cast<double>(cols))};
}

// How specific a fit is for a kernel, lower first: this operator, its family, the generic
// elementwise fit; each with the kernel's own configuration before any configuration.
enum FitRank : int {
  kOperatorAndKernel = 0,
  kOperator = 1,
  kFamilyAndKernel = 2,
  kFamily = 3,
  kGenericAndKernel = 4,
  kGeneric = 5,
  kNoFit = 6,
};

}  // namespace

// One profile's per-operator fits, indexed at load.
struct OperatorFits {
  const Profile* profile = nullptr;
  const DeviceSpec* spec = nullptr;
  std::vector<ResidualInterpolator<2>> kernel_residual;  // per fit
  std::vector<ResidualInterpolator<2>> call_residual;
  // Per fit: the shortest kernel time it may forecast. A fit made on large tensors only has
  // no fixed cost of its own (c0 = 0); the operator's fixed cost on the most similar GPU that
  // measured one stands in (small layer-norms are latency-bound everywhere).
  std::vector<double> floor_us;
  // Per fit: the bytes of the smallest and largest shape it was calibrated on (0 = unknown).
  std::vector<FitByteRange> range;
  std::map<std::string, std::vector<std::int32_t>> fits_by_op;
  std::size_t point_count = 0;  // calibration points of the fits
  // The host dispatch of calls of the operators this profile's table does not identify (a
  // table of large tensors only: its shortest calls are their own traffic, and its dispatch
  // intercept is noise): the medians of the tables that identify it, this one left out.
  DispatchMedians others;
  // The operators whose host dispatch this profile's table measured (call_dispatch.h).
  std::set<std::string> dispatch_identified;
  // The operators whose call floor is their table's shortest calls' traffic (call_dispatch.h):
  // it holds no call of theirs.
  std::set<std::string> traffic_floor;

  // The dispatch of a call of `op`: this profile's own where its table identifies it, else
  // the other tables' median.
  const CallOverhead* dispatch_for(const std::string& op) const;
};

namespace {

void build_indexes(OperatorFits& d) {
  const Profile& p = *d.profile;
  const std::size_t nf = p.vector_fits.size();
  d.point_count = p.vector_points.size();
  d.range.resize(nf);
  for (std::size_t f = 0; f < nf; ++f)
    d.range[f] = {p.vector_fits[f].bytes_min, p.vector_fits[f].bytes_max};
  std::vector<std::vector<std::array<double, 2>>> kpts(nf), cpts(nf);
  std::vector<std::vector<double>> kres(nf), cres(nf);
  for (const VectorPoint& pt : p.vector_points) {
    const auto fi = static_cast<std::size_t>(pt.fit);
    const VectorFit& f = p.vector_fits[fi];
    const double kern = memory_bound_kernel_us(f, *d.spec, pt.bytes, static_cast<double>(pt.rows));
    const auto key = vector_key(pt.rows, pt.cols);
    FitByteRange& range = d.range[fi];
    if (pt.bytes > 0) {
      range.lo = range.hi > 0 ? std::min(range.lo, pt.bytes) : pt.bytes;
      range.hi = std::max(range.hi, pt.bytes);
    }
    const CalibrationResiduals r = calibration_residuals(p, f.op, d.traffic_floor, pt.us, kern);
    if (r.call) {
      cpts[fi].push_back(key);
      cres[fi].push_back(*r.call);
    }
    if (r.kernel) {
      kpts[fi].push_back(key);
      kres[fi].push_back(*r.kernel);
    }
  }
  // An operator's pooled fit (any kernel configuration) stores no points of its own: it was
  // made on the calls its per-configuration fits were, so their sizes are its range.
  for (std::size_t f = 0; f < nf; ++f) {
    if (d.range[f].known()) continue;
    for (std::size_t o = 0; o < nf; ++o) {
      if (o == f || !d.range[o].known() || p.vector_fits[o].op != p.vector_fits[f].op) continue;
      FitByteRange& r = d.range[f];
      r.lo = r.known() ? std::min(r.lo, d.range[o].lo) : d.range[o].lo;
      r.hi = std::max(r.hi, d.range[o].hi);
    }
  }
  for (std::size_t f = 0; f < nf; ++f) {
    d.kernel_residual.emplace_back(std::move(kpts[f]), std::move(kres[f]), kNeighbours);
    d.call_residual.emplace_back(std::move(cpts[f]), std::move(cres[f]), kNeighbours);
    d.fits_by_op[p.vector_fits[f].op].push_back(static_cast<std::int32_t>(f));
  }
}

// Fixed cost for fits that have none: the same operator and kernel configuration on the
// most similar GPU (SM count and bandwidth) whose fit has one.
void set_floors(std::vector<OperatorFits>& devices) {
  const std::vector<DonorCandidate> candidates = donor_candidates(devices);
  for (OperatorFits& d : devices) {
    const auto& fits = d.profile->vector_fits;
    d.floor_us.assign(fits.size(), kMinMemoryKernelUs);
    std::vector<std::size_t> donors;
    for (std::size_t f = 0; f < fits.size(); ++f) {
      if (fits[f].c0 > 0) continue;
      if (donors.empty()) donors = rank_donors(*d.spec, candidates, kFixedCostDonorWeights);
      double donor_c0 = 0;
      for (std::size_t o = 0; o < donors.size() && donor_c0 == 0; ++o) {
        const OperatorFits& donor = devices[donors[o]];
        if (&donor == &d) continue;
        for (const VectorFit& of : donor.profile->vector_fits) {
          if (of.op == fits[f].op && of.config == fits[f].config && of.c0 > 0) {
            donor_c0 = of.c0;
            break;
          }
        }
      }
      d.floor_us[f] = std::max(kMinMemoryKernelUs, donor_c0);
    }
  }
}

// Which operators' host dispatch each table measured (call_dispatch.h: it timed calls too small
// to be kernel-bound), whose call floor is therefore a dispatch, not traffic; and for a
// call-basis table's other operators the dispatch of the tables that measured them (their
// medians, the table itself left out): calibrate's borrowed_dispatch.h takes GEMM operators'
// the same way. The most similar GPU's would lend one host's quirks (the V100 priced small
// softmax and `add` calls at the P100's 57 and 42 us: 1.40x and 1.30x its own).
void set_borrowed_dispatch(std::vector<OperatorFits>& devices, const HostDispatchTable& hosts) {
  for (std::size_t i = 0; i < devices.size(); ++i) {
    OperatorFits& d = devices[i];
    if (d.spec == nullptr) continue;
    for (const auto& [op, c] : hosts.measured(i)) d.dispatch_identified.insert(op);
    if (d.profile->basis == TimeBasis::kCall) d.others = hosts.medians_without(i);
  }
}

}  // namespace

const CallOverhead* OperatorFits::dispatch_for(const std::string& op) const {
  if (dispatch_identified.contains(op)) return &profile->call_overhead.at(op);
  return others.of(op);
}

namespace {

// The fit of `op`'s kernel configuration whose calibration point is nearest `key`, or -1 when
// the profile calibrated no configuration of it. PyTorch picks an operator's kernel by shape
// (softmax: a warp-per-row kernel for rows of at most 1024 elements, a block-per-row one
// beyond; aten/src/ATen/native/cuda/SoftMax.cu), so the nearest shape it was timed at names the
// kernel a call of this shape runs.
std::int32_t nearest_configuration(const OperatorFits& d, const std::string& op,
                                   const std::array<double, 2>& key) {
  const auto it = d.fits_by_op.find(op);
  if (it == d.fits_by_op.end()) return -1;
  const bool call = d.profile->basis == TimeBasis::kCall;
  std::int32_t best = -1;
  double best_d2 = 0;
  for (std::int32_t f : it->second) {
    const auto fi = static_cast<std::size_t>(f);
    if (d.profile->vector_fits[fi].config.empty()) continue;
    std::size_t index = 0;
    double d2 = 0;
    const auto& points = call ? d.call_residual[fi] : d.kernel_residual[fi];
    if (points.nearest_k(key, 1, &index, &d2) == 0) continue;
    if (best < 0 || d2 < best_d2) {
      best = f;
      best_d2 = d2;
    }
  }
  return best;
}

}  // namespace

struct OperatorFitPredictor::Impl {
  const Profile* profiles = nullptr;         // the predictor's profiles, in order
  std::vector<OperatorFits> calibrated;      // parallel to the profiles
  const HostDispatchTable* hosts = nullptr;  // every call-basis table's dispatch, their medians
  // Where a target's fits come from: its own profiles, or (when they have no operator fits)
  // the most similar calibrated GPU's, evaluated with the target's spec.
  struct TargetState {
    const DeviceSpec* spec = nullptr;
    std::vector<const OperatorFits*> devices;
    bool spec_scaled = false;  // the target's fits are another GPU's
  };
  std::vector<TargetState> targets;
};

OperatorFitPredictor::OperatorFitPredictor() : impl_(std::make_unique<Impl>()) {}
OperatorFitPredictor::OperatorFitPredictor(OperatorFitPredictor&&) noexcept = default;
OperatorFitPredictor& OperatorFitPredictor::operator=(OperatorFitPredictor&&) noexcept = default;
OperatorFitPredictor::~OperatorFitPredictor() = default;

OperatorFitPredictor::OperatorFitPredictor(const DeviceCatalogue& catalogue,
                                           const std::vector<Profile>& profiles,
                                           const std::vector<SmallestCalls>& smallest_calls,
                                           const HostDispatchTable& hosts)
    : impl_(std::make_unique<Impl>()) {
  if (smallest_calls.size() != profiles.size())
    throw std::invalid_argument("OperatorFitPredictor: one SmallestCalls per profile");
  impl_->profiles = profiles.data();
  impl_->calibrated.resize(profiles.size());
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    OperatorFits& d = impl_->calibrated[i];
    d.profile = &profiles[i];
    d.spec = catalogue.find(profiles[i].device);
    d.traffic_floor = traffic_floor_ops(profiles[i], ops_with_small_calls(smallest_calls[i]));
    build_indexes(d);
  }
  set_floors(impl_->calibrated);
  impl_->hosts = &hosts;
  set_borrowed_dispatch(impl_->calibrated, hosts);
}

void OperatorFitPredictor::add_target(const Target& target) {
  Impl::TargetState t;
  t.spec = target.spec;
  t.spec_scaled = target.spec_scaled;
  for (const Profile* p : target.profiles) {
    const OperatorFits& d = impl_->calibrated[static_cast<std::size_t>(p - impl_->profiles)];
    if (!p->vector_fits.empty()) t.devices.push_back(&d);
  }
  if (t.devices.empty()) {
    // A donor's fits must have seen many shapes, when some GPU's have.
    const auto& all = impl_->calibrated;
    const bool any_rich = std::any_of(all.begin(), all.end(), [](const OperatorFits& d) {
      return d.point_count >= kRichDonorPoints;
    });
    for (std::size_t i : rank_donors(*target.spec, donor_candidates(all), kGemmDonorWeights)) {
      const OperatorFits& d = all[i];
      if (!d.profile->vector_fits.empty() && (!any_rich || d.point_count >= kRichDonorPoints)) {
        t.devices.push_back(&d);
        t.spec_scaled = true;
        break;
      }
    }
  }
  impl_->targets.push_back(std::move(t));
}

std::optional<Prediction> OperatorFitPredictor::predict(const ModelQuery& q) const {
  if (q.target >= impl_->targets.size()) return std::nullopt;
  const KernelRecord& r = q.record;
  const Impl::TargetState& t = impl_->targets[q.target];
  VectorShape v = r.op.vec;
  std::uint32_t shape_flags = 0;
  if (v.bytes() <= 0) {
    if ((q.cls.family == KernelFamily::kSplitKReduce || q.cls.family == KernelFamily::kGemv) &&
        r.op.kind == OpKind::kGemm && r.op.gemm.valid()) {
      // A GEMM's helper kernel (split-K reduction, GEMV) launched inside the library call:
      // what the GEMM's shape says it moves.
      v = gemm_helper_work(r.op.gemm, q.cls.family);
    } else if (auto w = launch_work(r.launch.name, q.cls, r.launch.grid, r.launch.block)) {
      // No shape from the record (a runtime launch outside any library call, a trace
      // without shapes): what the launch of ATen's generic kernels implies.
      v = w->vec;
      shape_flags = prediction_flags::kNoShape;
    }
  }
  if (v.bytes() <= 0) return std::nullopt;
  const std::string key_op = op_key(r.op);
  const std::string family(to_string(q.cls.family));
  static const std::string kGeneric = kGenericOperator;
  // The most specific fit: this operator with this kernel, this operator, the family.
  const OperatorFits* best_d = nullptr;
  std::int32_t best_f = -1;
  int best_rank = kNoFit;
  for (const OperatorFits* d : t.devices) {
    for (const std::string* op : {&key_op, &family, &kGeneric}) {
      auto it = d->fits_by_op.find(*op);
      if (it == d->fits_by_op.end()) continue;
      for (std::int32_t f : it->second) {
        const VectorFit& fit = d->profile->vector_fits[static_cast<std::size_t>(f)];
        const int rank = (op == &key_op   ? kOperatorAndKernel
                          : op == &family ? kFamilyAndKernel
                                          : kGenericAndKernel) +
                         (fit.config == q.cls.config ? 0 : 1);
        if (rank < best_rank ||
            (rank == best_rank && best_d != nullptr &&
             fit.points > best_d->profile->vector_fits[static_cast<std::size_t>(best_f)].points)) {
          best_rank = rank;
          best_d = d;
          best_f = f;
        }
      }
    }
  }
  if (best_d == nullptr) return std::nullopt;
  const auto key = vector_key(v.rows, v.cols);
  if (best_rank == kOperatorAndKernel && q.cls.config.empty() &&
      best_d->profile->vector_fits[static_cast<std::size_t>(best_f)].points == 0) {
    // A call that names no kernel (a model file's operator) matched the operator's pooled
    // fit, which has no calibration points of its own and so is shape-blind. The framework
    // launches one of the operator's kernels by shape: take the configuration it launched for
    // the nearest calibrated shape.
    if (const std::int32_t f = nearest_configuration(*best_d, key_op, key); f >= 0) {
      best_f = f;
      best_rank = kOperator;
    }
  }
  const auto fi = static_cast<std::size_t>(best_f);
  const VectorFit& fit = best_d->profile->vector_fits[fi];
  Prediction p;
  p.model = ModelKind::kMemoryBound;
  p.config = fit.config;
  p.flags |= shape_flags;
  if (t.spec_scaled) p.flags |= prediction_flags::kSpecScaled;
  const double bytes = v.bytes();
  const double rows = static_cast<double>(std::max<std::int64_t>(1, v.rows));
  const bool specific = best_rank <= kOperator;  // the residual table belongs to this operator
  const bool call =
      q.options.basis == TimeBasis::kCall && best_d->profile->basis == TimeBasis::kCall;
  const CallOverhead& oh = best_d->profile->overhead_for(fit.op);
  const double kernel_floor = best_d->floor_us[fi];
  const FitByteRange range = best_d->range[fi];
  p.basis = call ? TimeBasis::kCall : TimeBasis::kKernel;
  const bool measured_here = best_d->spec != nullptr && best_d->spec->name == t.spec->name;
  // A call priced with another GPU's fit: dispatched by the target's host, not by the host of
  // the GPU that lent the fit (HostDispatchTable).
  const CallOverhead* other_host = call && !measured_here && impl_->hosts != nullptr
                                       ? impl_->hosts->on(t.spec->name, key_op)
                                       : nullptr;
  if (range.known() && (bytes < range.lo || bytes > range.hi)) {
    // Outside the sizes the fit was made on, neither its fixed cost nor its residual table
    // is known: the bandwidth form takes over from the fit at the nearest edge of its range
    // (same bytes per row). Below it, a call is its dispatch plus a kernel running from the
    // operator's fixed cost up to the edge's time, never under the call floor; above it, the
    // edge's bandwidth.
    const double edge = bytes < range.lo ? range.lo : range.hi;
    const double edge_rows = rows * edge / bytes;
    const double edge_kernel_us = memory_bound_kernel_us(fit, *t.spec, edge, edge_rows);
    // The profile's call floor is its shortest calls calibrated. It is a floor of small calls
    // (host dispatch) only when a host dispatch can reach it and its smallest calibrated
    // call's dispatch and traffic, on the GPU that measured it, fall well short of it.
    // Otherwise it is those calls' own traffic (a table of large tensors only: NeuSight's
    // A100-PCIE-80GB layer-norm floor of 77.6 us is its 50-67 MB calls): it bounds no smaller
    // call, and on another GPU not even the edge's.
    const DeviceSpec* measured_on = best_d->spec;
    const double smallest_call_kernel_us =
        measured_on != nullptr && bytes < range.lo
            ? memory_bound_kernel_us(fit, *measured_on, edge, edge_rows)
            : 0.0;
    const bool dispatch_floor = oh.floor_us <= bound_constants::kMaxFixedCallUs &&
                                oh.pre_us + kCallAboveFloor * smallest_call_kernel_us < oh.floor_us;
    const double call_floor = dispatch_floor ? oh.floor_us : 0.0;
    // A call below the sizes its table timed is dispatched like the table's smallest calls,
    // where they show a dispatch; a table of large tensors only (A100-PCIE-80GB, L4) does
    // not: the tables that do say what the host adds before the kernel (their median). On a
    // GPU other than the table's, at any size, the target's host's (other_host).
    const CallOverhead* dispatch = other_host != nullptr ? other_host
                                   : call && bytes < range.lo && !dispatch_floor
                                       ? best_d->dispatch_for(key_op)
                                       : nullptr;
    // The kernel at the edge is the edge's call less the dispatch the call adds back. On the
    // GPU that timed the table the edge's call is the table's own (its intercept as dispatch),
    // so the dispatch added back below the range is subtracted there: a call just below the
    // range must cost what the one at its edge costs, not that call plus the difference of two
    // dispatches (NeuSight's V100 layer norms cut to the sparse GPUs' shapes: a 45 MB call
    // priced 159 us where the table's own 50 MB call took 113 us, the borrowed dispatch of 43
    // us added on a kernel derived with the table's intercept of 14). A floor that is no
    // dispatch does not hold the edge's call: it is the table's second-shortest call
    // (traffic_floor_ops), above the shortest one at the edge.
    const double added_pre = dispatch != nullptr && measured_here ? dispatch->pre_us : oh.pre_us;
    const double edge_us =
        call ? std::max(0.0, std::max(call_floor, oh.pre_us + edge_kernel_us) - added_pre)
             : std::max(kernel_floor, edge_kernel_us);
    const double kern = bytes < range.lo ? below_range_kernel_us(kernel_floor, edge_us, bytes, edge)
                                         : edge_us * bytes / edge;
    p.us = !call                 ? kern
           : dispatch != nullptr ? dispatch->call_us(std::max(kernel_floor, kern))
                                 : std::max(call_floor, oh.pre_us + std::max(kernel_floor, kern));
    p.flags |= prediction_flags::kClamped;
    return p;
  }
  const double kern = memory_bound_kernel_us(fit, *t.spec, bytes, rows);
  if (call) {
    // A fit without a call overhead of its own (an operator's family or the generic
    // elementwise fit, standing in for an operator the table did not time) is dispatched as
    // the operator called. So is a call on another GPU than the one whose table of large
    // tensors made the fit: that table's floor is the traffic of its smallest calls on its
    // own GPU, not a dispatch (an L4's 134 MB gelu calls' 587 us priced an RTX 4090's).
    const bool own_overhead_holds = (oh.floor_us > 0 || oh.pre_us > 0) &&
                                    (measured_here || best_d->dispatch_identified.contains(fit.op));
    const CallOverhead* dispatch = other_host != nullptr ? other_host
                                   : own_overhead_holds  ? nullptr
                                                         : best_d->dispatch_for(key_op);
    p.us = (dispatch != nullptr ? dispatch->call_us(kern)
                                : table_call_us(oh, best_d->traffic_floor.contains(fit.op), kern)) *
           (specific ? best_d->call_residual[fi].correction(key) : 1.0);
  } else {
    // Neither the residual table's correction nor a fit without a fixed cost may take a
    // kernel under the operator's fixed cost.
    p.us = std::max(kernel_floor,
                    kern * (specific ? best_d->kernel_residual[fi].correction(key) : 1.0));
  }
  return p;
}

}  // namespace pm2lat
