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
// runs that way): an operator a table does not time gets the median of the tables that time
// it, scaled by how this table's host compares with theirs on the operators both time. So
// does one whose intercept came out at 0 although the table times it (the T4's and P4's
// `linear`: 0 where the other tables measure 25-43 µs), which is no measurement either.
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
};

// For `tables[target]`: the dispatch (µs) of the operators it does not time, or times at 0,
// but another table times (the others' median, scaled by the target's host), by operator.
std::map<std::string, double> borrowed_dispatch_us(const std::vector<TableOverheads>& tables,
                                                   std::size_t target);

}  // namespace pm2lat::calibrate
