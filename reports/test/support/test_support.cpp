#include "support/test_support.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "pm2lat/device_catalogue.h"
#include "pm2lat/test/scratch_cleaner.h"

namespace pm2lat::test {

std::filesystem::path scratch_dir(const std::string& name) {
  static std::atomic<int> counter{0};
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("pm2lat-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + "-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  remove_when_test_passes(dir);
  return dir;
}

void write_text(const std::filesystem::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

void write_gzip(const std::filesystem::path& file, const std::string& text) {
  gzFile f = gzopen(file.c_str(), "wb6");
  if (f == nullptr) throw std::runtime_error("cannot write " + file.string());
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
}

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::vector<std::string>& env) {
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) throw std::runtime_error("pipe failed");
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  for (const auto& kv : env) {
    const std::string key = kv.substr(0, kv.find('=') + 1);
    std::erase_if(env_strings, [&](const std::string& s) { return s.rfind(key, 0) == 0; });
    env_strings.push_back(kv);
  }
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    close(out_pipe[0]);
    close(err_pipe[0]);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  ProcessResult r;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP)) == 0) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<std::size_t>(n));
      }
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  r.signaled = WIFSIGNALED(status);
  r.code = r.signaled ? WTERMSIG(status) : WEXITSTATUS(status);
  return r;
}

namespace {

std::vector<DeviceSpec> specs() {
  DeviceSpec h100;
  h100.name = "H100-SXM";
  h100.aliases = {"H100", "NVIDIA H100 80GB HBM3"};
  h100.arch = "Hopper";
  h100.cc_major = 9;
  h100.sm_count = 132;
  h100.boost_clock_mhz = 1980;
  h100.mem_bw_gbps = 3350;
  h100.fp32_tflops = 66.9;
  h100.tf32_tflops = 494.7;
  h100.bf16_tflops = h100.fp16_tflops = 989.4;
  h100.nvlink_gbps = 450;
  DeviceSpec a100;
  a100.name = "A100-SXM";
  a100.aliases = {"A100", "NVIDIA A100-SXM4-80GB"};
  a100.arch = "Ampere";
  a100.cc_major = 8;
  a100.sm_count = 108;
  a100.boost_clock_mhz = 1410;
  a100.mem_bw_gbps = 2039;
  a100.fp32_tflops = 19.5;
  a100.tf32_tflops = 156;
  a100.bf16_tflops = a100.fp16_tflops = 312;
  a100.nvlink_gbps = 300;
  DeviceSpec l4;
  l4.name = "L4";
  l4.aliases = {"NVIDIA L4"};
  l4.arch = "Ada";
  l4.cc_major = 8;
  l4.cc_minor = 9;
  l4.sm_count = 58;
  l4.boost_clock_mhz = 2040;
  l4.mem_bw_gbps = 300;
  l4.fp32_tflops = 30.3;
  l4.tf32_tflops = 60;
  l4.bf16_tflops = l4.fp16_tflops = 121;
  l4.pcie_gbps = 32;
  return {h100, a100, l4};
}

}  // namespace

Predictor catalogue_predictor() { return Predictor(DeviceCatalogue(specs()), {}); }

void write_catalogue(const std::filesystem::path& dir) {
  std::ostringstream s;
  s << R"({"schema":"pm2lat.devices","version":1,"devices":[)";
  bool first = true;
  for (const auto& d : specs()) {
    if (!first) s << ",";
    first = false;
    s << R"({"name":")" << d.name << R"(","aliases":[)";
    for (std::size_t i = 0; i < d.aliases.size(); ++i)
      s << (i ? "," : "") << '"' << d.aliases[i] << '"';
    s << R"(],"arch":")" << d.arch << R"(","compute_capability":")" << d.cc_major << "."
      << d.cc_minor << R"(","sm_count":)" << d.sm_count << R"(,"boost_clock_mhz":)"
      << d.boost_clock_mhz << R"(,"mem_bw_gbps":)" << d.mem_bw_gbps
      << R"(,"mem_gb":80,"l2_mb":40,"smem_per_sm_kb":228,"fp32_tflops":)" << d.fp32_tflops
      << R"(,"fp64_tflops":1,"tf32_tflops":)" << d.tf32_tflops << R"(,"fp16_tflops":)"
      << d.fp16_tflops << R"(,"bf16_tflops":)" << d.bf16_tflops
      << R"(,"fp8_tflops":0,"fp4_tflops":0,"int8_tops":0,"nvlink_gbps":)" << d.nvlink_gbps
      << R"(,"pcie_gbps":)" << d.pcie_gbps << "}";
  }
  s << "]}\n";
  write_text(dir / "devices.json", s.str());
}

