// A fake libcudnn.so.9: the legacy convolution API (tensor/filter/convolution descriptors and
// cudnnConvolutionForward) and enough of the backend graph API (generic descriptors with
// attributes, an operation graph holding a convolution, engine, engine config, execution
// plan, cudnnBackendExecute) to launch real cuDNN kernel names. Signatures come from the
// cuDNN 9 headers shipped with CUDA 13.0.
#include <cudnn.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "fake_library_driver.h"

struct cudnnContext {
  cudaStream_t stream = nullptr;
};

struct cudnnTensorStruct {
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  int n = 0, c = 0, h = 0, w = 0;
};

struct cudnnFilterStruct {
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  cudnnTensorFormat_t format = CUDNN_TENSOR_NCHW;
  int k = 0, c = 0, h = 0, w = 0;
};

struct cudnnConvolutionStruct {
  int pad_h = 0, pad_w = 0, u = 1, v = 1, dil_h = 1, dil_w = 1;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  int groups = 1;
};

namespace {

const std::string kLegacyFprop =
    "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_"
    "stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn_infer";
const std::string kBackendFprop =
    "_ZN19cutlass_cudnn_infer6KernelI67cutlass_tensorop_s1688fprop_optimized_tf32_128x128_32x4_"
    "nhwc_align4EEvNT_6ParamsE";

fake_lib::LibraryDriver& driver() {
  static fake_lib::LibraryDriver d({kLegacyFprop, kBackendFprop});
  return d;
}

// A backend descriptor: its type and attribute values as the caller set them.
struct BackendDescriptor {
  cudnnBackendDescriptorType_t type;
  bool finalized = false;
  struct Value {
    cudnnBackendAttributeType_t type;
    std::int64_t count = 0;
    std::vector<unsigned char> bytes;             // plain values
    std::vector<BackendDescriptor*> descriptors;  // CUDNN_TYPE_BACKEND_DESCRIPTOR
  };
  std::map<cudnnBackendAttributeName_t, Value> attrs;
};

std::size_t element_size(cudnnBackendAttributeType_t t) {
  switch (t) {
    case CUDNN_TYPE_INT64: return sizeof(std::int64_t);
    case CUDNN_TYPE_DOUBLE: return sizeof(double);
    case CUDNN_TYPE_FLOAT: return sizeof(float);
    case CUDNN_TYPE_BOOLEAN: return sizeof(bool);
    case CUDNN_TYPE_HANDLE: return sizeof(cudnnHandle_t);
    case CUDNN_TYPE_VOID_PTR: return sizeof(void*);
    default: return sizeof(std::int32_t);  // enums
  }
}

const BackendDescriptor::Value* attr(const BackendDescriptor* d, cudnnBackendAttributeName_t a) {
  if (d == nullptr) return nullptr;
  auto it = d->attrs.find(a);
  return it == d->attrs.end() ? nullptr : &it->second;
}

BackendDescriptor* child(const BackendDescriptor* d, cudnnBackendAttributeName_t a) {
  const auto* v = attr(d, a);
  return (v && !v->descriptors.empty()) ? v->descriptors[0] : nullptr;
}

std::vector<std::int64_t> ints(const BackendDescriptor* d, cudnnBackendAttributeName_t a) {
  std::vector<std::int64_t> out;
  const auto* v = attr(d, a);
  if (v == nullptr || v->type != CUDNN_TYPE_INT64) return out;
  out.resize(std::size_t(v->count));
  std::memcpy(out.data(), v->bytes.data(), out.size() * sizeof(std::int64_t));
  return out;
}

cudnnStatus_t launch_conv(cudnnHandle_t handle, const std::string& kernel, std::int64_t n,
                          std::int64_t k, std::int64_t p, std::int64_t q) {
  auto s = reinterpret_cast<CUstream>(handle ? handle->stream : nullptr);
  CUresult r = driver().launch(kernel, fake_lib::ceil_div(n * p * q, 128),
                               fake_lib::ceil_div(k, 128), 1, 128, s);
  return r == CUDA_SUCCESS ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_EXECUTION_FAILED;
}

std::int64_t out_dim(std::int64_t in, std::int64_t f, std::int64_t pad, std::int64_t stride,
                     std::int64_t dil) {
  return (in + 2 * pad - dil * (f - 1) - 1) / stride + 1;
}

}  // namespace

