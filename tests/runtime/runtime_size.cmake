# Reports the runtime's stripped size, against the goal of 50 KB for what it adds to a board
# application: strips copies of libkiln_rt.so and of size_probe (linked statically against
# libkiln_rt) and size_baseline (the same program without kiln), and fails when the probe's
# loaded bytes exceed the baseline's by more than the budget.
#
# Loaded bytes: the file bytes of the program's PT_LOAD segments (code, read-only data, unwind
# tables, initialised data), read with READELF. The file's size also counts the gap ld leaves
# before the writable segment so that its relro part ends on a page; that gap jumps between 0
# and 4 KB as the code before it grows by a few bytes, and holds nothing. Both are printed.
#   cmake -DSHARED=... -DPROBE=... -DBASELINE=... -DSTRIP=... -DREADELF=... -DWORK=...
#         -DBUDGET=51200 -P ...
file(MAKE_DIRECTORY ${WORK})
foreach(name SHARED PROBE BASELINE)
  get_filename_component(base ${${name}} NAME)
  file(COPY_FILE ${${name}} ${WORK}/${base}.stripped)
  execute_process(COMMAND ${STRIP} ${WORK}/${base}.stripped RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "strip failed on ${${name}}")
  endif()
  file(SIZE ${WORK}/${base}.stripped ${name}_SIZE)
  execute_process(COMMAND ${READELF} -lW ${WORK}/${base}.stripped OUTPUT_VARIABLE headers
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "readelf failed on ${${name}}")
  endif()
  # "LOAD offset vaddr paddr filesz memsz flags align": sum the filesz column.
  string(REGEX MATCHALL "LOAD +0x[0-9a-f]+ +0x[0-9a-f]+ +0x[0-9a-f]+ +0x[0-9a-f]+" loads "${headers}")
  set(${name}_LOADED 0)
  foreach(load ${loads})
    string(REGEX REPLACE ".* (0x[0-9a-f]+)$" "\\1" filesz "${load}")
    math(EXPR ${name}_LOADED "${${name}_LOADED} + ${filesz}")
  endforeach()
  if(${name}_LOADED EQUAL 0)
    message(FATAL_ERROR "no loadable segment read from ${${name}} (readelf -lW said:\n${headers})")
  endif()
endforeach()
math(EXPR added "${PROBE_LOADED} - ${BASELINE_LOADED}")
math(EXPR added_file "${PROBE_SIZE} - ${BASELINE_SIZE}")
message("stripped libkiln_rt.so: ${SHARED_SIZE} bytes")
message("stripped minimal model program: ${PROBE_SIZE} bytes (${PROBE_LOADED} loaded), without "
        "kiln ${BASELINE_SIZE} (${BASELINE_LOADED} loaded): the static runtime adds ${added} "
        "loaded bytes (budget ${BUDGET}), ${added_file} bytes of file")
file(REMOVE_RECURSE ${WORK})
if(added GREATER BUDGET)
  message(FATAL_ERROR "the runtime adds ${added} loaded bytes to a board program, over its ${BUDGET}-byte budget")
endif()
