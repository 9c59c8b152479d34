# Install-time part of the bundle (cmake/RoofprobeBundle.cmake): copies into <prefix>/lib every
# shared library the installed programs load, directly or through another library, except those
# every Linux host with the NVIDIA driver has, and makes a copied library that has a search path
# of its own search lib/ instead. Then records in BUNDLE.txt the newest glibc and libstdc++
# symbol versions the bundle needs from the host.
#
# Input: ROOFPROBE_BUNDLE_PROGRAMS (file names in <prefix>/bin), set by an install(CODE) before.

set(bin_dir "${CMAKE_INSTALL_PREFIX}/bin")
set(lib_dir "${CMAKE_INSTALL_PREFIX}/lib")
set(programs "")
foreach(p IN LISTS ROOFPROBE_BUNDLE_PROGRAMS)
  list(APPEND programs "${bin_dir}/${p}")
endforeach()

# What the host provides: glibc (with the loader and its split-out libraries), the GCC C++
# runtime (libstdc++, libgcc_s: a newer one is backward compatible, BUNDLE.txt names the version
# needed) and the NVIDIA driver's libraries (libcuda must match the kernel module, never bundle
# it). Names as they appear in DT_NEEDED.
set(host_provided
  [[^ld-linux.*\.so]] [[^linux-vdso\.so]]
  [[^lib(c|m|dl|rt|pthread|resolv|util|mvec|anl|nsl)\.so]]
  [[^lib(stdc\+\+|gcc_s)\.so]]
  [[^libcuda\.so]] [[^libnvidia-.*\.so]])

file(GET_RUNTIME_DEPENDENCIES
  EXECUTABLES ${programs}
  RESOLVED_DEPENDENCIES_VAR resolved
  UNRESOLVED_DEPENDENCIES_VAR unresolved
  CONFLICTING_DEPENDENCIES_PREFIX conflicting
  PRE_EXCLUDE_REGEXES ${host_provided})

if(unresolved)
  message(FATAL_ERROR "bundle: libraries the programs need but that were not found on this "
                      "machine: ${unresolved}")
endif()
if(conflicting_FILENAMES)
  message(FATAL_ERROR "bundle: libraries found in several places: ${conflicting_FILENAMES}")
endif()

file(MAKE_DIRECTORY "${lib_dir}")
foreach(dep IN LISTS resolved)
  # `dep` is the path the loader would open, usually the soname link (libudev.so.1 ->
  # libudev.so.1.7.5): copy the file it points to under the soname, which is what DT_NEEDED names.
  get_filename_component(name "${dep}" NAME)
  file(REAL_PATH "${dep}" real)
  message(STATUS "Bundling: ${lib_dir}/${name} (from ${real})")
  file(COPY_FILE "${real}" "${lib_dir}/${name}")
  # A library with its own RUNPATH (Debian's libmpi: /usr/lib/x86_64-linux-gnu/openmpi/lib) has
  # its dependencies looked up there and never through the executable's RPATH: point it at its
  # own folder instead. ($ORIGIN is shorter than any absolute path, so it fits in place.)
  # Libraries without one are served by the executables' RPATH.
  unset(runpath)  # READ_ELF leaves the variables alone when the file has no such entry
  unset(rpath)
  file(READ_ELF "${lib_dir}/${name}" RUNPATH runpath RPATH rpath)
  if(runpath OR rpath)
    file(RPATH_SET FILE "${lib_dir}/${name}" NEW_RPATH "$ORIGIN")
  endif()
endforeach()

# Newest GLIBC_x.y / GLIBCXX_x.y.z symbol version any bundled ELF file asks for.
find_program(bundle_objdump objdump)
if(bundle_objdump)
  file(GLOB libs "${lib_dir}/*")
  set(glibc 0)
  set(glibcxx 0)
  foreach(f IN LISTS programs libs)
    execute_process(COMMAND ${bundle_objdump} -T "${f}" OUTPUT_VARIABLE symbols ERROR_QUIET)
    string(REGEX MATCHALL "GLIBC_[0-9.]+[0-9]" versions "${symbols}")
    foreach(v IN LISTS versions)
      string(REPLACE "GLIBC_" "" v "${v}")
      if(v VERSION_GREATER glibc)
        set(glibc ${v})
      endif()
    endforeach()
    string(REGEX MATCHALL "GLIBCXX_[0-9.]+[0-9]" versions "${symbols}")
    foreach(v IN LISTS versions)
      string(REPLACE "GLIBCXX_" "" v "${v}")
      if(v VERSION_GREATER glibcxx)
        set(glibcxx ${v})
      endif()
    endforeach()
  endforeach()
  file(APPEND "${CMAKE_INSTALL_PREFIX}/BUNDLE.txt"
       "host must provide: glibc >= ${glibc}, libstdc++ with GLIBCXX_${glibcxx}, the NVIDIA driver (libcuda.so.1) for the CUDA backend\n")
endif()
list(LENGTH resolved count)
file(APPEND "${CMAKE_INSTALL_PREFIX}/BUNDLE.txt" "bundled libraries (${count}):")
foreach(dep IN LISTS resolved)
  get_filename_component(name "${dep}" NAME)
  file(APPEND "${CMAKE_INSTALL_PREFIX}/BUNDLE.txt" " ${name}")
endforeach()
file(APPEND "${CMAKE_INSTALL_PREFIX}/BUNDLE.txt" "\n")
