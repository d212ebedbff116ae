#include "pm2lat/reports/run_table.h"

#include <stdexcept>

namespace pm2lat::reports {

std::size_t RunTable::target_index(std::string_view name) const {
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    if (targets_[i] == name) return i;
  }
  return npos;
}

std::size_t RunTable::add_target(std::string_view canonical_name) {
  if (const std::size_t i = target_index(canonical_name); i != npos) return i;
  targets_.emplace_back(canonical_name);
  target_spec_scaled_.push_back(false);
  const std::size_t new_stride = targets_.size();
  if (!kernels_.empty()) {
    std::vector<Cell> grown(kernels_.size() * new_stride);
    for (std::size_t r = 0; r < kernels_.size(); ++r) {
      for (std::size_t t = 0; t < stride_; ++t) grown[r * new_stride + t] = cells_[r * stride_ + t];
    }
    cells_ = std::move(grown);
  }
  stride_ = new_stride;
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    if (rank_own_target_[r] == npos && ranks_[r].gpu == canonical_name)
      rank_own_target_[r] = targets_.size() - 1;
  }
  return targets_.size() - 1;
}

void RunTable::set_spec_scaled(std::size_t target, bool scaled) {
  if (target < target_spec_scaled_.size()) target_spec_scaled_[target] = scaled;
}

bool RunTable::spec_scaled(std::size_t target) const noexcept {
  return target < target_spec_scaled_.size() && target_spec_scaled_[target];
}

std::size_t RunTable::add_rank(RankInfo info) {
  rank_own_target_.push_back(target_index(info.gpu));
  ranks_.push_back(std::move(info));
  return ranks_.size() - 1;
}

void RunTable::reserve(std::size_t rows) {
  kernels_.reserve(rows);
  cells_.reserve(rows * std::max<std::size_t>(1, stride_));
}

std::size_t RunTable::add_kernel(std::string_view name, KernelFamily family, std::size_t rank_index,
                                 std::uint64_t stream, std::uint64_t ts_ns,
                                 std::optional<double> measured_us) {
  if (rank_index >= ranks_.size()) throw std::out_of_range("RunTable::add_kernel: no such rank");
  KernelRow k;
  k.name = names_.intern(name);
  k.family = family;
  k.rank_index = static_cast<std::int32_t>(rank_index);
  k.stream = stream;
  k.ts_ns = ts_ns;
  if (measured_us) k.measured_us = *measured_us;
  kernels_.push_back(k);
  cells_.resize(kernels_.size() * stride_);
  return kernels_.size() - 1;
}

RunTable::Cell& RunTable::cell(std::size_t row, std::size_t target) {
  return cells_[row * stride_ + target];
}

const RunTable::Cell* RunTable::cell_or_null(std::size_t row, std::size_t target) const {
  if (row >= kernels_.size() || target >= stride_) return nullptr;
  return &cells_[row * stride_ + target];
}

void RunTable::set_prediction(std::size_t row, std::size_t target, const Prediction& p) {
  Cell& c = cell(row, target);
  c.us = static_cast<float>(p.us);
  c.flags = static_cast<std::uint16_t>(p.flags);
  c.model = p.model;
  c.band_pct = static_cast<float>(p.band_pct);
}

double RunTable::predicted_us(std::size_t row, std::size_t target) const {
  const Cell* c = cell_or_null(row, target);
  return c == nullptr ? std::nan("") : static_cast<double>(c->us);
}

std::uint32_t RunTable::flags(std::size_t row, std::size_t target) const {
  const Cell* c = cell_or_null(row, target);
  return c == nullptr ? 0 : c->flags;
}

double RunTable::band_pct(std::size_t row, std::size_t target) const {
  const Cell* c = cell_or_null(row, target);
  return c == nullptr ? std::nan("") : c->band_pct;
}

ModelKind RunTable::model(std::size_t row, std::size_t target) const {
  const Cell* c = cell_or_null(row, target);
  return c == nullptr ? ModelKind::kNone : c->model;
}

std::size_t RunTable::own_target(std::size_t row) const {
  return rank_own_target_[static_cast<std::size_t>(kernels_[row].rank_index)];
}

}  // namespace pm2lat::reports
