# Run last by `cmake --install` (and so by `make install`): says where skinner went
# and, for the Python package, what Debian's python3 needs to import it. Set before
# this script by install(CODE) in CMakeLists.txt: SKINNER_PYTHON (the interpreter the
# module was built for, empty when it was not built) and SKINNER_PYTHON_INSTALL_DIR
# (the package's folder, relative to the prefix).
set(prefix "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
message(STATUS "skinner: installed under ${prefix}")
if(NOT SKINNER_PYTHON)
  return()
endif()
set(python_dir "${CMAKE_INSTALL_PREFIX}/${SKINNER_PYTHON_INSTALL_DIR}")
# is the folder on the interpreter's own search path (site-packages, dist-packages)?
# PYTHONPATH is left out: what the user has exported today is not what python3 searches.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env --unset=PYTHONPATH "${SKINNER_PYTHON}" -c
    "import os, sys; d = os.path.realpath(sys.argv[1]); sys.exit(0 if d in [os.path.realpath(p) for p in sys.path if p] else 1)"
    "${python_dir}"
  RESULT_VARIABLE searched OUTPUT_QUIET ERROR_QUIET)
if(searched EQUAL 0)
  message(STATUS "skinner: the Python package is in ${python_dir}, which ${SKINNER_PYTHON} searches: import skinner works as is")
else()
  message(STATUS "skinner: the Python package is in ${python_dir}, which ${SKINNER_PYTHON} does not search; to import it, run (or add to ~/.profile):\n"
                 "export PYTHONPATH=${python_dir}\${PYTHONPATH:+:\$PYTHONPATH}")
endif()
