#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "pm2lat/classifier.h"

namespace pm2lat {
namespace {

std::vector<std::string> fixture_names() {
  std::ifstream in(std::string(PM2LAT_TEST_DATA_DIR) + "/kernel_names.txt");
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) names.push_back(line);
  }
  return names;
}

// The tile a GEMM name states, read with regexes independent of the decoder.
struct StatedTile {
  int m = 0, n = 0, k = 0;
};

std::optional<StatedTile> stated_tile(const std::string& name) {
  std::smatch m;
  static const std::regex xmma(R"(tilesize(\d+)x(\d+)x(\d+))");
  static const std::regex nvjet(R"(nvjet_(?:sm\d+_)?[a-zA-Z0-9]+_(\d+)x(\d+)_(\d+)x(\d+))");
  static const std::regex cutlass(
      R"(cutlass_(?:\d+_)?[a-z0-9_]*?(?:gemm|fprop|dgrad|wgrad)[a-z0-9_]*?_(\d+)x(\d+)_(\d+)x(\d+)_)");
  static const std::regex cutlass_no_k(
      R"(cutlass_(?:\d+_)?[a-z0-9_]*?gemm[a-z0-9_]*?_(\d+)x(\d+)_(?:nn|nt|tn|tt)_)");
  static const std::regex legacy(
      R"(^(?:maxwell|pascal|volta|turing|ampere)_[a-z0-9_]*?[shi]\d*gemm[a-z0-9_]*?_(\d+)x(\d+)_)");
  static const std::regex old_sgemm(R"(^sgemm_(\d+)x(\d+)x(\d+)_)");
  if (std::regex_search(name, m, xmma) || std::regex_search(name, m, old_sgemm))
    return StatedTile{std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3])};
  if (std::regex_search(name, m, nvjet) || std::regex_search(name, m, cutlass))
    return StatedTile{std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3])};
  if (std::regex_search(name, m, cutlass_no_k) || std::regex_search(name, m, legacy))
    return StatedTile{std::stoi(m[1]), std::stoi(m[2]), 0};
  return std::nullopt;
}

TEST(Classifier, EveryNameInTheMeasurementsClassifies) {
  const auto names = fixture_names();
  ASSERT_GT(names.size(), 400u) << "fixture missing: " << PM2LAT_TEST_DATA_DIR;
  int unknown = 0;
  for (const auto& name : names) {
    const KernelClass c = classify_kernel(name);
    if (c.family == KernelFamily::kUnknown) {
      ++unknown;
      ADD_FAILURE() << "unclassified: " << name.substr(0, 200);
    }
  }
  EXPECT_EQ(unknown, 0);
}

TEST(Classifier, EveryGemmNameDecodesToTheTileItStates) {
  int checked = 0;
  for (const auto& name : fixture_names()) {
    const auto stated = stated_tile(name);
    if (!stated || name.find("gcgemm") != std::string::npos) continue;
    const KernelClass c = classify_kernel(name);
    // A convolution's split-K reduction carries its main kernel's name and tile.
    if (c.family == KernelFamily::kSplitKReduce &&
        name.find("execute_split_k_kernel") != std::string::npos)
      continue;
    ASSERT_TRUE(c.family == KernelFamily::kGemm || c.family == KernelFamily::kConv) << name;
    EXPECT_EQ(c.gemm.tile_m, stated->m) << name;
    EXPECT_EQ(c.gemm.tile_n, stated->n) << name;
    if (stated->k != 0) {
      EXPECT_EQ(c.gemm.tile_k, stated->k) << name;
    }
    ++checked;
  }
  EXPECT_GT(checked, 120);
}

