#include "pm2lat/calibrate/neusight_models.h"

#include "pm2lat/calibrate/csv_table.h"

namespace pm2lat::calibrate {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t e = s.find(sep, start);
    out.push_back(s.substr(start, e == std::string::npos ? std::string::npos : e - start));
    if (e == std::string::npos) break;
    start = e + 1;
  }
  return out;
}

}  // namespace

std::optional<TensorDims> parse_dims_text(const std::string& text) {
  if (text.empty() || text == "1") return std::nullopt;
  TensorDims dims;
  for (const auto& part : split(text, 'x')) {
    const auto v = to_int(part);
    if (!v || *v < 0) return std::nullopt;
    dims.push_back(*v);
  }
  return dims;
}

std::vector<ModelRun> load_model_runs(const std::filesystem::path& dir, ModelRunsReadStats* stats) {
  ModelRunsReadStats local;
  ModelRunsReadStats& st = stats ? *stats : local;
  const CsvTable index = CsvTable::read(dir / "index.csv");
  const std::size_t c_dev = index.require("device"), c_model = index.require("model"),
                    c_mode = index.require("mode"), c_e2e = index.require("measured_e2e_ms");
  const auto c_seq = index.column("seqlen"), c_batch = index.column("batch"),
             c_opt = index.column("option"), c_layers = index.column("num_layer"),
             c_file = index.column("ops_file"), c_npred = index.column("neusight_pred_ms"),
             c_nerr = index.column("neusight_err_pct"), c_fw = index.column("measured_fw_ms"),
             c_bw = index.column("measured_bw_ms");
  std::vector<ModelRun> runs;
  for (std::size_t i = 0; i < index.rows(); ++i) {
    const auto& r = index.row(i);
    ModelRun run;
    run.device = r[c_dev];
    run.model = r[c_model];
    run.mode = r[c_mode];
    if (c_opt) run.option = r[*c_opt];
    if (c_seq) run.seqlen = to_int(r[*c_seq]).value_or(0);
    if (c_batch) run.batch = to_int(r[*c_batch]).value_or(0);
    if (c_layers) run.num_layer = to_int(r[*c_layers]).value_or(0);
    const auto e2e = to_double(r[c_e2e]);
    if (!e2e || *e2e <= 0) continue;  // a run without a measurement cannot be scored
    run.measured_e2e_ms = *e2e;
    if (c_npred) run.neusight_pred_ms = to_double(r[*c_npred]);
    if (c_nerr) run.neusight_err_pct = to_double(r[*c_nerr]);
    if (c_file) run.ops_file = r[*c_file];
    if (c_fw) run.measured_fw_ms = to_double(r[*c_fw]);
    if (c_bw) run.measured_bw_ms = to_double(r[*c_bw]);
    ++st.runs;
    if (!run.ops_file.empty() && std::filesystem::exists(dir / run.ops_file)) {
      const CsvTable ops = CsvTable::read(dir / run.ops_file);
      const std::size_t o_kind = ops.require("op_kind"), o_class = ops.require("op_class");
      const auto col = [&](const char* n) { return ops.column(n); };
      const auto o_idx = col("op_index"), o_name = col("name"), o_rep = col("repeat"),
                 o_in = col("input_shapes"), o_out = col("output_shape"), o_dtype = col("dtype"),
                 o_B = col("B"), o_M = col("M"), o_N = col("N"), o_K = col("K"), o_H = col("H"),
                 o_bw_ops = col("neusight_bw_ops"), o_acc_ops = col("neusight_acc_ops"),
                 o_fw = col("fw_latency_us"), o_bw = col("bw_latency_us"),
                 o_acc = col("acc_latency_us");
      auto get = [](const std::vector<std::string>& row, std::optional<std::size_t> c) {
        return c ? row[*c] : std::string();
      };
      for (std::size_t j = 0; j < ops.rows(); ++j) {
        const auto& o = ops.row(j);
        ModelOpRow row;
        row.index =
            static_cast<std::int32_t>(to_int(get(o, o_idx)).value_or(static_cast<long long>(j)));
        row.name = get(o, o_name);
        row.op_kind = o[o_kind];
        row.op_class = o[o_class];
        row.repeat = std::max<long long>(1, to_int(get(o, o_rep)).value_or(1));
        const std::string in = get(o, o_in);
        if (!in.empty()) {
          for (const auto& part : split(in, ';')) row.inputs.push_back(parse_dims_text(part));
        }
        row.output = parse_dims_text(get(o, o_out));
        row.dtype = get(o, o_dtype);
        row.B = to_int(get(o, o_B)).value_or(0);
        row.M = to_int(get(o, o_M)).value_or(0);
        row.N = to_int(get(o, o_N)).value_or(0);
        row.K = to_int(get(o, o_K)).value_or(0);
        row.H = to_int(get(o, o_H)).value_or(0);
        row.neusight_bw_ops = get(o, o_bw_ops);
        row.neusight_acc_ops = get(o, o_acc_ops);
        row.fw_us = to_double(get(o, o_fw)).value_or(0);
        row.bw_us = to_double(get(o, o_bw)).value_or(0);
        row.acc_us = to_double(get(o, o_acc)).value_or(0);
        run.ops.push_back(std::move(row));
      }
      ++st.with_ops;
    } else {
      ++st.missing_ops_file;
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace pm2lat::calibrate
