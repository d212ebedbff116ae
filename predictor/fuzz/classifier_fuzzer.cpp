// libFuzzer target: any byte string as a kernel name must classify, decode as an attention
// kernel and size a shapeless launch (the template arguments the name states) without
// crashing, and normalising must be idempotent on what it returns.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "pm2lat/classifier.h"
#include "pm2lat/models/attention_kernel.h"
#include "pm2lat/models/launch_work.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view name(reinterpret_cast<const char*>(data), size);
  const pm2lat::KernelClass c = pm2lat::classify_kernel(name);
  (void)pm2lat::decode_attention_kernel(name);
  try {
    (void)pm2lat::launch_work(name, c, pm2lat::Dim3{4096, 2, 1}, pm2lat::Dim3{32, 4, 1});
    const std::string once = pm2lat::normalize_kernel_name(name);
    (void)pm2lat::classify_kernel(once);
  } catch (const std::bad_alloc&) {}
  return 0;
}
