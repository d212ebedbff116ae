#include "pm2lat/calibrate/nnls.h"

#include <cmath>
#include <cstddef>

namespace pm2lat::calibrate {
namespace {

// Solves A x = b for a small symmetric positive (semi)definite A by Gaussian elimination with
// partial pivoting; false if singular.
bool solve(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>& x) {
  const std::size_t n = b.size();
  for (std::size_t col = 0; col < n; ++col) {
    std::size_t piv = col;
    for (std::size_t r = col + 1; r < n; ++r) {
      if (std::fabs(a[r][col]) > std::fabs(a[piv][col])) piv = r;
    }
    if (std::fabs(a[piv][col]) < 1e-12) return false;
    std::swap(a[piv], a[col]);
    std::swap(b[piv], b[col]);
    for (std::size_t r = col + 1; r < n; ++r) {
      const double f = a[r][col] / a[col][col];
      for (std::size_t c = col; c < n; ++c) a[r][c] -= f * a[col][c];
      b[r] -= f * b[col];
    }
  }
  x.assign(n, 0);
  for (std::size_t i = n; i-- > 0;) {
    double s = b[i];
    for (std::size_t c = i + 1; c < n; ++c) s -= a[i][c] * x[c];
    x[i] = s / a[i][i];
  }
  return true;
}

}  // namespace

std::optional<NnlsResult> nnls_relative(const std::vector<std::vector<double>>& rows,
                                        const std::vector<double>& y) {
  if (rows.empty() || rows.size() != y.size()) return std::nullopt;
  const std::size_t p = rows.front().size();
  if (p == 0 || p > 12) return std::nullopt;
  // Column scales keep the normal equations well conditioned (features span 1 .. 1e7).
  std::vector<double> scale(p, 0);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t j = 0; j < p; ++j) scale[j] = std::max(scale[j], std::fabs(rows[i][j] / y[i]));
  }
  for (double& s : scale) s = s > 0 ? s : 1;
  // Normal equations of the scaled, relative problem.
  std::vector<std::vector<double>> ata(p, std::vector<double>(p, 0));
  std::vector<double> atb(p, 0);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::vector<double> r(p);
    for (std::size_t j = 0; j < p; ++j) r[j] = rows[i][j] / y[i] / scale[j];
    for (std::size_t a = 0; a < p; ++a) {
      atb[a] += r[a];
      for (std::size_t b = 0; b < p; ++b) ata[a][b] += r[a] * r[b];
    }
  }
  std::optional<NnlsResult> best;
  double best_sse = 0;
  for (unsigned mask = 1; mask < (1u << p); ++mask) {
    std::vector<std::size_t> act;
    for (std::size_t j = 0; j < p; ++j) {
      if (mask & (1u << j)) act.push_back(j);
    }
    std::vector<std::vector<double>> a(act.size(), std::vector<double>(act.size()));
    std::vector<double> b(act.size());
    for (std::size_t i = 0; i < act.size(); ++i) {
      b[i] = atb[act[i]];
      for (std::size_t j = 0; j < act.size(); ++j) a[i][j] = ata[act[i]][act[j]];
    }
    std::vector<double> x;
    if (!solve(a, b, x)) continue;
    bool feasible = true;
    for (double v : x) feasible = feasible && v >= 0;
    if (!feasible) continue;
    std::vector<double> coef(p, 0);
    for (std::size_t i = 0; i < act.size(); ++i) coef[act[i]] = x[i] / scale[act[i]];
    double sse = 0, ape = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      double pred = 0;
      for (std::size_t j = 0; j < p; ++j) pred += rows[i][j] * coef[j];
      const double e = (pred - y[i]) / y[i];
      sse += e * e;
      ape += std::fabs(e);
    }
    if (!best || sse < best_sse) {
      best_sse = sse;
      best = NnlsResult{std::move(coef), 100.0 * ape / static_cast<double>(rows.size())};
    }
  }
  return best;
}

}  // namespace pm2lat::calibrate
