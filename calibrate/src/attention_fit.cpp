#include "pm2lat/calibrate/attention_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <tuple>

#include "pm2lat/calibrate/nnls.h"
#include "pm2lat/models/attention_model.h"

namespace pm2lat::calibrate {
namespace {

// Tiles tried where the library's launch heuristic is not public or depends on more than
// the head dimension; implementations with known heuristics use theirs only.
constexpr std::array<AttentionTile, 4> kTileCandidates{{{16, 32}, {64, 64}, {128, 64}, {128, 128}}};

bool tile_known(AttentionVariant v) {
  return v == AttentionVariant::kFlash2 || v == AttentionVariant::kFlash3 ||
         v == AttentionVariant::kMemEfficient;
}

using ConfigKey = std::tuple<AttentionVariant, std::int64_t, DType, bool>;

std::vector<double> regressors(const AttentionConfigFit& c, const AttentionShape& s,
                               const DeviceSpec& spec) {
  const AttentionWork w =
      attention_work(s, c.tile_m, c.tile_n, static_cast<GqaPacking>(c.gqa_packing));
  const AttentionFeatures f = attention_features(w, c.ctas_per_sm, spec);
  return {1.0, f.makespan, f.waves, f.qo, f.kv};
}

// Fits one candidate layout; returns its in-sample MAPE (or a negative value on failure).
double fit_candidate(AttentionConfigFit& c, const std::vector<const AttentionMeasurement*>& rows,
                     const DeviceSpec& spec) {
  std::vector<std::vector<double>> x;
  std::vector<double> y;
  x.reserve(rows.size());
  y.reserve(rows.size());
  for (const auto* m : rows) {
    x.push_back(regressors(c, m->record.op.attention, spec));
    y.push_back(*m->record.measured_us);
  }
  const auto fit = nnls_relative(x, y);
  if (!fit) return -1;
  c.c0 = fit->coef[0];
  c.c_iter = fit->coef[1];
  c.c_cta = fit->coef[2];
  c.c_qo = fit->coef[3];
  c.c_kv = fit->coef[4];
  c.fit_mape_pct = fit->mape_pct;
  return fit->mape_pct;
}

}  // namespace

void build_attention_section(const std::vector<const AttentionMeasurement*>& rows,
                             const DeviceSpec& spec, Profile& profile,
                             AttentionBuildReport* report) {
  AttentionBuildReport local;
  AttentionBuildReport& rep = report ? *report : local;
  std::map<ConfigKey, std::vector<const AttentionMeasurement*>> groups;
  for (const auto* m : rows) {
    const AttentionShape& s = m->record.op.attention;
    groups[{m->variant, s.head_dim, s.kv_dtype, s.window > 0}].push_back(m);
  }
  double ape_sum = 0;
  for (const auto& [key, group] : groups) {
    const auto& [variant, head_dim, kv, local_mask] = key;
    AttentionConfigFit base;
    base.variant = std::string(to_string(variant));
    base.head_dim = static_cast<std::int32_t>(head_dim);
    base.kv_dtype = kv;
    base.local = local_mask;
    base.calls_write_kv_cache =
        std::all_of(group.begin(), group.end(), [](const auto* m) { return m->writes_kv_cache; });
    std::vector<AttentionTile> tiles{
        default_attention_tile(variant, base.head_dim, spec.compute_capability())};
    if (!tile_known(variant))
      tiles.insert(tiles.end(), kTileCandidates.begin(), kTileCandidates.end());
    AttentionConfigFit best;
    double best_err = -1;
    for (const AttentionTile& tile : tiles) {
      for (std::int32_t cps = 1; cps <= 2; ++cps) {
        for (std::int32_t packing = 0; packing <= 2; ++packing) {
          AttentionConfigFit c = base;
          c.tile_m = tile.m;
          c.tile_n = tile.n;
          c.ctas_per_sm = cps;
          c.gqa_packing = packing;
          const double err = fit_candidate(c, group, spec);
          if (err >= 0 && (best_err < 0 || err < best_err)) {
            best_err = err;
            best = c;
          }
        }
      }
    }
    if (best_err < 0) continue;
    best.points = static_cast<std::int32_t>(group.size());
    const auto index = static_cast<std::int32_t>(profile.attention_configs.size());
    profile.attention_configs.push_back(best);
    for (const auto* m : group) {
      const AttentionShape& s = m->record.op.attention;
      AttentionPoint pt;
      pt.config = index;
      pt.batch = s.batch;
      pt.seqlen_q = s.seqlen_q;
      pt.seqlen_kv = s.seqlen_kv;
      pt.heads = s.heads;
      pt.kv_heads = s.kv_heads;
      pt.window = s.window;
      pt.causal = s.causal;
      pt.us = *m->record.measured_us;
      profile.attention_points.push_back(pt);
    }
    rep.rows += group.size();
    ape_sum += best_err * static_cast<double>(group.size());
  }
  rep.configs = profile.attention_configs.size();
  rep.fit_mape_pct = rep.rows > 0 ? ape_sum / static_cast<double>(rep.rows) : 0;
}

}  // namespace pm2lat::calibrate
