# Reports the runtime's stripped size, against the goal of 50 KB for what it adds to a board
# application: strips copies of libkiln_rt.so and of size_probe (linked statically against
# libkiln_rt) and size_baseline (the same program without kiln), prints the three sizes, and
# fails when the probe's difference to the baseline exceeds the budget.
#   cmake -DSHARED=... -DPROBE=... -DBASELINE=... -DSTRIP=... -DWORK=... -DBUDGET=51200 -P ...
file(MAKE_DIRECTORY ${WORK})
foreach(name SHARED PROBE BASELINE)
  get_filename_component(base ${${name}} NAME)
  file(COPY_FILE ${${name}} ${WORK}/${base}.stripped)
  execute_process(COMMAND ${STRIP} ${WORK}/${base}.stripped RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "strip failed on ${${name}}")
  endif()
  file(SIZE ${WORK}/${base}.stripped ${name}_SIZE)
endforeach()
math(EXPR added "${PROBE_SIZE} - ${BASELINE_SIZE}")
message("stripped libkiln_rt.so: ${SHARED_SIZE} bytes")
message("stripped minimal model program: ${PROBE_SIZE} bytes, without kiln ${BASELINE_SIZE}: "
        "the static runtime adds ${added} bytes (budget ${BUDGET})")
file(REMOVE_RECURSE ${WORK})
if(added GREATER BUDGET)
  message(FATAL_ERROR "the runtime adds ${added} bytes to a board program, over its ${BUDGET}-byte budget")
endif()
