// cuDNN convolution entry points: the legacy cudnnConvolutionForward (shape from its tensor,
// filter and convolution descriptors) and the graph API's cudnnBackendExecute (shape from
// the execution plan's operation graph, walked once per plan and cached until the plan is
// destroyed).
#include <cudnn.h>

#include <mutex>
#include <unordered_map>
#include <vector>

#include "interpose/export.h"
#include "interpose/library_context.h"

using namespace pm2lat;
using namespace pm2lat::shim;

namespace {

// Companions of the cuDNN function called (`real`), from its own copy of cuDNN.
NextDefinition g_get_tensor;
NextDefinition g_get_filter;
NextDefinition g_get_conv;
NextDefinition g_get_groups;
NextDefinition g_create;
NextDefinition g_get_attr;
NextDefinition g_destroy;

ConvShape legacy_shape(const void* real, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                       cudnnConvolutionDescriptor_t conv) noexcept {
  ConvShape s;
  auto get_tensor =
      g_get_tensor.get<decltype(&cudnnGetTensor4dDescriptor)>("cudnnGetTensor4dDescriptor", real);
  auto get_filter =
      g_get_filter.get<decltype(&cudnnGetFilter4dDescriptor)>("cudnnGetFilter4dDescriptor", real);
  auto get_conv = g_get_conv.get<decltype(&cudnnGetConvolution2dDescriptor)>(
      "cudnnGetConvolution2dDescriptor", real);
  auto get_groups = g_get_groups.get<decltype(&cudnnGetConvolutionGroupCount)>(
      "cudnnGetConvolutionGroupCount", real);
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  int n = 0, c = 0, h = 0, wd = 0, ns = 0, cs = 0, hs = 0, ws = 0;
  if (get_tensor &&
      get_tensor(x, &type, &n, &c, &h, &wd, &ns, &cs, &hs, &ws) == CUDNN_STATUS_SUCCESS) {
    s.batch = n;
    s.in_channels = c;
    s.in_h = h;
    s.in_w = wd;
    s.dtype = from_cudnn_data_type(type);
  }
  cudnnTensorFormat_t format{};
  int k = 0, fc = 0, r = 0, fs = 0;
  if (get_filter && get_filter(w, &type, &format, &k, &fc, &r, &fs) == CUDNN_STATUS_SUCCESS) {
    s.out_channels = k;
    s.kernel_h = r;
    s.kernel_w = fs;
  }
  int ph = 0, pw = 0, u = 1, v = 1, dh = 1, dw = 1;
  cudnnConvolutionMode_t mode{};
  cudnnDataType_t compute{};
  if (get_conv &&
      get_conv(conv, &ph, &pw, &u, &v, &dh, &dw, &mode, &compute) == CUDNN_STATUS_SUCCESS) {
    s.pad_h = ph;
    s.pad_w = pw;
    s.stride_h = u;
    s.stride_w = v;
    s.dilation_h = dh;
    s.dilation_w = dw;
  }
  int groups = 1;
  if (get_groups && get_groups(conv, &groups) == CUDNN_STATUS_SUCCESS) s.groups = groups;
  return s;
}

// ---- backend graph API ---------------------------------------------------------------------

struct Backend {
  decltype(&cudnnBackendCreateDescriptor) create;
  decltype(&cudnnBackendGetAttribute) get;
  decltype(&cudnnBackendDestroyDescriptor) destroy;
};

// Descriptors created to receive attributes, destroyed when the walk ends.
class Walk {
 public:
  explicit Walk(const Backend& b) : b_(b) {}
  ~Walk() {
    for (auto d : created_) b_.destroy(d);
  }
  cudnnBackendDescriptor_t child(cudnnBackendDescriptor_t parent, cudnnBackendAttributeName_t a,
                                 cudnnBackendDescriptorType_t type) {
    cudnnBackendDescriptor_t out = make(type);
    int64_t n = 0;
    if (out == nullptr || parent == nullptr ||
        b_.get(parent, a, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &out) != CUDNN_STATUS_SUCCESS ||
        n < 1) {
      return nullptr;
    }
    return out;
  }
  std::vector<cudnnBackendDescriptor_t> children(cudnnBackendDescriptor_t parent,
                                                 cudnnBackendAttributeName_t a,
                                                 cudnnBackendDescriptorType_t type) {
    int64_t n = 0;
    std::vector<cudnnBackendDescriptor_t> out;
    if (parent == nullptr ||
        b_.get(parent, a, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, nullptr) != CUDNN_STATUS_SUCCESS ||
        n <= 0 || n > 64) {
      return out;
    }
    for (int64_t i = 0; i < n; ++i) out.push_back(make(type));
    if (b_.get(parent, a, CUDNN_TYPE_BACKEND_DESCRIPTOR, n, &n, out.data()) !=
        CUDNN_STATUS_SUCCESS) {
      out.clear();  // not all of that type
    }
    return out;
  }
  std::vector<int64_t> ints(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t a) {
    int64_t values[8] = {};
    int64_t n = 0;
    if (d == nullptr || b_.get(d, a, CUDNN_TYPE_INT64, 8, &n, values) != CUDNN_STATUS_SUCCESS)
      return {};
    return std::vector<int64_t>(values, values + (n < 8 ? n : 8));
  }
  cudnnDataType_t data_type(cudnnBackendDescriptor_t d) {
    cudnnDataType_t t = CUDNN_DATA_FLOAT;
    int64_t n = 0;
    if (d != nullptr) b_.get(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &n, &t);
    return t;
  }

 private:
  cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t type) {
    cudnnBackendDescriptor_t d = nullptr;
    if (b_.create(type, &d) != CUDNN_STATUS_SUCCESS) return nullptr;
    created_.push_back(d);
    return d;
  }
  const Backend& b_;
  std::vector<cudnnBackendDescriptor_t> created_;
};

