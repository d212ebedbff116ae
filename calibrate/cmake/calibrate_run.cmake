# The on-GPU calibrator behind `pm2lat-calibrate run`. Planner, journal, runner and fitting
# are plain C++; the backend that drives a GPU needs the CUDA toolkit headers (cuda.h,
# cublasLt.h, cupti.h) and, for its own kernels, nvcc. Nothing links against CUDA libraries:
# the backend loads them at run time.
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
pm2lat_unity_library(pm2lat_calibrate_run)

find_path(PM2LAT_CUDA_INCLUDE_DIR cuda.h PATHS "${PM2LAT_CUDA_ROOT}/include" NO_DEFAULT_PATH)
find_path(PM2LAT_CUPTI_INCLUDE_DIR cupti.h
          PATHS "${PM2LAT_CUDA_ROOT}/include" "${PM2LAT_CUDA_ROOT}/extras/CUPTI/include" NO_DEFAULT_PATH)
if(PM2LAT_CUDA_INCLUDE_DIR AND PM2LAT_CUPTI_INCLUDE_DIR AND EXISTS "${PM2LAT_CUDA_INCLUDE_DIR}/cublasLt.h")
  set(PM2LAT_CALIBRATE_GPU_BACKEND ON)
  target_sources(pm2lat_calibrate_run PRIVATE
    src/run/driver/cuda_driver_api.cpp
    src/run/driver/cublaslt_api.cpp
    src/run/driver/cupti_kernel_trace.cpp
    src/run/driver/calibration_module.cpp
    src/run/driver/operand_pool.cpp
    src/run/driver/graph_timer.cpp
    src/run/driver/gemm_bench.cpp
    src/run/driver/driver_backend.cpp
    ${CMAKE_CURRENT_BINARY_DIR}/calibration_kernels_ptx.cpp)
  target_include_directories(pm2lat_calibrate_run PRIVATE
    ${CMAKE_CURRENT_SOURCE_DIR}/src/run ${PM2LAT_CUDA_INCLUDE_DIR} ${PM2LAT_CUPTI_INCLUDE_DIR})
  target_link_libraries(pm2lat_calibrate_run PRIVATE ${CMAKE_DL_LIBS})

  # The calibrator's kernels as PTX, embedded in the binary (the driver JIT-compiles them).
  find_program(PM2LAT_NVCC nvcc PATHS "${PM2LAT_CUDA_ROOT}/bin" NO_DEFAULT_PATH)
  set(_ptx_source "${CMAKE_CURRENT_SOURCE_DIR}/src/run/driver/calibration_kernels.cu")
  set(_ptx "${CMAKE_CURRENT_BINARY_DIR}/calibration_kernels.ptx")
  set(_embedded "${CMAKE_CURRENT_BINARY_DIR}/calibration_kernels_ptx.cpp")
  set(_embed_script "${CMAKE_CURRENT_SOURCE_DIR}/cmake/embed_bytes.cmake")
  if(PM2LAT_NVCC)
    add_custom_command(
      OUTPUT "${_ptx}"
      COMMAND ${PM2LAT_NVCC} -ptx -arch=compute_75 -O3 -ccbin ${CMAKE_CXX_COMPILER} -allow-unsupported-compiler
              -o "${_ptx}" "${_ptx_source}"
      DEPENDS "${_ptx_source}"
      COMMENT "nvcc -ptx calibration_kernels.cu")
    add_custom_command(
      OUTPUT "${_embedded}"
      COMMAND ${CMAKE_COMMAND} -DINPUT=${_ptx} -DOUTPUT=${_embedded} -DVARIABLE=kCalibrationKernelsPtx
              -P "${_embed_script}"
      DEPENDS "${_ptx}" "${_embed_script}"
      COMMENT "embedding calibration_kernels.ptx")
  else()
    message(STATUS "nvcc not found: pm2lat-calibrate run is built without its calibration kernels")
    add_custom_command(
      OUTPUT "${_embedded}"
      COMMAND ${CMAKE_COMMAND} -DINPUT= -DOUTPUT=${_embedded} -DVARIABLE=kCalibrationKernelsPtx -P "${_embed_script}"
      DEPENDS "${_embed_script}")
  endif()
else()
  set(PM2LAT_CALIBRATE_GPU_BACKEND OFF)
  message(STATUS "CUDA headers not found under ${PM2LAT_CUDA_ROOT}: pm2lat-calibrate run can only plan (--dry-run)")
  target_sources(pm2lat_calibrate_run PRIVATE src/run/no_driver_backend.cpp)
endif()
