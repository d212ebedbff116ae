// Stands in for libpm2lat.so in the launcher tests: only proves it was preloaded.
extern "C" {
__attribute__((visibility("default"))) int pm2lat_fake_runtime_loaded = 1;
}
