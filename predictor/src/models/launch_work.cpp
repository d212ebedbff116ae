#include "pm2lat/models/launch_work.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "classify/name_parts.h"
#include "cub_tile_work.h"
#include "pm2lat/classifier.h"

namespace pm2lat {
namespace {

// PyTorch's multi_tensor_apply hands each block one chunk of this many elements per list
// (kChunkSize in ATen's MultiTensorApply.cuh).
constexpr double kMultiTensorChunk = 65536;
// ATen's vectorised/unrolled elementwise kernels: 4 elements per thread (thread_work_size).
constexpr double kElementsPerThread = 4;
// ATen's persistent softmax handles rows of up to 2^11 elements (softmax.cu dispatches longer
// rows to the block-per-row kernels), two rows per warp up to 128 (PersistentSoftmax.cuh).
constexpr std::int64_t kMaxPersistentSoftmaxLog2 = 11;
constexpr std::int64_t kTwoRowsPerWarpUpTo = 128;
constexpr std::int64_t kWarpSize = 32;

// The integer after `key` in a name, blanks skipped ("std::array<char*, 3ul>" -> 3), or 0
// (also for one of more digits than any count a kernel name states: no overflow on a made-up
// name). Unlike classify/name_parts.h's int_after, which reads a number glued to its key.
std::int64_t count_after(std::string_view name, std::string_view key) {
  constexpr std::int64_t kLargest = std::int64_t{1} << 40;
  const std::size_t p = name.find(key);
  if (p == std::string_view::npos) return 0;
  std::size_t i = p + key.size();
  while (i < name.size() && name[i] == ' ') ++i;
  std::int64_t v = 0;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9') {
    v = v * 10 + (name[i] - '0');
    if (v > kLargest) return 0;
    ++i;
  }
  return v;
}

// A count of rows or columns as a shape holds it; no overflow from any launch or name.
std::int64_t shape_count(double n) { return static_cast<std::int64_t>(std::clamp(n, 0.0, 0x1p62)); }

// The first two integer template arguments ("elementwise_kernel<128, 2, ..." -> 128, 2).
std::pair<std::int64_t, std::int64_t> leading_ints(std::string_view name, std::string_view kernel) {
  const std::size_t p = name.find(kernel);
  if (p == std::string_view::npos) return {0, 0};
  const std::int64_t a = count_after(name.substr(p), std::string(kernel) + "<");
  const std::size_t comma = name.find(',', p);
  const std::int64_t b = comma == std::string_view::npos ? 0 : count_after(name.substr(comma), ",");
  return {a, b};
}

// Elements one block of ATen's elementwise kernels handles: vectorized/unrolled kernels run
// 128 threads x 4 elements (x the vector width when it is wider), elementwise_kernel<nt, vt>
// nt x vt. 0 for other kernels.
double elementwise_block_elements(std::string_view name, const Dim3& block) {
  const double threads = static_cast<double>(block.volume());
  if (const std::size_t p = name.find("vectorized_elementwise_kernel<");
      p != std::string_view::npos) {
    const std::int64_t vec = count_after(name.substr(p), "vectorized_elementwise_kernel<");
    return threads * std::max<double>(kElementsPerThread, static_cast<double>(vec));
  }
  if (name.find("unrolled_elementwise_kernel") != std::string_view::npos)
    return threads * kElementsPerThread;
  if (name.find("elementwise_kernel<") != std::string_view::npos) {
    const auto [nt, vt] = leading_ints(name, "elementwise_kernel");
    return nt > 0 && vt > 0 ? static_cast<double>(nt) * static_cast<double>(vt) : threads * 2;
  }
  return 0;
}

// ATen's persistent softmax (PersistentSoftmax.cuh, dispatch_softmax_forward/backward): each
// row of at most 2^log2_elements elements (the template's fourth argument) is one warp's,
// blocks of 128 threads are (warp size, warps per block), and a warp takes two rows when they
// are at most 128 elements long. The row length is padded to that power of two (the bytes an
// upper bound). Forward reads the input (and a mask when masked) and writes the output;
// backward reads the gradient and the output and writes the input's gradient.
std::optional<LaunchWork> persistent_softmax_work(std::string_view name, double elem,
                                                  const Dim3& grid, const Dim3& block) {
  std::size_t at = name.find("softmax_warp_forward<");
  const bool forward = at != std::string_view::npos;
  if (!forward) at = name.find("softmax_warp_backward<");
  if (at == std::string_view::npos) return std::nullopt;
  const std::vector<std::string_view> args = template_args(name.substr(at));
  if (args.size() < 4) return std::nullopt;
  const std::int64_t log2_elements = parse_int(args[3]).value_or(0);
  if (log2_elements <= 0 || log2_elements > kMaxPersistentSoftmaxLog2) return std::nullopt;
  const std::int64_t cols = std::int64_t{1} << log2_elements;
  const std::int64_t rows_per_warp = cols <= kTwoRowsPerWarpUpTo ? 2 : 1;
  // A "warp" is min(row length, 32) threads: blocks of (8, 16) threads hold 16 of them.
  const std::int64_t warps = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(block.volume()) / std::min<std::int64_t>(cols, kWarpSize));
  LaunchWork w;
  w.kind = OpKind::kSoftmax;
  const double rows = static_cast<double>(grid.volume()) * static_cast<double>(warps) *
                      static_cast<double>(rows_per_warp);
  w.vec.rows = shape_count(rows);
  w.vec.cols = cols;
  const double elems = rows * static_cast<double>(cols);
  const bool masked = forward && args.size() > 5 && args[5] == "true";
  w.vec.bytes_read = elems * (forward ? elem + (masked ? 1.0 : 0.0) : 2.0 * elem);
  w.vec.bytes_written = elems * elem;
  return w;
}

