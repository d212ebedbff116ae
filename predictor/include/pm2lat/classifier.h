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

// cuDNN's set-up kernels inside a convolution, by name (offset tables, workspace
// initialisation, zeroing, precomputed indices): a single thread or a few blocks, never the
// convolution itself.
bool names_conv_setup_kernel(std::string_view name) noexcept;

// cuDNN's set-up and transform kernels inside a convolution, by configuration name (the set-up
// kernels above, layout transforms, Winograd data/filter/output transforms): what
// KernelClass::conv_helper says.
bool names_conv_helper_kernel(std::string_view config) noexcept;

}  // namespace pm2lat