extern "C" {

size_t cudnnGetVersion(void) { return 91000; }

cudnnStatus_t cudnnCreate(cudnnHandle_t* handle) {
  if (handle == nullptr) return CUDNN_STATUS_BAD_PARAM;
  if (!driver().ready()) return CUDNN_STATUS_NOT_INITIALIZED;
  *handle = new cudnnContext();
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
  delete handle;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId) {
  if (handle == nullptr) return CUDNN_STATUS_BAD_PARAM;
  handle->stream = streamId;
  return CUDNN_STATUS_SUCCESS;
}

// ---- legacy descriptors --------------------------------------------------------------------

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* d) {
  *d = new cudnnTensorStruct();
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) {
  delete d;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, cudnnTensorFormat_t,
                                         cudnnDataType_t dataType, int n, int c, int h, int w) {
  if (d == nullptr) return CUDNN_STATUS_BAD_PARAM;
  *d = cudnnTensorStruct{dataType, n, c, h, w};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetTensor4dDescriptor(const cudnnTensorDescriptor_t d, cudnnDataType_t* dataType,
                                         int* n, int* c, int* h, int* w, int* nStride, int* cStride,
                                         int* hStride, int* wStride) {
  if (d == nullptr) return CUDNN_STATUS_BAD_PARAM;
  *dataType = d->type;
  *n = d->n;
  *c = d->c;
  *h = d->h;
  *w = d->w;
  *wStride = 1;
  *hStride = d->w;
  *cStride = d->h * d->w;
  *nStride = d->c * d->h * d->w;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* d) {
  *d = new cudnnFilterStruct();
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) {
  delete d;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t dataType,
                                         cudnnTensorFormat_t format, int k, int c, int h, int w) {
  if (d == nullptr) return CUDNN_STATUS_BAD_PARAM;
  *d = cudnnFilterStruct{dataType, format, k, c, h, w};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetFilter4dDescriptor(const cudnnFilterDescriptor_t d, cudnnDataType_t* dataType,
                                         cudnnTensorFormat_t* format, int* k, int* c, int* h,
                                         int* w) {
  if (d == nullptr) return CUDNN_STATUS_BAD_PARAM;
  *dataType = d->type;
  *format = d->format;
  *k = d->k;
  *c = d->c;
  *h = d->h;
  *w = d->w;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* d) {
  *d = new cudnnConvolutionStruct();
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d) {
  delete d;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int pad_h, int pad_w,
                                              int u, int v, int dilation_h, int dilation_w,
                                              cudnnConvolutionMode_t mode,
                                              cudnnDataType_t computeType) {
  if (d == nullptr) return CUDNN_STATUS_BAD_PARAM;
  d->pad_h = pad_h;
  d->pad_w = pad_w;
  d->u = u;
  d->v = v;
  d->dil_h = dilation_h;
  d->dil_w = dilation_w;
  d->mode = mode;
  d->compute = computeType;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolution2dDescriptor(const cudnnConvolutionDescriptor_t d, int* pad_h,
                                              int* pad_w, int* u, int* v, int* dilation_h,
                                              int* dilation_w, cudnnConvolutionMode_t* mode,
                                              cudnnDataType_t* computeType) {
  if (d == nullptr) return CUDNN_STATUS_BAD_PARAM;
  *pad_h = d->pad_h;
  *pad_w = d->pad_w;
  *u = d->u;
  *v = d->v;
  *dilation_h = d->dil_h;
  *dilation_w = d->dil_w;
  *mode = d->mode;
  *computeType = d->compute;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int groupCount) {
  if (d == nullptr) return CUDNN_STATUS_BAD_PARAM;
  d->groups = groupCount;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int* groupCount) {
  if (d == nullptr) return CUDNN_STATUS_BAD_PARAM;
  *groupCount = d->groups;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void*,
                                      const cudnnTensorDescriptor_t xDesc, const void*,
                                      const cudnnFilterDescriptor_t wDesc, const void*,
                                      const cudnnConvolutionDescriptor_t convDesc,
                                      cudnnConvolutionFwdAlgo_t, void*, size_t, const void*,
                                      const cudnnTensorDescriptor_t, void*) {
  if (handle == nullptr || xDesc == nullptr || wDesc == nullptr || convDesc == nullptr) {
    return CUDNN_STATUS_BAD_PARAM;
  }
  const auto p = out_dim(xDesc->h, wDesc->h, convDesc->pad_h, convDesc->u, convDesc->dil_h);
  const auto q = out_dim(xDesc->w, wDesc->w, convDesc->pad_w, convDesc->v, convDesc->dil_w);
  return launch_conv(handle, kLegacyFprop, xDesc->n, wDesc->k, p, q);
}

// ---- backend graph API ----------------------------------------------------------------------

cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t descriptorType,
                                           cudnnBackendDescriptor_t* descriptor) {
  if (descriptor == nullptr) return CUDNN_STATUS_BAD_PARAM;
  *descriptor = new BackendDescriptor{descriptorType, false, {}};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor) {
  delete static_cast<BackendDescriptor*>(descriptor);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor) {
  if (descriptor == nullptr) return CUDNN_STATUS_BAD_PARAM;
  static_cast<BackendDescriptor*>(descriptor)->finalized = true;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                                       cudnnBackendAttributeName_t attributeName,
                                       cudnnBackendAttributeType_t attributeType,
                                       int64_t elementCount, const void* arrayOfElements) {
  auto* d = static_cast<BackendDescriptor*>(descriptor);
  if (d == nullptr || elementCount < 0 || (elementCount > 0 && arrayOfElements == nullptr)) {
    return CUDNN_STATUS_BAD_PARAM;
  }
  BackendDescriptor::Value v{attributeType, elementCount, {}, {}};
  if (attributeType == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
    const auto* ds = static_cast<const cudnnBackendDescriptor_t*>(arrayOfElements);
    for (int64_t i = 0; i < elementCount; ++i) {
      v.descriptors.push_back(static_cast<BackendDescriptor*>(ds[i]));
    }
  } else {
    const auto* bytes = static_cast<const unsigned char*>(arrayOfElements);
    v.bytes.assign(bytes, bytes + element_size(attributeType) * std::size_t(elementCount));
  }
  d->attrs[attributeName] = std::move(v);
  return CUDNN_STATUS_SUCCESS;
}

// Like cuDNN, descriptor-valued attributes are copied into descriptors the caller created.
cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor,
                                       cudnnBackendAttributeName_t attributeName,
                                       cudnnBackendAttributeType_t attributeType,
                                       int64_t requestedElementCount, int64_t* elementCount,
                                       void* arrayOfElements) {
  const auto* d = static_cast<const BackendDescriptor*>(descriptor);
  const auto* v = attr(d, attributeName);
  if (v == nullptr || v->type != attributeType) return CUDNN_STATUS_BAD_PARAM;
  if (elementCount) *elementCount = v->count;
  const int64_t n = std::min(requestedElementCount, v->count);
  if (n <= 0 || arrayOfElements == nullptr) return CUDNN_STATUS_SUCCESS;
  if (attributeType == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
    auto* out = static_cast<cudnnBackendDescriptor_t*>(arrayOfElements);
    for (int64_t i = 0; i < n; ++i) {
      auto* dst = static_cast<BackendDescriptor*>(out[i]);
      const BackendDescriptor* src = v->descriptors[std::size_t(i)];
      if (dst == nullptr || src == nullptr || dst->type != src->type) {
        return CUDNN_STATUS_BAD_PARAM;
      }
      *dst = *src;
    }
  } else {
    std::memcpy(arrayOfElements, v->bytes.data(), element_size(attributeType) * std::size_t(n));
  }
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t executionPlan,
                                  cudnnBackendDescriptor_t variantPack) {
  auto* plan = static_cast<BackendDescriptor*>(executionPlan);
  if (handle == nullptr || plan == nullptr || variantPack == nullptr) {
    return CUDNN_STATUS_BAD_PARAM;
  }
  BackendDescriptor* cfg = child(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG);
  BackendDescriptor* engine = child(cfg, CUDNN_ATTR_ENGINECFG_ENGINE);
  BackendDescriptor* graph = child(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH);
  const auto* ops = attr(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS);
  if (ops == nullptr) return CUDNN_STATUS_BAD_PARAM;
  for (BackendDescriptor* op : ops->descriptors) {
    if (op->type != CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR) continue;
    const auto x =
        ints(child(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X), CUDNN_ATTR_TENSOR_DIMENSIONS);
    const auto y =
        ints(child(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y), CUDNN_ATTR_TENSOR_DIMENSIONS);
    if (x.size() != 4 || y.size() != 4) return CUDNN_STATUS_BAD_PARAM;
    if (cudnnStatus_t s = launch_conv(handle, kBackendFprop, y[0], y[1], y[2], y[3]);
        s != CUDNN_STATUS_SUCCESS) {
      return s;
    }
  }
  return CUDNN_STATUS_SUCCESS;
}

}  // extern "C"
