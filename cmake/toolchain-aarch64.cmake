# Cross-building skinner for aarch64 (64-bit Arm Linux) on an x86-64 Debian host with Debian's
# cross toolchain (gcc-aarch64-linux-gnu) and the arm64 multiarch packages of the dependencies
# under /usr/lib/aarch64-linux-gnu (scripts/setup.sh --cross aarch64 installs both; `make cross
# ARCH=aarch64` uses this file; docs/install.md, "aarch64"). Tests and the programs CMake runs at
# build time go through qemu-aarch64-static (qemu-user-static) with `-L /`: the arm64 loader and
# libc of the multiarch libc6:arm64 (/lib/ld-linux-aarch64.so.1, /lib/aarch64-linux-gnu), the
# same build as the libraries beside them. With `-L /usr/aarch64-linux-gnu` the cross package's
# loader (glibc 2.36-8cross1) loaded the multiarch libc.so.6 (2.36-9+deb12u14): two builds of
# glibc in one process, and pthread_create never returned (a five-line program that starts a
# thread hung; it ran with -L /, and linked statically).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(SKINNER_CROSS_TRIPLE aarch64-linux-gnu)

set(CMAKE_C_COMPILER ${SKINNER_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${SKINNER_CROSS_TRIPLE}-g++)

# Headers and libraries: the cross toolchain's /usr/aarch64-linux-gnu, then the host's own tree
# (Debian multiarch: include/ is shared by both arches, the arm64 libraries are in
# /usr/lib/aarch64-linux-gnu, which CMAKE_LIBRARY_ARCHITECTURE makes find_library search; the
# x86_64 ones in /usr/lib/x86_64-linux-gnu are never searched). Programs (pkg-config, python3)
# are the host's.
set(CMAKE_FIND_ROOT_PATH /usr/${SKINNER_CROSS_TRIPLE} /)
set(CMAKE_LIBRARY_ARCHITECTURE ${SKINNER_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config reads the arm64 .pc files only: never the host's x86_64 ones
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/${SKINNER_CROSS_TRIPLE}/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")

# OPENBLAS_NUM_THREADS=1: OpenBLAS's thread pool starts in its constructor, before skinner sets
# it to one thread (src/vec/vec.c, src/train/actor.c); under emulation its spinning threads only
# cost time. (Its hang at start, first blamed on OpenBLAS, was the loader above.)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64-static -E OPENBLAS_NUM_THREADS=1 -L /)