TEST(Classifier, LegacyCublasNames) {
  auto c = classify_kernel("ampere_sgemm_64x32_sliced1x4_tn");
  EXPECT_EQ(c.family, KernelFamily::kGemm);
  EXPECT_EQ(c.gemm.scheme, GemmNameScheme::kLegacyCublas);
  EXPECT_EQ(c.gemm.tile_m, 64);
  EXPECT_EQ(c.gemm.tile_n, 32);
  EXPECT_EQ(c.gemm.slices, 4);
  EXPECT_EQ(c.gemm.layout, "tn");
  EXPECT_FALSE(c.gemm.tensor_core);
  EXPECT_EQ(c.gemm.a, DType::kFp32);

  c = classify_kernel("turing_fp16_s1688gemm_fp16_256x128_ldg8_f2f_stages_32x1_tn");
  EXPECT_EQ(c.family, KernelFamily::kGemm);
  EXPECT_TRUE(c.gemm.tensor_core);
  EXPECT_EQ(c.gemm.a, DType::kFp16);
  EXPECT_EQ(c.gemm.accumulate, DType::kFp32);
  EXPECT_EQ(c.gemm.tile_m, 256);
  EXPECT_EQ(c.gemm.tile_n, 128);
  EXPECT_EQ(c.gemm.tile_k, 32);
  EXPECT_EQ(c.gemm.stages, 1);

  c = classify_kernel("ampere_bf16_s16816gemm_bf16_64x64_sliced1x2_ldg8_relu_f2f_stages_64x6_tn");
  EXPECT_EQ(c.gemm.a, DType::kBf16);
  EXPECT_EQ(c.gemm.tile_k, 64);
  EXPECT_EQ(c.gemm.stages, 6);
  EXPECT_EQ(c.gemm.slices, 2);
}

TEST(Classifier, XmmaNames) {
  auto c = classify_kernel(
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
      "execute_segment_k_off_kernel__5x_cublas");
  EXPECT_EQ(c.family, KernelFamily::kGemm);
  EXPECT_EQ(c.gemm.scheme, GemmNameScheme::kXmma);
  EXPECT_EQ(c.gemm.arch, "sm90");
  EXPECT_TRUE(c.gemm.tensor_core);
  EXPECT_EQ(c.gemm.a, DType::kBf16);
  EXPECT_EQ(c.gemm.c, DType::kBf16);
  EXPECT_EQ(c.gemm.accumulate, DType::kFp32);
  EXPECT_EQ(c.gemm.layout, "tn");

  c = classify_kernel(
      "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_"
      "aligna4_alignc4_execute_kernel__5x_cublas");
  EXPECT_FALSE(c.gemm.tensor_core);
  EXPECT_EQ(c.gemm.stages, 3);
  EXPECT_EQ(c.gemm.warps_n, 4);

  c = classify_kernel(
      "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_"
      "execute_segment_k_off_kernel__5x_cublas");
  EXPECT_TRUE(c.gemm.tensor_core);
  EXPECT_EQ(c.gemm.a, DType::kFp32);

  c = classify_kernel(
      "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x256x32_"
      "cgasize2x1x1_warpgroupsize2x1x1_g1_execute_segment_k_off_kernel_cudnn_infer");
  EXPECT_EQ(c.family, KernelFamily::kConv);
  EXPECT_EQ(c.gemm.cluster_m, 2);
}

TEST(Classifier, NvjetNames) {
  auto c = classify_kernel("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT");
  EXPECT_EQ(c.family, KernelFamily::kGemm);
  EXPECT_EQ(c.gemm.scheme, GemmNameScheme::kNvjet);
  EXPECT_EQ(c.gemm.tile_m, 128);
  EXPECT_EQ(c.gemm.tile_n, 256);
  EXPECT_EQ(c.gemm.tile_k, 64);
  EXPECT_EQ(c.gemm.stages, 4);
  EXPECT_EQ(c.gemm.cluster_n, 2);
  EXPECT_EQ(c.gemm.layout, "tn");
  EXPECT_FALSE(c.gemm.split_k);
  c = classify_kernel("nvjet_sm100_tst_64x16_64x16_2x1_v_bz_splitK_TNT");
  EXPECT_TRUE(c.gemm.split_k);
  EXPECT_EQ(c.gemm.arch, "sm100");
}

TEST(Classifier, CutlassNamesInsideTheLauncherTemplate) {
  const auto c = classify_kernel(
      "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_256x128_16x3_nn_align4>"
      "(cutlass_80_tensorop_s1688gemm_256x128_16x3_nn_align4::Params)");
  EXPECT_EQ(c.family, KernelFamily::kGemm);
  EXPECT_EQ(c.config, "cutlass_80_tensorop_s1688gemm_256x128_16x3_nn_align4");
  EXPECT_TRUE(c.gemm.tensor_core);  // TF32
  EXPECT_EQ(c.gemm.stages, 3);
  EXPECT_EQ(c.gemm.align, 4);
  const auto three = classify_kernel(
      "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, "
      "int, int>, cutlass::gemm::collective::CollectiveMma<cutlass::gemm::"
      "MainloopSm90TmaGmmaWarpSpecialized<4, cute::tuple<cute::C<2>, cute::C<1>, cute::C<1>>>, "
      "cute::tuple<cute::C<128>, cute::C<256>, cute::C<64>>, cutlass::bfloat16_t>>>(Params)");
  EXPECT_EQ(three.family, KernelFamily::kGemm);
  EXPECT_TRUE(three.gemm.tensor_core);
  EXPECT_EQ(three.gemm.a, DType::kBf16);
}

