# Chooses CMAKE_CUDA_ARCHITECTURES before enable_language(CUDA):
#  - the user's value when given (-DCMAKE_CUDA_ARCHITECTURES=...),
#  - 'native' when a GPU is visible at configure time (nvidia-smi lists one),
#  - otherwise one modern architecture so that compile-only builds (CI) stay fast.
if(DEFINED CMAKE_CUDA_ARCHITECTURES OR DEFINED ENV{CUDAARCHS})
  return()
endif()
set(_roofprobe_gpu_visible OFF)
find_program(_roofprobe_nvidia_smi nvidia-smi)
if(_roofprobe_nvidia_smi)
  execute_process(COMMAND ${_roofprobe_nvidia_smi} -L OUTPUT_VARIABLE _smi_out
                  RESULT_VARIABLE _smi_rc ERROR_QUIET)
  if(_smi_rc EQUAL 0 AND _smi_out MATCHES "GPU [0-9]")
    set(_roofprobe_gpu_visible ON)
  endif()
endif()
if(_roofprobe_gpu_visible)
  set(CMAKE_CUDA_ARCHITECTURES native CACHE STRING "CUDA architectures")
else()
  set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "CUDA architectures (no GPU visible at configure time)")
endif()
