"""Compiling .cu files and calling them: the toolchain, the build and its reports, the launch layer."""