TEST(Classifier, SplitKReduceBelongsToTheGemm) {
  EXPECT_EQ(classify_kernel("void splitKreduce_kernel<float, float, float, float, true, false, "
                            "false>(cublasSplitKParams<float>, float const*)")
                .family,
            KernelFamily::kSplitKReduce);
}

TEST(Classifier, AtenFamilies) {
  auto c = classify_kernel(
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3>)");
  EXPECT_EQ(c.family, KernelFamily::kElementwise);
  EXPECT_EQ(c.vector_width, 4);
  EXPECT_EQ(c.dtype, DType::kFp32);
  c = classify_kernel(
      "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 10, "
      "false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)");
  EXPECT_EQ(c.family, KernelFamily::kSoftmax);
  EXPECT_EQ(c.log2_row_elements, 10);
  EXPECT_EQ(c.dtype, DType::kBf16);
  EXPECT_EQ(classify_kernel("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel"
                            "<float, float>(int, float, float const*, float const*, float const*, "
                            "float*, float*, float*)")
                .family,
            KernelFamily::kLayerNorm);
  EXPECT_EQ(classify_kernel("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
                            "at::native::func_wrapper_t<float, at::native::sum_functor<float, "
                            "float, float>::operator()(at::TensorIterator&)::{lambda(float, "
                            "float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float>)")
                .family,
            KernelFamily::kReduction);
}

TEST(Classifier, OtherFamilies) {
  EXPECT_EQ(classify_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, "
                            "ncclWork*)")
                .family,
            KernelFamily::kCollective);
  EXPECT_EQ(classify_kernel("triton_poi_fused_add_cos_sin_0").family,
            KernelFamily::kTritonPointwise);
  EXPECT_EQ(classify_kernel("triton_per_fused_add_embedding_mean_mul_pow_rsqrt_6").family,
            KernelFamily::kTritonReduction);
  EXPECT_EQ(classify_kernel("triton_tem_fused_mm_0").family, KernelFamily::kTritonTemplate);
  EXPECT_EQ(classify_kernel("fmha_cutlassF_f16_aligned_64x64_rf_sm80").family,
            KernelFamily::kAttention);
  EXPECT_EQ(classify_kernel("cudnn_infer_volta_scudnn_128x64_relu_small_nn_v1").family,
            KernelFamily::kConv);
}

TEST(Classifier, MangledAndDemangledSpellingsAgree) {
  // void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(...)
  const char* mangled =
      "_ZN2at6native12_GLOBAL__N_128vectorized_layer_norm_kernelIffEEviT0_PKT_S6_S6_PS4_S7_S7_";
  EXPECT_EQ(classify_kernel(mangled).family, KernelFamily::kLayerNorm);
  EXPECT_EQ(normalize_kernel_name("void foo<1, (anonymous namespace)::X>(int, float)"),
            "foo<1, (anonymous namespace)::X>");
}

TEST(Classifier, HostileInputNeverThrows) {
  const std::vector<std::string> odd = {"",
                                        "(",
                                        ")",
                                        "<<<<",
                                        ">>>>",
                                        "void ",
                                        "_Z",
                                        "_ZZZZ",
                                        "nvjet_",
                                        "sm90_xmma_",
                                        "cutlass_",
                                        "ampere_sgemm_x_tn",
                                        std::string(5000, '<'),
                                        "a_b_c_d_e_f_g_h",
                                        "nvjet_tst_99999999999x1_1x1_TNT"};
  for (const auto& s : odd) {
    EXPECT_NO_THROW({ (void)classify_kernel(s); }) << s.substr(0, 40);
  }
}

}  // namespace
}  // namespace pm2lat