TraceJson::TraceJson(std::string device) : device_(std::move(device)) {}

TraceJson& TraceJson::op(const std::string& name, double ts, double dur, const std::string& dims,
                         const std::string& types, const std::string& concrete,
                         const std::string& strides, const std::string& cat) {
  std::ostringstream e;
  e << R"({"ph":"X","cat":")" << cat << R"(","name":")" << name << R"(","pid":1,"tid":1,"ts":)"
    << ts << R"(,"dur":)" << dur << R"(,"args":{"External id":1)";
  if (!dims.empty()) e << R"(,"Input Dims":)" << dims;
  if (!types.empty()) e << R"(,"Input type":)" << types;
  if (!concrete.empty()) e << R"(,"Concrete Inputs":)" << concrete;
  if (!strides.empty()) e << R"(,"Input Strides":)" << strides;
  e << "}}";
  events_.push_back(e.str());
  return *this;
}

TraceJson& TraceJson::kernel(const std::string& name, double launch_ts, double kernel_ts,
                             double dur, std::array<unsigned, 3> grid,
                             std::array<unsigned, 3> block, int stream,
                             const std::string& launch_api, const std::string& extra_args) {
  const long long corr = next_correlation_++;
  std::ostringstream l;
  l << R"({"ph":"X","cat":"cuda_runtime","name":")" << launch_api << R"(","pid":1,"tid":1,"ts":)"
    << launch_ts << R"(,"dur":2,"args":{"correlation":)" << corr << "}}";
  events_.push_back(l.str());
  std::ostringstream k;
  k << R"({"ph":"X","cat":"kernel","name":")" << name << R"(","pid":0,"tid":)" << stream
    << R"(,"ts":)" << kernel_ts << R"(,"dur":)" << dur << R"(,"args":{"device":0,"stream":)"
    << stream << R"(,"correlation":)" << corr
    << R"(,"registers per thread":32,"shared memory":0,"grid":[)" << grid[0] << "," << grid[1]
    << "," << grid[2] << R"(],"block":[)" << block[0] << "," << block[1] << "," << block[2] << "]"
    << extra_args << "}}";
  events_.push_back(k.str());
  return *this;
}

std::string TraceJson::str() const {
  std::ostringstream s;
  s << R"({"schemaVersion":1,"deviceProperties":[{"id":0,"name":")" << device_
    << R"(","numSms":132,"computeMajor":9,"computeMinor":0}],"traceEvents":[)";
  for (std::size_t i = 0; i < events_.size(); ++i) s << (i ? ",\n" : "\n") << events_[i];
  s << "\n]}\n";
  return s.str();
}

namespace {

constexpr const char* kBf16Addmm =
    R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar","Scalar"])";
constexpr const char* kXmma128x128 =
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
    "segment_k_off_kernel__5x_cublas";
constexpr const char* kLayerNorm =
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, "
    "float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, "
    "float*, float*, c10::BFloat16*)";
constexpr const char* kAdd =
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
    "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, "
    "3ul>)";

}  // namespace

