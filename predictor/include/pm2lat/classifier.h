// Kernel classifier: name (+ launch geometry) -> KernelClass. Pure, allocation only for the
// returned strings, never throws: any name, however odd, gives a class (kUnknown at worst).
#pragma once

#include <string_view>

#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_launch.h"

namespace pm2lat {

KernelClass classify_kernel(std::string_view name) noexcept;

// Reduces a kernel name to the configuration part: strips "void ", the argument list and
// a CUTLASS/device_kernel wrapper, so mangled, demangled and Kineto spellings of the same
// kernel give the same string.
std::string normalize_kernel_name(std::string_view name);

}  // namespace pm2lat
