# skinner_add_module(NAME ENTRY module.c SOURCES a.c b.c ... [LIBS lib ...]
#                    [COMPILE_OPTIONS opt ...])
#
# An env module in the tree: one folder under modules/ whose CMakeLists.txt calls this
# once, and one add_subdirectory line in the top CMakeLists.txt. The module is built as
# an out-of-tree plugin would be: against include/ only (the public kit, skinner/*.h;
# no src/ on its include path), without -lskinner (the program that loads it, skinner or
# a host linked with libskinner.so, provides the sk_* functions), exporting only what
# SK_PLUGIN_EXPORT declares. ENTRY is the one file with SK_PLUGIN_EXPORT(...) (and any
# other symbol the module exports); it goes into the shared module only. Targets:
#   skinner_module_NAME          modules/skinner-NAME.so in the build folder, installed to
#                                LIBDIR/skinner/modules, where the registry finds it by
#                                itself (src/envs/plugin.c, sk_env_load_modules)
#   skinner_module_NAME_static   the same objects as a static library, for the tests that
#                                reach a module's internals (its games, its KB)
# The program depends on every module, so building `skinner` builds them.
set(SKINNER_MODULE_DIR ${PROJECT_BINARY_DIR}/modules)
set(SKINNER_MODULE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/skinner/modules)
set_property(GLOBAL PROPERTY SKINNER_MODULES "")

function(skinner_add_module name)
  cmake_parse_arguments(ARG "" "ENTRY" "SOURCES;LIBS;COMPILE_OPTIONS" ${ARGN})
  if(NOT ARG_SOURCES OR NOT ARG_ENTRY)
    message(FATAL_ERROR "skinner_add_module(${name}): expected ENTRY file.c and SOURCES")
  endif()
  set(objects skinner_module_${name}_objects)
  add_library(${objects} OBJECT ${ARG_SOURCES})
  set_target_properties(${objects} PROPERTIES
    POSITION_INDEPENDENT_CODE ON
    C_VISIBILITY_PRESET hidden)
  target_include_directories(${objects} PUBLIC ${PROJECT_SOURCE_DIR}/include)
  target_compile_options(${objects} PRIVATE ${SKINNER_WARNINGS} ${SKINNER_OPT}
    ${ARG_COMPILE_OPTIONS})
  if(ARG_LIBS)
    target_link_libraries(${objects} PUBLIC ${ARG_LIBS})
  endif()

  add_library(skinner_module_${name} MODULE ${ARG_ENTRY} $<TARGET_OBJECTS:${objects}>)
  set_target_properties(skinner_module_${name} PROPERTIES
    PREFIX ""
    OUTPUT_NAME skinner-${name}
    LIBRARY_OUTPUT_DIRECTORY ${SKINNER_MODULE_DIR})
  set_target_properties(skinner_module_${name} PROPERTIES C_VISIBILITY_PRESET hidden)
  target_include_directories(skinner_module_${name} PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_compile_options(skinner_module_${name} PRIVATE ${SKINNER_WARNINGS} ${SKINNER_OPT}
    ${ARG_COMPILE_OPTIONS})
  target_link_libraries(skinner_module_${name} PRIVATE ${ARG_LIBS})
  install(TARGETS skinner_module_${name} LIBRARY DESTINATION ${SKINNER_MODULE_INSTALL_DIR})

  add_library(skinner_module_${name}_static STATIC $<TARGET_OBJECTS:${objects}>)
  target_include_directories(skinner_module_${name}_static PUBLIC
    ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/modules)
  target_link_libraries(skinner_module_${name}_static PUBLIC ${ARG_LIBS})

  set_property(GLOBAL APPEND PROPERTY SKINNER_MODULES skinner_module_${name})
endfunction()

# After every module: the program (and so every test, which depends on it) builds them.
function(skinner_modules_done)
  get_property(modules GLOBAL PROPERTY SKINNER_MODULES)
  if(modules)
    add_dependencies(skinner_cli ${modules})
  endif()
endfunction()
