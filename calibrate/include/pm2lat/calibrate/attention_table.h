// The AIConfigurator attention table format: one framework attention call per row
// (`system, kernel_source, op_name, batch_size, isl, step, num_heads, num_key_value_heads,
// head_dim, window_size, attn_dtype, kv_cache_dtype, latency_us`), timed inside a CUDA graph
// (device time, no host dispatch). `kernel_source` names the backend, not the kernel: each
// row becomes a kernel record whose name is a representative kernel of that backend's
// implementation, with the attention shape as its context.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "pm2lat/calibrate/csv_table.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/models/attention_kernel.h"

namespace pm2lat::calibrate {

struct AttentionMeasurement {
  std::string system;   // as the table names it ("H100-SXM", ...)
  std::string backend;  // kernel_source ("vllm_flash_attn_fa3", ...)
  std::string op;       // context_attention, generation_attention, encoder_attention
  AttentionVariant variant = AttentionVariant::kUnknown;
  KernelRecord record;    // launch name, attention shape, measured_us (kernel basis)
  std::string shape_key;  // the same for the same shape on every system and backend
  // The timed call wrote the new tokens' K and V into the KV cache before attending.
  bool writes_kv_cache = false;
};

// Whether an attention backend's forward, as the framework version ran it, wrote the KV cache:
// vLLM's did until 0.16, which moved the write out of forward (do_kv_cache_update, run
// before it by the attention layer; vLLM pull request 32335). AIConfigurator's collector
// times forward alone.
bool attention_call_writes_kv_cache(const std::string& framework, const std::string& version);

// The implementation a backend label runs ("vllm_flash_attn_fa3" -> flash3, "..._fiprefill"
// -> flashinfer_prefill, ...); kUnknown for labels this reader does not know.
AttentionVariant attention_backend_variant(const std::string& backend);

// The shape key of a row: op, batch, isl, step, heads, KV heads, head dim, window.
std::string attention_shape_key(const CsvTable& table, std::size_t row);

struct AttentionReadStats {
  std::size_t rows = 0, skipped_bad_shape = 0, skipped_unknown_backend = 0;
};

// Throws TableError when a required column is missing.
std::vector<AttentionMeasurement> read_attention_table(const CsvTable& table,
                                                       AttentionReadStats* stats = nullptr);

}  // namespace pm2lat::calibrate