std::string transformer_layer_trace() {
  // 4096 tokens x 768 features; 12 heads of 64; feed-forward 3072. A linear layer over
  // [4096, 768] runs as addmm(bias, x, W^T); its GEMM kernel has one 128x128 tile per CTA.
  const std::string ln_dims = "[[8,512,768],[],[768],[768],[]]";
  const std::string ln_types =
      R"(["c10::BFloat16","ScalarList","c10::BFloat16","c10::BFloat16","Scalar"])";
  TraceJson t;
  double ts = 0;
  auto linear = [&](int in, int out, double dur) {
    t.op("aten::addmm", ts, 40,
         "[[" + std::to_string(out) + "],[4096," + std::to_string(in) + "],[" + std::to_string(in) +
             "," + std::to_string(out) + "],[],[]]",
         kBf16Addmm, R"(["","","","1","1"])",
         "[[1],[" + std::to_string(in) + ",1],[1," + std::to_string(in) + "],[],[]]");
    t.kernel(kXmma128x128, ts + 10, ts + 20, dur, {32, unsigned(out / 128), 1}, {384, 1, 1}, 7,
             "cuLaunchKernelEx");
    ts += 200;
  };
  linear(768, 768, 40);  // query
  linear(768, 768, 40);  // key
  linear(768, 768, 40);  // value
  t.op(
      "aten::_flash_attention_forward", ts, 40,
      "[[8,512,12,64],[8,512,12,64],[8,512,12,64],[],[],[],[],[],[],[],[]]",
      R"(["c10::BFloat16","c10::BFloat16","c10::BFloat16","","","Scalar","Scalar","Scalar","Scalar","Scalar","Scalar"])",
      R"(["","","","","","512","512","0.","False","False","0.125"])");
  t.kernel(
      "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, "
      "4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, "
      "cutlass::bfloat16_t> >, false, false, false, false, true, true, "
      "false>(pytorch_flash::Flash_fwd_params)",
      ts + 10, ts + 20, 90, {4, 8, 12}, {128, 1, 1});
  ts += 200;
  linear(768, 768, 40);  // attention output
  t.op("aten::add", ts, 20, "[[8,512,768],[8,512,768],[]]",
       R"(["c10::BFloat16","c10::BFloat16","Scalar"])");
  t.kernel(kAdd, ts + 5, ts + 20, 12, {6144, 1, 1}, {128, 1, 1});
  ts += 200;
  t.op("aten::native_layer_norm", ts, 20, ln_dims, ln_types, R"(["","[768]","","",""])");
  t.kernel(kLayerNorm, ts + 5, ts + 20, 14, {4096, 1, 1}, {32, 4, 1});
  ts += 200;
  linear(768, 3072, 120);  // feed-forward up
  t.op("aten::gelu", ts, 20, "[[8,512,3072],[]]", R"(["c10::BFloat16",""])", R"(["","none"])");
  t.kernel(
      "void at::native::vectorized_elementwise_kernel<4, "
      "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
      "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() "
      "const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, "
      "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
      "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() "
      "const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)",
      ts + 5, ts + 20, 30, {24576, 1, 1}, {128, 1, 1});
  return t.str();
}

std::filesystem::path write_toy_model_runs(const std::string& name) {
  std::filesystem::path dir = scratch_dir(name);
  std::filesystem::create_directories(dir / "V100-PCIE-32GB");
  write_text(dir / "index.csv",
             "device,model,mode,seqlen,batch,option,num_layer,measured_e2e_ms,measured_fw_ms,"
             "measured_bw_ms,ops_file,neusight_pred_ms,neusight_err_pct\n"
             "V100-PCIE-32GB,toy,train,512,8,,2,20.0,7.0,13.0,V100-PCIE-32GB/"
             "toy-train-512-8.csv,,\n"
             "T4,toy,train,512,8,,2,60.0,20.0,40.0,,,\n"
             "T4,toy,train,512,16,,2,120.0,40.0,80.0,,,\n");
  write_text(dir / "V100-PCIE-32GB" / "toy-train-512-8.csv",
             "op_index,name,op_kind,op_class,repeat,input_shapes,output_shape,dtype,B,M,N,K,H,fw_"
             "latency_us,bw_latency_us,acc_latency_us\n"
             "0,x,input,io,1,,8x512x1024,fp32,,,,,,0,0,0\n"
             "1,fc,linear,gemm,2,8x512x1024,8x512x4096,fp32,1,4096,1024,4096,,900,1800,70\n"
             "2,act,gelu,elementwise,2,8x512x4096,8x512x4096,fp32,4096,,,,4096,200,300,0\n"
             "3,v,view,view,2,8x512x4096;1,8x512x64x64,fp32,,,,,,15,0,0\n"
             "4,output,output,io,1,8x512x4096,8x512x4096,fp32,,,,,,0,0,0\n");
  return dir;
}

}  // namespace pm2lat::test
