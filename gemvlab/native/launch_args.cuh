// The dispatcher's launchers (split_k.cu, rows_per_warp.cu, row_tiles.cu) take the numbers
// that stay fixed for a shape in one struct, which gemvlab.dispatch builds once per plan, and
// only the pointers per call. Python's ctypes converts every argument on every call: twelve
// arguments cost about 1.7 us per call on the CPU this was written on, six pointers about 0.6
// (tools/explore/round7/ctypes-call-cost.txt).
#pragma once

struct LaunchArgs {
    long long lda;    // floats from one row of A to the next
    long long M, K;
    long long chunk;  // split_k: floats per stretch
    int splits;       // split_k: stretches per row
    int block;        // threads per block
    int variant;      // the kernel's template arguments, encoded (gemvlab/kernels.py)
    int grid;         // the plan's blocks; read only by the explorations' persistent row_tiles
                      // (tools/explore/round10, MODE 2, not adopted): gemvlab's launchers compute theirs
};