// Whether the name is one of the kernels whose launch the rules read. Their identifiers
// appear whole in mangled names too ("29vectorized_elementwise_kernel"), so any other kernel
// (the common case for a launch without a shape) is turned away before its name is demangled.
bool names_launch_work(std::string_view name) {
  return name.find("elementwise_kernel") != std::string_view::npos ||
         name.find("multi_tensor_apply_kernel") != std::string_view::npos ||
         name.find("softmax_warp_") != std::string_view::npos || names_cub_tile_work(name);
}

// Demangled names carry the template arguments the rules read; Kineto's already do.
std::string readable(std::string_view kernel_name) {
  return kernel_name.substr(0, 2) == "_Z" ? normalize_kernel_name(kernel_name)
                                          : std::string(kernel_name);
}

}  // namespace

std::optional<LaunchWork> launch_work(std::string_view kernel_name, const KernelClass& cls,
                                      const Dim3& grid, const Dim3& block, std::size_t tensor_lists,
                                      std::string_view op_name) {
  if (!names_launch_work(kernel_name)) return std::nullopt;
  const std::string text = readable(kernel_name);
  const std::string_view name = text;
  const double elem = cls.dtype != DType::kUnknown ? dtype_bytes(cls.dtype) : 4.0;
  const double blocks = static_cast<double>(grid.volume());
  LaunchWork w;
  w.vec.dtype = cls.dtype;
  if (name.find("multi_tensor_apply_kernel") != std::string_view::npos) {
    // TensorListMetadata<depth> / TensorListScalarListMetadata<float, depth>: the number of
    // lists each block walks.
    std::int64_t depth = 0;
    if (const std::size_t p = name.find("Metadata<"); p != std::string_view::npos) {
      const std::size_t end = name.find('>', p);
      const std::string_view args =
          name.substr(p, end == std::string_view::npos ? std::string_view::npos : end - p);
      const std::size_t comma = args.rfind(',');
      depth = count_after(args, comma == std::string_view::npos ? "Metadata<" : ",");
    }
    if (depth <= 0) depth = static_cast<std::int64_t>(std::max<std::size_t>(1, tensor_lists));
    // In-place ops read every list and write the first; out-of-place ones write the last
    // list and read the others; fused optimizers (Adam: params, grads, moments) update all
    // lists but the gradients.
    const bool in_place = !op_name.empty() && op_name.back() == '_';
    const bool optimizer = name.find("Adam") != std::string_view::npos ||
                           name.find("SGD") != std::string_view::npos ||
                           name.find("Adagrad") != std::string_view::npos;
    double lists_read = static_cast<double>(depth), lists_written = 1;
    if (optimizer) {
      lists_written = static_cast<double>(std::max<std::int64_t>(1, depth - 1));
    } else if (!in_place && depth > 1) {
      lists_read = static_cast<double>(depth - 1);
    }
    const double elems = blocks * kMultiTensorChunk;
    w.kind = OpKind::kElementwise;
    w.vec.rows = shape_count(blocks);
    w.vec.cols = static_cast<std::int64_t>(kMultiTensorChunk);
    w.vec.bytes_read = elems * elem * lists_read;
    w.vec.bytes_written = elems * elem * lists_written;
    return w;
  }
  if (auto tiles = cub_tile_work(name, grid, block)) {
    w.kind = OpKind::kReduction;
    w.vec = *tiles;
    w.vec.dtype = cls.dtype;
    return w;
  }
  const double per_block = elementwise_block_elements(name, block);
  if (per_block <= 0) {
    auto softmax = persistent_softmax_work(name, elem, grid, block);
    if (softmax) softmax->vec.dtype = cls.dtype;
    return softmax;
  }
  // std::array<char*, N> (at::detail::Array<char*, N> before PyTorch 2.1): N tensors, the
  // first of which is the output. Names without it: binary functors read two tensors.
  std::int64_t arrays = count_after(name, "rray<char*,");
  if (arrays <= 0) {
    const bool binary = name.find("Binary") != std::string_view::npos ||
                        name.find("CUDAFunctor_") != std::string_view::npos;
    arrays = binary ? 3 : 2;
  }
  const double elems = blocks * per_block;
  w.kind = cls.family == KernelFamily::kCopy ? OpKind::kCopy : OpKind::kElementwise;
  w.vec.rows = shape_count(blocks);
  w.vec.cols = shape_count(per_block);
  w.vec.bytes_written = elems * elem;
  w.vec.bytes_read = elems * elem * static_cast<double>(std::max<std::int64_t>(0, arrays - 1));
  return w;
}

