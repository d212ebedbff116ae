// The fake GPU's memory: addresses the host cannot touch, as a real device's are not.
//
// A device pointer from cuMemAlloc is a reserved range mapped without access, so a host read
// or write through it faults as it would on a GPU (where host memory is not device memory);
// the fake's copies and memsets reach the bytes through a second, host-visible mapping of the
// same size. Copies whose device range is not inside one live allocation fail with
// CUDA_ERROR_INVALID_VALUE, as the driver's do, and so does freeing what was not allocated.
#pragma once

#include <cuda.h>

#include <cstddef>

namespace fake_cuda {

// A new allocation of `bytes` (> 0), or 0 when the host is out of address space.
CUdeviceptr device_alloc(std::size_t bytes);
// Releases an allocation by its base address; false when `ptr` is not one.
bool device_free(CUdeviceptr ptr);
// The host-visible bytes of [ptr, ptr + bytes) when the range lies inside one live
// allocation, else nullptr.
void* device_bytes(CUdeviceptr ptr, std::size_t bytes);
// Whether `ptr` points into a live allocation (unified addressing: what cuMemcpy infers a
// copy's direction from).
bool is_device_pointer(CUdeviceptr ptr);

}  // namespace fake_cuda
