// libFuzzer target: any byte string as a kernel name must classify without crashing, and
// normalising must be idempotent on what it returns.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "pm2lat/classifier.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view name(reinterpret_cast<const char*>(data), size);
  const pm2lat::KernelClass c = pm2lat::classify_kernel(name);
  (void)c;
  try {
    const std::string once = pm2lat::normalize_kernel_name(name);
    (void)pm2lat::classify_kernel(once);
  } catch (const std::bad_alloc&) {}
  return 0;
}