// The first forward convolution of the plan's operation graph; kind stays unknown for plans
// whose operations are not all convolutions (fused graphs the shim does not decode yet).
OpPod describe_plan(const void* real, cudnnBackendDescriptor_t plan) {
  OpPod op;
  Backend b{
      g_create.get<decltype(&cudnnBackendCreateDescriptor)>("cudnnBackendCreateDescriptor", real),
      g_get_attr.get<decltype(&cudnnBackendGetAttribute)>("cudnnBackendGetAttribute", real),
      g_destroy.get<decltype(&cudnnBackendDestroyDescriptor)>("cudnnBackendDestroyDescriptor",
                                                              real)};
  if (!b.create || !b.get || !b.destroy) return op;
  Walk walk(b);
  auto cfg =
      walk.child(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
  auto engine = walk.child(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  auto graph = walk.child(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH,
                          CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  for (auto conv_op : walk.children(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
                                    CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR)) {
    auto x = walk.child(conv_op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                        CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    auto w = walk.child(conv_op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                        CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    auto conv = walk.child(conv_op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                           CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    const auto xd = walk.ints(x, CUDNN_ATTR_TENSOR_DIMENSIONS);
    const auto wd = walk.ints(w, CUDNN_ATTR_TENSOR_DIMENSIONS);
    if (xd.size() != 4 || wd.size() != 4) continue;
    ConvShape& s = op.conv();
    s.batch = xd[0];
    s.in_channels = xd[1];
    s.in_h = xd[2];
    s.in_w = xd[3];
    s.out_channels = wd[0];
    s.kernel_h = wd[2];
    s.kernel_w = wd[3];
    s.groups = wd[1] > 0 ? xd[1] / wd[1] : 1;
    s.dtype = from_cudnn_data_type(walk.data_type(x));
    const auto pad = walk.ints(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS);
    const auto stride = walk.ints(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES);
    const auto dil = walk.ints(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS);
    if (pad.size() == 2) {
      s.pad_h = pad[0];
      s.pad_w = pad[1];
    }
    if (stride.size() == 2) {
      s.stride_h = stride[0];
      s.stride_w = stride[1];
    }
    if (dil.size() == 2) {
      s.dilation_h = dil[0];
      s.dilation_w = dil[1];
    }
    op.kind = OpKind::kConv;
    break;
  }
  return op;
}

struct PlanCache {
  std::mutex mu;
  std::unordered_map<cudnnBackendDescriptor_t, OpPod> plans;
};

PlanCache& plan_cache() {
  static PlanCache* c = new PlanCache();
  return *c;
}

}  // namespace

extern "C" {

PM2LAT_EXPORT cudnnStatus_t cudnnConvolutionForward(
    cudnnHandle_t handle, const void* alpha, const cudnnTensorDescriptor_t xDesc, const void* x,
    const cudnnFilterDescriptor_t wDesc, const void* w, const cudnnConvolutionDescriptor_t convDesc,
    cudnnConvolutionFwdAlgo_t algo, void* workSpace, size_t workSpaceSizeInBytes, const void* beta,
    const cudnnTensorDescriptor_t yDesc, void* y) {
  static NextDefinition next;
  auto real = next.get<decltype(&cudnnConvolutionForward)>("cudnnConvolutionForward",
                                                           __builtin_return_address(0));
  if (real == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
  LibraryCallScope scope(LibrarySource::kCudnn, LibraryApi::kCudnnConvolutionForward,
                         OpKind::kConv);
  if (scope.outermost()) {
    scope.op().conv() = legacy_shape(reinterpret_cast<const void*>(real), xDesc, wDesc, convDesc);
    scope.publish();
  }
  return real(handle, alpha, xDesc, x, wDesc, w, convDesc, algo, workSpace, workSpaceSizeInBytes,
              beta, yDesc, y);
}

PM2LAT_EXPORT cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle,
                                                cudnnBackendDescriptor_t executionPlan,
                                                cudnnBackendDescriptor_t variantPack) {
  static NextDefinition next;
  auto real =
      next.get<decltype(&cudnnBackendExecute)>("cudnnBackendExecute", __builtin_return_address(0));
  if (real == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
  LibraryCallScope scope(LibrarySource::kCudnn, LibraryApi::kCudnnBackendExecute, OpKind::kUnknown);
  if (scope.outermost() && executionPlan != nullptr) {
    PlanCache& cache = plan_cache();
    OpPod op;
    bool found = false;
    {
      std::lock_guard<std::mutex> lock(cache.mu);
      if (auto it = cache.plans.find(executionPlan); it != cache.plans.end()) {
        op = it->second;
        found = true;
      }
    }
    if (!found) {
      op = describe_plan(reinterpret_cast<const void*>(real), executionPlan);
      std::lock_guard<std::mutex> lock(cache.mu);
      if (cache.plans.size() >= 4096) cache.plans.clear();
      cache.plans[executionPlan] = op;
    }
    scope.op().kind = op.kind;
    scope.op().conv() = op.conv_or_default();
    scope.publish();
  }
  return real(handle, executionPlan, variantPack);
}

// Plans are cached by address: forget one when it is destroyed, before the address is reused.
PM2LAT_EXPORT cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor) {
  static NextDefinition next;
  auto real = next.get<decltype(&cudnnBackendDestroyDescriptor)>("cudnnBackendDestroyDescriptor",
                                                                 __builtin_return_address(0));
  if (real == nullptr) return CUDNN_STATUS_NOT_INITIALIZED;
  {
    PlanCache& cache = plan_cache();
    std::lock_guard<std::mutex> lock(cache.mu);
    cache.plans.erase(descriptor);
  }
  return real(descriptor);
}

}  // extern "C"
