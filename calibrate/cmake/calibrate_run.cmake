# The on-GPU calibrator behind `pm2lat-calibrate run`: planner, journal, runner and fitting,
# plain C++.
add_library(pm2lat_calibrate_run STATIC
  src/run/calibration_task.cpp
  src/run/measurement_cost.cpp
  src/run/calibration_plan.cpp
  src/run/measurement_json.cpp
  src/run/calibration_journal.cpp
  src/run/gemm_fill_planner.cpp
  src/run/progress_meter.cpp
  src/run/calibration_runner.cpp
  src/run/calibration_fit.cpp
  src/run/random_operands.cpp
)
target_include_directories(pm2lat_calibrate_run PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/run)
target_link_libraries(pm2lat_calibrate_run
  PUBLIC pm2lat::calibrate
  PRIVATE fmt::fmt nlohmann_json::nlohmann_json)
add_library(pm2lat::calibrate_run ALIAS pm2lat_calibrate_run)
