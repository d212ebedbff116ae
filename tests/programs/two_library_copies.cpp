// Loads two extension modules RTLD_LOCAL, the way Python imports them, one depending on the
// CUDA 12 copy of cuBLAS and one on the CUDA 13 copy, and calls cuBLAS from each. Prints how
// many GEMMs each copy ran and whether each module's dlsym(RTLD_DEFAULT) finds its cuBLAS.
// Usage: two_library_copies <gemms per module>
#include <dlfcn.h>

#include <cstdio>
#include <string>

#include "program_support.h"

namespace {

struct Extension {
  int (*sgemm)(int, int, int);
  int (*gemms)();
  int (*finds_its_cublas)();
};

Extension load(const std::string& path) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    std::fprintf(stderr, "dlopen %s: %s\n", path.c_str(), dlerror());
    std::exit(80);
  }
  Extension e{};
  e.sgemm = reinterpret_cast<int (*)(int, int, int)>(dlsym(h, "extension_sgemm"));
  e.gemms = reinterpret_cast<int (*)()>(dlsym(h, "extension_cublas_gemms"));
  e.finds_its_cublas = reinterpret_cast<int (*)()>(dlsym(h, "extension_finds_its_cublas"));
  if (!e.sgemm || !e.gemms || !e.finds_its_cublas) std::exit(81);
  return e;
}

}  // namespace

int main(int argc, char** argv) {
  const int gemms = test_program::arg_int(argc, argv, 1, 2);
  test_program::init_primary_context();
  const std::string dir = [&] {
    std::string self = argv[0];
    return self.substr(0, self.rfind('/') + 1);
  }();
  const Extension cu12 = load(dir + "libcublas12_extension.so");
  const Extension cu13 = load(dir + "libcublas13_extension.so");
  for (int i = 0; i < gemms; ++i) {
    if (cu12.sgemm(512, 256, 128) != 0 || cu13.sgemm(256, 256, 64) != 0) return 82;
  }
  std::printf("cublas12 gemms %d cublas13 gemms %d\n", cu12.gemms(), cu13.gemms());
  std::printf("rtld_default cublas12 %d cublas13 %d\n", cu12.finds_its_cublas(),
              cu13.finds_its_cublas());
  return 0;
}
