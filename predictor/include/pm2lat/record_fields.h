// The field names of the records schema ("pm2lat.record"), in one catalogue: the writer
// (record_jsonl.cpp), the runtime's own additions and the tests spell every key through these
// constants. shim/README.md documents what each field means.
#pragma once

namespace pm2lat::record_field {

// Header line.
inline constexpr const char* kSchema = "schema";
inline constexpr const char* kVersion = "version";
inline constexpr const char* kTargets = "targets";
inline constexpr const char* kPid = "pid";
inline constexpr const char* kHost = "host";
inline constexpr const char* kCommand = "command";

// Kernel records (kGpu and kRank also in the header).
inline constexpr const char* kSeq = "seq";
inline constexpr const char* kTsNs = "ts_ns";
inline constexpr const char* kRank = "rank";
inline constexpr const char* kDevice = "device";
inline constexpr const char* kGpu = "gpu";
inline constexpr const char* kStream = "stream";
inline constexpr const char* kName = "name";
inline constexpr const char* kFamily = "family";
inline constexpr const char* kConfig = "config";
inline constexpr const char* kGrid = "grid";
inline constexpr const char* kBlock = "block";
inline constexpr const char* kCluster = "cluster";
inline constexpr const char* kSmem = "smem";
inline constexpr const char* kRegs = "regs";
inline constexpr const char* kGraph = "graph";
inline constexpr const char* kGraphId = "id";
inline constexpr const char* kGraphNode = "node";
inline constexpr const char* kOp = "op";
inline constexpr const char* kMeasuredUs = "measured_us";
inline constexpr const char* kBasis = "basis";
inline constexpr const char* kPredictedUs = "predicted_us";
inline constexpr const char* kModel = "model";
inline constexpr const char* kFlags = "flags";
// Per target: the prediction's expected error in percent (Prediction::band_pct); absent
// when the predictor had no error-band table.
inline constexpr const char* kBandPct = "band_pct";

// The "op" object: the library call or framework op a kernel belongs to.
namespace op {
inline constexpr const char* kKind = "kind";
inline constexpr const char* kSource = "source";
inline constexpr const char* kName = "name";
inline constexpr const char* kDtype = "dtype";
// GEMM.
inline constexpr const char* kBatch = "b";
inline constexpr const char* kM = "m";
inline constexpr const char* kN = "n";
inline constexpr const char* kK = "k";
inline constexpr const char* kTransA = "trans_a";
inline constexpr const char* kTransB = "trans_b";
inline constexpr const char* kCompute = "compute";
// How low-precision operands are scaled (GemmScaling: per_tensor, block128, ...); absent
// for unscaled operands.
inline constexpr const char* kScaling = "scaling";
inline constexpr const char* kAlgoTile = "algo_tile";
inline constexpr const char* kAlgoStages = "algo_stages";
inline constexpr const char* kAlgoSplitK = "algo_split_k";
// Convolution (kK is the output channels, as cuDNN names them).
inline constexpr const char* kConvN = "n";
inline constexpr const char* kConvC = "c";
inline constexpr const char* kConvH = "h";
inline constexpr const char* kConvW = "w";
inline constexpr const char* kConvR = "r";
inline constexpr const char* kConvS = "s";
inline constexpr const char* kStride = "stride";
inline constexpr const char* kPad = "pad";
inline constexpr const char* kDilation = "dilation";
inline constexpr const char* kGroups = "groups";
// Attention.
inline constexpr const char* kSeqQ = "sq";
inline constexpr const char* kSeqKv = "skv";
inline constexpr const char* kHeads = "h";
inline constexpr const char* kKvHeads = "hkv";
inline constexpr const char* kHeadDim = "d";
inline constexpr const char* kCausal = "causal";
inline constexpr const char* kBackward = "backward";
inline constexpr const char* kWindow = "window";
inline constexpr const char* kKvDtype = "kv_dtype";
// Collectives.
inline constexpr const char* kBytes = "bytes";
inline constexpr const char* kRanks = "ranks";
// Memory-bound kernels.
inline constexpr const char* kRows = "rows";
inline constexpr const char* kCols = "cols";
inline constexpr const char* kBytesRead = "bytes_read";
inline constexpr const char* kBytesWritten = "bytes_written";
}  // namespace op

// The "runtime" object libpm2lat.so adds to the header and to each record; other readers
// ignore it.
namespace runtime {
inline constexpr const char* kObject = "runtime";
// Header.
inline constexpr const char* kMode = "mode";
inline constexpr const char* kVersion = "version";
// Records.
inline constexpr const char* kApi = "api";
inline constexpr const char* kVia = "via";
inline constexpr const char* kCorrelation = "corr";
inline constexpr const char* kCall = "call";
inline constexpr const char* kArgs = "args";
inline constexpr const char* kNotes = "notes";
}  // namespace runtime

}  // namespace pm2lat::record_field
