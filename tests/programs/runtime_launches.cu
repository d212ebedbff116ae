// A CUDA C++ program built by nvcc with -cudart shared: its <<<>>> launches go through the
// CUDA 13 launch ABI (__cudaGetKernel + __cudaLaunchKernel), plus explicit cudaLaunchKernel
// and cudaLaunchKernelExC (with a cluster). Prints "launch <demangled-ish name> <grid.x>".
// Then a round trip of 4 KiB with cudaMemcpyDefault, which reads each copy's direction from
// where the pointers lie.
#include <cuda_runtime.h>

#include <cstdio>

__global__ void scale_kernel(float* x, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

template <int V>
__global__ void vector_add_kernel(float* x, const float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i * V < n) x[i] += y[i];
}

__global__ void cluster_kernel(float* x) { x[blockIdx.x] = 0; }

int main() {
  float* x = nullptr;
  float* y = nullptr;
  if (cudaMalloc(&x, 1 << 20) != cudaSuccess || cudaMalloc(&y, 1 << 20) != cudaSuccess) return 70;

  scale_kernel<<<40, 256>>>(x, 10240, 2.0f);
  vector_add_kernel<4><<<dim3(12, 2, 1), dim3(128, 1, 1)>>>(x, y, 4096);

  int n = 777;
  float a = 0.5f;
  void* args[] = {&x, &n, &a};
  if (cudaLaunchKernel(reinterpret_cast<const void*>(&scale_kernel), dim3(3), dim3(64), args, 0,
                       nullptr) != cudaSuccess) {
    return 71;
  }

  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = 2;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(8);
  cfg.blockDim = dim3(128);
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  void* cargs[] = {&x};
  if (cudaLaunchKernelExC(&cfg, reinterpret_cast<const void*>(&cluster_kernel), cargs) !=
      cudaSuccess) {
    return 72;
  }
  if (cudaDeviceSynchronize() != cudaSuccess) return 73;
  static float out[1024], in[1024];
  for (int i = 0; i < 1024; ++i) out[i] = static_cast<float>(i);
  if (cudaMemcpy(y, out, sizeof(out), cudaMemcpyDefault) != cudaSuccess ||
      cudaMemcpy(in, y, sizeof(in), cudaMemcpyDefault) != cudaSuccess) {
    return 74;
  }
  for (int i = 0; i < 1024; ++i) {
    if (in[i] != out[i]) return 75;
  }
  std::printf("done\n");
  return 0;
}
