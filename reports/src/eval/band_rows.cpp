#include "pm2lat/reports/eval/band_rows.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include <ostream>

#include "pm2lat/error_band_table.h"
#include "pm2lat/hash.h"

namespace pm2lat::reports {

BandRows::BandRows(std::ostream& out) : out_(out) {
  out_ << "shape,family,model,flags,scope,basis,measured_us,predicted_us,band_pct\n";
}

void BandRows::add(std::string_view shape, KernelFamily family, const Prediction& p, bool same_gpu,
                   double measured_us) {
  // A shape key is a number in a CSV field: its hash keeps the file small and unquoted.
  fmt::print(out_, "{:016x},{},{},{},{},{},{:.6g},{:.6g},{:.4g}\n", fnv1a(shape), to_string(family),
             to_string(p.model), to_string(band_flag_group(p.flags)),
             to_string(same_gpu ? BandScope::kSameGpu : BandScope::kCrossGpu), to_string(p.basis),
             measured_us, p.us, p.band_pct);
}

}  // namespace pm2lat::reports
