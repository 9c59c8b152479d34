# Checks that no project include goes up a layer (ctest include.layers; docs/ARCHITECTURE.md):
#   cmake -DSOURCE_DIR=<repository root> -P cmake/CheckIncludeLayers.cmake
# Every C++/CUDA source under kernels/, driver/ and plot/ is scanned for #include "kernels/...",
# "driver/..." and "plot/..."; the folder of the included file must be the including file's own
# or one that its layer may include. tests/ and bench/ may include anything and are not scanned.
# Prints each offending include as FILE:LINE: ... and fails when there is one.
cmake_minimum_required(VERSION 3.24)

if(NOT SOURCE_DIR)
  message(FATAL_ERROR "CheckIncludeLayers.cmake: pass -DSOURCE_DIR=<repository root>")
endif()

# The layers, lowest first, each with the layers it may include besides its own. The data flow of
# the driver: model < run < fit < report < plot < session < fleet < cli; plot reads only model and
# report. The probes: common < contract < cpu | cuda (the two backends never include each other).
set(layers
    kernels/common
    kernels/contract
    kernels/cpu
    kernels/cuda
    driver/model
    driver/run
    driver/fit
    driver/report
    plot
    driver/session
    driver/fleet
    driver/cli)
set(below_kernels/common "")
set(below_kernels/contract kernels/common)
set(below_kernels/cpu kernels/common kernels/contract)
set(below_kernels/cuda kernels/common kernels/contract)
# driver/version.hpp is generated from driver/cli/version.hpp.in: build constants, no includes.
set(below_driver/model kernels/common kernels/contract driver/version)
set(below_driver/run ${below_driver/model} driver/model)
set(below_driver/fit ${below_driver/run} driver/run)
set(below_driver/report ${below_driver/fit} driver/fit)
set(below_plot ${below_driver/model} driver/model driver/report)
set(below_driver/session ${below_driver/report} driver/report plot)
set(below_driver/fleet ${below_driver/session} driver/session)
set(below_driver/cli ${below_driver/fleet} driver/fleet)

# The layer of a repository path (a source, or an include's target); empty when it has none.
function(layer_of path out)
  if(path STREQUAL "driver/version.hpp")
    set(${out} driver/version PARENT_SCOPE)
    return()
  endif()
  foreach(layer IN LISTS layers)
    string(LENGTH "${layer}/" n)
    string(SUBSTRING "${path}" 0 ${n} head)
    if(head STREQUAL "${layer}/")
      set(${out} ${layer} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE sources RELATIVE ${SOURCE_DIR}
     ${SOURCE_DIR}/kernels/*.cpp ${SOURCE_DIR}/kernels/*.hpp ${SOURCE_DIR}/kernels/*.cu ${SOURCE_DIR}/kernels/*.cuh
     ${SOURCE_DIR}/driver/*.cpp ${SOURCE_DIR}/driver/*.hpp ${SOURCE_DIR}/driver/*.cu ${SOURCE_DIR}/driver/*.in
     ${SOURCE_DIR}/plot/*.cpp ${SOURCE_DIR}/plot/*.hpp)
list(SORT sources)

set(checked 0)
set(offences 0)
foreach(source IN LISTS sources)
  layer_of("${source}" from)
  if(from STREQUAL "")
    # A source outside every layer (driver/acceptance/ is a standalone CUDA program) may include
    # no layer at all.
    set(allowed "")
  else()
    set(allowed ${from} ${below_${from}})
  endif()
  # One list element per line: the characters that CMake lists treat specially are replaced
  # first (none can be part of an include's path).
  file(READ ${SOURCE_DIR}/${source} text)
  string(REPLACE "\\" "/" text "${text}")
  string(REPLACE ";" "," text "${text}")
  string(REPLACE "[" "(" text "${text}")
  string(REPLACE "]" ")" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(line_no 0)
  foreach(line IN LISTS lines)
    math(EXPR line_no "${line_no} + 1")
    if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*\"((kernels|driver|plot)/[^\"]*)\"")
      continue()
    endif()
    set(target "${CMAKE_MATCH_1}")
    math(EXPR checked "${checked} + 1")
    layer_of("${target}" to)
    if(to STREQUAL "")
      message("${source}:${line_no}: includes \"${target}\", which is in no layer")
      math(EXPR offences "${offences} + 1")
    elseif(NOT to IN_LIST allowed)
      if(from STREQUAL "")
        set(from_text "a file outside the layers")
      else()
        set(from_text "${from}")
      endif()
      message("${source}:${line_no}: includes \"${target}\": ${from_text} may not include ${to}")
      math(EXPR offences "${offences} + 1")
    endif()
  endforeach()
endforeach()

if(checked EQUAL 0)
  message(FATAL_ERROR "no project include found under ${SOURCE_DIR}: wrong SOURCE_DIR?")
endif()
if(offences GREATER 0)
  message(FATAL_ERROR "${offences} include(s) go up a layer or out of the layers (of ${checked} checked)")
endif()
message("include layers: ${checked} includes checked, none goes up a layer")
