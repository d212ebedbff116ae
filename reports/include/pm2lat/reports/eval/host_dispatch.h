// The host's time to dispatch one framework operator (Python, ATen dispatch, kernel launch)
// on the machine a GPU sits in, for the two-timeline replay of eager execution.
//
// NeuSight-style call tables measure it: a call's kernel starts `pre_us` after the start
// event (CallOverhead). But only a table with calls too small to be kernel-bound pins it
// down; a table of large shapes only (the NeuSight test rows of A100-PCIE-80GB and L4, and
// of H100 for everything but its GEMMs) leaves it to an intercept far outside the data. And
// a host's dispatch is a property of the machine, not of the GPU. So an operator's dispatch
// on a target is the target's own measurement where its table has small calls of that
// operator, else the median over every profile that measured it, scaled by how the target's
// host compares with those on the operators both measured.
#pragma once

#include <map>
#include <string>

#include "pm2lat/predictor.h"

namespace pm2lat::reports {

class HostDispatch {
 public:
  HostDispatch(const Predictor& predictor, TargetId target);

  // Dispatch of a kernel-launching operator with this call-overhead key (µs).
  double launch_us(const std::string& op_key) const;
  // Dispatch of a typical kernel-launching operator (µs): the median over operators.
  double typical_us() const noexcept { return typical_us_; }

 private:
  std::map<std::string, double> own_;     // the target's measured dispatch by op key
  std::map<std::string, double> pooled_;  // median over profiles that measured it
  double host_scale_ = 1;                 // the target's host relative to the pooled ones
  double typical_us_ = 0;
};

}  // namespace pm2lat::reports
