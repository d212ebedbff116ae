// The GPU backend of a build without the CUDA toolkit headers: planning works, measuring
// does not.
#include "pm2lat/calibrate/run/driver_backend.h"

namespace pm2lat::calibrate::run {

std::unique_ptr<MeasurementBackend> open_driver_backend(const DriverBackendOptions&) {
  throw BackendError(
      "this pm2lat-calibrate was built without the CUDA toolkit headers: it can plan (--dry-run) "
      "but not measure");
}

}  // namespace pm2lat::calibrate::run
