// Fused-attention shapes from the operators that launch FlashAttention, memory-efficient and
// cuDNN attention kernels (PyTorch SDPA back-ends and the flash-attn package).
#include <algorithm>
#include <string>

#include "op_inputs.h"
#include "op_shape_rules.h"
#include "pm2lat/text.h"

namespace pm2lat::reports::trace_rules {
namespace {

enum class Layout { kBSHD, kBHSD, kTHD };  // batch/seq/heads/dim order of q, k, v

enum class CausalArg { kBool, kMaskType };  // is_causal flag, or custom_mask_type (0 = none)

struct AttentionSignature {
  std::string_view name;
  Layout layout;
  int query;   // q; k follows at query + 1
  int causal;  // -1: not an argument
  CausalArg causal_kind;
  bool backward;
  int max_seqlen_q = -1;  // varlen ops: max_seqlen_q, then max_seqlen_k
  int cu_seqlens_q = -1;
};

constexpr AttentionSignature kAttentionSignatures[] = {
    // _flash_attention_forward(query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p,
    // is_causal, ...)
    {"aten::_flash_attention_forward", Layout::kBSHD, 0, 8, CausalArg::kBool, false},
    // _flash_attention_backward(grad_out, query, key, value, out, logsumexp, cum_seq_q, cum_seq_k,
    //                           max_q, max_k, dropout_p, is_causal, ...)
    {"aten::_flash_attention_backward", Layout::kBSHD, 1, 11, CausalArg::kBool, true},
    // _scaled_dot_product_flash_attention(query, key, value, dropout_p, is_causal, ...)
    {"aten::_scaled_dot_product_flash_attention", Layout::kBHSD, 0, 4, CausalArg::kBool, false},
    {"aten::_scaled_dot_product_flash_attention_for_cpu", Layout::kBHSD, 0, 4, CausalArg::kBool,
     false},
    // _scaled_dot_product_flash_attention_backward(grad_out, query, key, value, out, logsumexp,
    //     cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, ...)
    {"aten::_scaled_dot_product_flash_attention_backward", Layout::kBHSD, 1, 11, CausalArg::kBool,
     true},
    // _efficient_attention_forward(query, key, value, bias, cu_seqlens_q, cu_seqlens_k,
    //     max_seqlen_q, max_seqlen_k, dropout_p, custom_mask_type, ...)
    {"aten::_efficient_attention_forward", Layout::kBSHD, 0, 9, CausalArg::kMaskType, false},
    // _efficient_attention_backward(grad_out_, query, key, value, bias, out, cu_seqlens_q,
    //     cu_seqlens_k, max_seqlen_q, max_seqlen_k, logsumexp, dropout_p, philox_seed,
    //     philox_offset, custom_mask_type, ...)
    {"aten::_efficient_attention_backward", Layout::kBSHD, 1, 14, CausalArg::kMaskType, true},
    // _scaled_dot_product_efficient_attention(query, key, value, attn_bias, compute_log_sumexp,
    // dropout_p, is_causal, scale)
    {"aten::_scaled_dot_product_efficient_attention", Layout::kBHSD, 0, 6, CausalArg::kBool, false},
    // _scaled_dot_product_efficient_attention_backward(grad_out_, query, key, value, attn_bias,
    // out,
    //     logsumexp, philox_seed, philox_offset, dropout_p, grad_input_mask, is_causal, scale)
    {"aten::_scaled_dot_product_efficient_attention_backward", Layout::kBHSD, 1, 11,
     CausalArg::kBool, true},
    // _scaled_dot_product_cudnn_attention(query, key, value, attn_bias, compute_log_sumexp,
    // dropout_p, is_causal, ...)
    {"aten::_scaled_dot_product_cudnn_attention", Layout::kBHSD, 0, 6, CausalArg::kBool, false},
    // _scaled_dot_product_cudnn_attention_backward(grad_out, query, key, value, out, logsumexp,
    //     philox_seed, philox_offset, attn_bias, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p,
    //     is_causal, scale)
    {"aten::_scaled_dot_product_cudnn_attention_backward", Layout::kBHSD, 1, 14, CausalArg::kBool,
     true},
    // _cudnn_attention_forward(query, key, value, attn_bias, cum_seq_q, cum_seq_k, max_q, max_k,
    //     compute_log_sumexp, dropout_p, is_causal, ...)
    {"aten::_cudnn_attention_forward", Layout::kBHSD, 0, 10, CausalArg::kBool, false},
    // scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale,
    // enable_gqa)
    {"aten::scaled_dot_product_attention", Layout::kBHSD, 0, 5, CausalArg::kBool, false},
    // flash-attn package: _flash_attn_forward(q, k, v, dropout_p, softmax_scale, causal, ...)
    {"flash_attn::_flash_attn_forward", Layout::kBSHD, 0, 5, CausalArg::kBool, false},
    // _flash_attn_backward(dout, q, k, v, out, softmax_lse, dq, dk, dv, dropout_p, softmax_scale,
    // causal, ...)
    {"flash_attn::_flash_attn_backward", Layout::kBSHD, 1, 11, CausalArg::kBool, true},
    // _flash_attn_varlen_forward(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
    //     dropout_p, softmax_scale, causal, ...)
    {"flash_attn::_flash_attn_varlen_forward", Layout::kTHD, 0, 9, CausalArg::kBool, false, 5, 3},
    // _flash_attn_varlen_backward(dout, q, k, v, out, softmax_lse, dq, dk, dv, cu_seqlens_q,
    //     cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p, softmax_scale, causal, ...)
    {"flash_attn::_flash_attn_varlen_backward", Layout::kTHD, 1, 15, CausalArg::kBool, true, 11, 9},
};

const AttentionSignature* attention_signature(std::string_view name) {
  for (const auto& s : kAttentionSignatures) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

bool mentions_attention(std::string_view name) {
  const std::string l = ascii_lower(name);
  return l.find("attention") != std::string::npos || l.find("attn") != std::string::npos;
}

}  // namespace

bool is_attention_op(std::string_view op_name) {
  return attention_signature(op_name) != nullptr || mentions_attention(op_name);
}

std::optional<AttentionShape> attention_shape(const TraceOp& op, std::string_view op_name) {
  AttentionSignature sig{op_name, Layout::kBSHD, 0, -1, CausalArg::kBool, false};
  if (const AttentionSignature* known = attention_signature(op_name)) {
    sig = *known;
  } else {
    // An attention op this table does not know: q and k are its first two tensors of rank 3
    // or 4; SDPA-style names use [batch, heads, seq, dim].
    const auto ts = trace_inputs::tensors(op);
    auto first = std::find_if(ts.begin(), ts.end(),
                              [](const auto& t) { return t.rank() == 4 || t.rank() == 3; });
    if (first == ts.end()) return std::nullopt;
    sig.query = static_cast<int>(first->input);
    sig.layout = first->rank() == 3                                             ? Layout::kTHD
                 : op_name.find("scaled_dot_product") != std::string_view::npos ? Layout::kBHSD
                                                                                : Layout::kBSHD;
    sig.backward = op_name.find("backward") != std::string_view::npos;
  }
  const auto q = trace_inputs::tensor_at(op, static_cast<std::size_t>(sig.query));
  const auto k = trace_inputs::tensor_at(op, static_cast<std::size_t>(sig.query) + 1);
  if (!q) return std::nullopt;
  AttentionShape a;
  a.dtype = q->dtype;
  a.backward = sig.backward;
  switch (sig.layout) {
    case Layout::kBSHD:
    case Layout::kBHSD: {
      if (q->rank() != 4) return std::nullopt;
      const bool bshd = sig.layout == Layout::kBSHD;
      a.batch = q->dim(0);
      a.seqlen_q = bshd ? q->dim(1) : q->dim(2);
      a.heads = bshd ? q->dim(2) : q->dim(1);
      a.head_dim = q->dim(3);
      a.seqlen_kv = a.seqlen_q;
      a.kv_heads = a.heads;
      if (k && k->rank() == 4) {
        a.seqlen_kv = bshd ? k->dim(1) : k->dim(2);
        a.kv_heads = bshd ? k->dim(2) : k->dim(1);
      }
      break;
    }
    case Layout::kTHD: {
      // Variable-length batches: [total tokens, heads, dim]; the batch is len(cu_seqlens) - 1
      // and each sequence is at most max_seqlen long. Total tokens / batch is the mean length.
      if (q->rank() != 3) return std::nullopt;
      a.heads = q->dim(1);
      a.head_dim = q->dim(2);
      a.kv_heads = k && k->rank() == 3 ? k->dim(1) : a.heads;
      std::int64_t batch = 1;
      if (sig.cu_seqlens_q >= 0) {
        if (auto cu = trace_inputs::tensor_at(op, static_cast<std::size_t>(sig.cu_seqlens_q));
            cu && cu->rank() == 1)
          batch = std::max<std::int64_t>(1, cu->dim(0) - 1);
      }
      a.batch = batch;
      a.seqlen_q = std::max<std::int64_t>(1, q->dim(0) / batch);
      a.seqlen_kv = k && k->rank() == 3 ? std::max<std::int64_t>(1, k->dim(0) / batch) : a.seqlen_q;
      break;
    }
  }
  if (sig.causal >= 0) {
    const auto c = static_cast<std::size_t>(sig.causal);
    if (sig.causal_kind == CausalArg::kBool) {
      a.causal = trace_inputs::concrete_bool(op, c).value_or(false);
    } else {
      a.causal = trace_inputs::concrete_int(op, c).value_or(0) != 0;
    }
  }
  if (!a.valid()) return std::nullopt;
  return a;
}

}  // namespace pm2lat::reports::trace_rules
