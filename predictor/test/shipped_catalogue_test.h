// A fixture for tests that price records on real GPUs: the shipped device catalogue, loaded
// once per test, and a kernel class of a given family.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "pm2lat/device_catalogue.h"
#include "pm2lat/kernel_class.h"

namespace pm2lat {

class ShippedCatalogueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    catalogue_ = DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
  }
  const DeviceSpec& gpu(const char* name) const { return catalogue_.resolve(name); }

  // A class that says only the kernel's family (what the bounds depend on).
  static KernelClass family(KernelFamily f) {
    KernelClass c;
    c.family = f;
    return c;
  }

 private:
  DeviceCatalogue catalogue_;
};

}  // namespace pm2lat
