// The host dispatch of operators a call table cannot time, borrowed from the tables that time
// them.
//
// A call-timed profile splits each call into the host's dispatch before the kernel (`pre_us`)
// and the kernel. Only calls too small to be kernel-bound time the dispatch
// (call_dispatch.h); a table of large shapes alone leaves it to an intercept extrapolated far
// outside its data: NeuSight's A100-PCIE-80GB `linear` rows put it at 50.6 µs and its L4 rows
// at 0, where the tables that time small calls put it at 25-43 µs. Every kernel time the
// profile's fits and residuals derive is a call minus that dispatch, so such an intercept
// moves every kernel forecast of the operator by tens of microseconds: down when too long, up
// when too short. The call tables do not show it (a call forecast adds the same dispatch back);
// a whole run, replayed in kernel time, does.
//
// Dispatch is the host's and the framework's, not the GPU's (reports' host_dispatch.h replays
// runs that way): a GEMM operator a table does not time gets the median of the tables that
// time it, scaled by how this table's host compares with theirs on the operators both time.
// So does one whose intercept came out at 0 although the table times it (the T4's and P4's
// `linear`: 0 where the other tables measure 25-43 µs), which is no measurement either.
//
// Memory-bound operators keep their own: what the other tables lend for them is not measured
// where it matters (NeuSight's layer-norm intercepts sit at the call floor on the A100-40GB, T4
// and P4 tables), and lent to the A100-PCIE-80GB's fits, which price the H100's memory-bound
// kernels, it took the H100 traces' layer-norm kernels from 0.67x to 0.51x of their measured
// time and BERT-small's elementwise ones from 1.12x to 0.86x (predictor/ACCURACY.md).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "pm2lat/profile.h"

namespace pm2lat::calibrate {

// One call-timed table's overheads as its own calls estimate them.
struct TableOverheads {
  std::map<std::string, CallOverhead> overheads;  // every operator of the table
  std::set<std::string> timed;  // operators with a call small enough to time the dispatch
  std::set<std::string> gemm;   // operators whose calls run GEMMs
};

// For `tables[target]`: the dispatch (µs) of the GEMM operators it does not time, or times at
// 0, but another table times (the others' median, scaled by the target's host), by operator.
std::map<std::string, double> borrowed_dispatch_us(const std::vector<TableOverheads>& tables,
                                                   std::size_t target);

}  // namespace pm2lat::calibrate
