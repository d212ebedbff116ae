// Resolve-then-wrap against the fake driver: pointers are identified by the driver's exported
// variant they are, wrapped with the matching wrapper, and anything else passes through.
#include "interpose/entry_points.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include "cupti/cupti_api.h"
#include "cupti/cupti_launch_callbacks.h"
#include "pm2lat/shim/cuda_exported_variants.h"

namespace pm2lat::shim {
namespace {

void* driver() {
  static void* h = dlopen(PM2LAT_FAKE_CUDA_DIR "/libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  return h;
}

TEST(EntryPoints, PointersAreIdentifiedByTheExportedVariantTheyAre) {
  ASSERT_NE(driver(), nullptr) << dlerror();
  auto gpa = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(driver(), "cuGetProcAddress_v2"));
  ASSERT_NE(gpa, nullptr);
  void* legacy = nullptr;
  void* ptds = nullptr;
  CUdriverProcAddressQueryResult status{};
  ASSERT_EQ(gpa("cuLaunchKernel", &legacy, 12000, 0, &status), CUDA_SUCCESS);
  ASSERT_EQ(
      gpa("cuLaunchKernel", &ptds, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &status),
      CUDA_SUCCESS);
  ASSERT_NE(legacy, ptds);
  EntryPoint e;
  ASSERT_TRUE(identify_entry_point(legacy, &e));
  EXPECT_EQ(e, EntryPoint::kLaunchKernel);
  ASSERT_TRUE(identify_entry_point(ptds, &e));
  EXPECT_EQ(e, EntryPoint::kLaunchKernelPtsz);
  void* resolver = nullptr;
  ASSERT_EQ(gpa("cuGetProcAddress", &resolver, 11030, 0, &status), CUDA_SUCCESS);
  ASSERT_TRUE(identify_entry_point(resolver, &e));
  EXPECT_EQ(e, EntryPoint::kGetProcAddress);  // the four-argument CUDA 11.3 resolver
}

TEST(EntryPoints, WrappingReturnsTheMatchingWrapperBoundToTheRealFunction) {
  void* real = dlsym(driver(), "cuLaunchKernelEx_ptsz");
  ASSERT_NE(real, nullptr);
  void* wrapped = wrap_entry_point(real, "cuLaunchKernelEx", 12000);
  EXPECT_EQ(wrapped, wrapper_of(EntryPoint::kLaunchKernelExPtsz));
  EXPECT_EQ(real_of(EntryPoint::kLaunchKernelExPtsz), real);
  // Something we do not hook passes through unchanged, and so does a wrapper.
  void* other = dlsym(driver(), "cuMemAlloc_v2");
  EXPECT_EQ(wrap_entry_point(other, "cuMemAlloc", 3020), other);
  EXPECT_EQ(wrap_entry_point(wrapped, "cuLaunchKernelEx", 12000), wrapped);
  EXPECT_STREQ(exported_name(EntryPoint::kStreamEndCapturePtsz), "cuStreamEndCapture_ptsz");
}

TEST(CuptiApi, LoadsAnExplicitLibraryAndReportsAMissingOneClearly) {
  CuptiApi missing;
  std::string reason;
  EXPECT_FALSE(missing.load("/nonexistent/libcupti.so", &reason));
  EXPECT_NE(reason.find("nonexistent"), std::string::npos) << reason;

  ASSERT_NE(driver(), nullptr);  // CUPTI attaches to the loaded driver
  CuptiApi fake;
  ASSERT_TRUE(fake.load(PM2LAT_FAKE_CUDA_DIR "/libcupti.so.13", &reason)) << reason;
  EXPECT_EQ(fake.version, std::uint32_t(CUPTI_API_VERSION));
  // The subscriber slot: a second subscriber is told who holds it.
  CUpti_SubscriberHandle first = nullptr;
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "first-tool";
  ASSERT_EQ(fake.subscribe_v2(&first, &CuptiCallbacks::on_callback, nullptr, &params),
            CUPTI_SUCCESS);
  std::string holder;
  EXPECT_EQ(CuptiCallbacks::instance().subscribe(&fake, &holder, &reason),
            SubscribeResult::kSlotTaken);
  EXPECT_EQ(holder, "first-tool");
  fake.unsubscribe(first);
}

}  // namespace
}  // namespace pm2lat::shim
