# Installs the runtime component of a kiln build into a fresh prefix, then configures, builds
# and runs a separate project (package_consumer/) that finds it with find_package(kiln_rt).
#   cmake -DKILN_BUILD_DIR=... -DCONSUMER_DIR=... -DGENERATOR=... -DCXX=... -P package_test.cmake
foreach(var KILN_BUILD_DIR CONSUMER_DIR GENERATOR CXX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "package_test.cmake needs -D${var}=...")
  endif()
endforeach()

set(tmp_root $ENV{TMPDIR})
if(NOT tmp_root)
  set(tmp_root /tmp)
endif()
string(RANDOM LENGTH 8 suffix)
set(work ${tmp_root}/kiln-package-test-${suffix})
file(REMOVE_RECURSE ${work})
file(MAKE_DIRECTORY ${work})

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    file(REMOVE_RECURSE ${work})
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

run_step("install" ${CMAKE_COMMAND} --install ${KILN_BUILD_DIR} --component kiln_rt
         --prefix ${work}/prefix)
if(NOT EXISTS ${work}/prefix/include/kiln/model.h)
  message(FATAL_ERROR "the install has no include/kiln/model.h")
endif()
run_step("configure" ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${work}/build -G ${GENERATOR}
         -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release
         -DCMAKE_PREFIX_PATH=${work}/prefix)
run_step("build" ${CMAKE_COMMAND} --build ${work}/build)
foreach(program consumer_static consumer_shared)
  run_step("${program}" ${work}/build/${program})
  message(STATUS "${program}: ${step_output}")
endforeach()
file(REMOVE_RECURSE ${work})
