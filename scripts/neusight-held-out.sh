# Sourced by the scripts that judge the NeuSight kernel table's held-out shapes (after
# scripts/measurement-data.sh, which sets `data`; `root` is the checkout). Defines
#
#   neusight_held_out_profiles CALIBRATE PROFILE_DIR TRAIN TEST
#
# which splits $data/neusight/kernels.csv.gz by shape (TEST: 20 % of the shapes, the same shape
# on every GPU on the same side; TRAIN: the rest; the split's one-line summary on stdout) and
# imports TRAIN as FP32 and convolution profiles into PROFILE_DIR, beside the shipped device
# catalogue: the profiles every held-out figure of the table is judged with.
neusight_held_out_profiles() {
  local calibrate=$1 profiles=$2 train=$3 test=$4
  mkdir -p "$profiles"
  cp "$root/calibrate/profiles/devices.json" "$profiles/"
  "$calibrate" split --data "$data/neusight/kernels.csv.gz" --fraction 0.2 \
    --train "$train" --test "$test"
  "$calibrate" import --data "$train" --out "$profiles" \
    --catalogue "$profiles/devices.json" --tag neusight-fp32 >/dev/null
  "$calibrate" import-conv --data "$train" --out "$profiles" \
    --catalogue "$profiles/devices.json" --tag neusight-conv >/dev/null
}