VectorShape gemm_helper_work(const GemmShape& g, KernelFamily family) {
  VectorShape v;
  const double eb = dtype_bytes(g.a);
  const double out = static_cast<double>(g.batch * g.m * g.n);
  v.rows = g.batch * g.m;
  v.cols = g.n;
  v.dtype = g.a;
  if (family == KernelFamily::kSplitKReduce) {
    // Each slice of the K loop left its FP32 partial sums of the whole output; a reduction
    // exists only for two slices or more, and the GEMM kernel's launch says how many it ran.
    const auto slices = static_cast<double>(std::max(kFewestSplitKSlices, g.algo_split_k));
    v.bytes_read = slices * out * 4;
    v.bytes_written = out * eb;
  } else {
    v.bytes_read = static_cast<double>(g.batch) * static_cast<double>(g.m * g.k + g.k * g.n) * eb;
    v.bytes_written = out * eb;
  }
  return v;
}

double elementwise_launch_elements(std::string_view kernel_name, const Dim3& grid,
                                   const Dim3& block) {
  if (kernel_name.find("elementwise_kernel") == std::string_view::npos) return 0;
  const std::string text = readable(kernel_name);
  return static_cast<double>(grid.volume()) * elementwise_block_elements(text, block);
}

}  // namespace pm2lat
