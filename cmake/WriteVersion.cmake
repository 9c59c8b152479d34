# Writes driver/version.hpp with the project version and the source tree's git revision.
# It runs at every build, not only at configure time: a build directory configured once and
# rebuilt after new commits (or edits) must not stamp machine files with an older revision.
# configure_file() leaves the header untouched when the revision is unchanged, so an unchanged
# tree recompiles nothing.
# Usage: cmake -DSOURCE_DIR=dir -DIN=version.hpp.in -DOUT=version.hpp -DPROJECT_VERSION=x.y.z
#              [-DGIT_EXECUTABLE=git] -P WriteVersion.cmake
set(ROOFPROBE_GIT "unknown")
if(GIT_EXECUTABLE AND EXISTS "${SOURCE_DIR}/.git")
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty --abbrev=12
                  WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE git_revision OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
                  RESULT_VARIABLE git_status)
  if(git_status EQUAL 0 AND git_revision)
    set(ROOFPROBE_GIT "${git_revision}")
  endif()
endif()
configure_file(${IN} ${OUT} @ONLY)
