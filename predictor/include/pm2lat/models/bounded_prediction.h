// The predictor's exit: what physics allows (physical_bounds.h) applied to a model's answer.
//
//   * Work a launch cannot have done (work_consistent_with_launch) is not believed: the
//     record's stated work is dropped and the launch geometry sizes the kernel instead
//     (the models' shapeless paths), flag shape_rejected.
//   * The answer is held within the bounds of the record on the target, seen from the GPU
//     the record was observed on, in the basis asked for: below the lower bound it becomes
//     the lower bound, above the upper the upper (flag clamped).
#pragma once

#include "pm2lat/device_spec.h"
#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/models/physical_bounds.h"
#include "pm2lat/prediction.h"

namespace pm2lat {

// The record with its operator's stated work (shapes, bytes) removed: what the models see
// when the launch geometry stands in for rejected work. The operator's kind and name stay.
KernelRecord without_stated_work(const KernelRecord& record);

// What the exit holds a prediction of the record to, from one look at its operator's work.
struct AppliedBounds {
  // Those of the stated work, or of the launch alone when the stated work is rejected.
  PhysicalBounds bounds;
  // The record's operator states work its launch cannot have done (work_consistent_with_launch).
  bool stated_work_rejected = false;
};

// The bounds a prediction of the record is held within. `source` null: observed on the target.
AppliedBounds applied_bounds(const KernelRecord& record, const KernelClass& cls,
                             const DeviceSpec& target, const DeviceSpec* source,
                             TimeBasis basis) noexcept;

// `p` held within `bounds`: set to the bound it crossed, flag clamped. Communication (link
// time, not the GPU's work) and empty answers pass unchanged.
Prediction within_bounds(Prediction p, const PhysicalBounds& bounds) noexcept;

}  // namespace pm2lat
