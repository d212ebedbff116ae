# Sourced by the scripts that read the public GPU measurements: sets `data` to their directory,
# $PM2LAT_DATA (default: ../shared/data next to the checkout), after checking that the files
# the script names are there; stops with where to get them otherwise.
#
#   root=...; . "$root/scripts/measurement-data.sh" neusight/kernels.csv.gz traces
data=${PM2LAT_DATA:-$root/../shared/data}
for needed in "$@"; do
  if [ ! -e "$data/$needed" ]; then
    {
      echo "error: $data/$needed not found."
      echo "  This script reads the public GPU measurements pm2lat is built and judged on"
      echo "  (NeuSight and AIConfigurator tables, PyTorch profiler traces). The repository does"
      echo "  not carry them: set PM2LAT_DATA to their directory. calibrate/DATA.md lists the"
      echo "  public repositories, paths and commits they come from."
    } >&2
    exit 2
  fi
done
data=$(cd "$data" && pwd)
