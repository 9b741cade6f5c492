// What the dispatcher's launchers (split_k.cu, rows_per_warp.cu, row_tiles.cu, and the decode
// kernels decode_mma.cu, decode_cores.cu) take besides
// pointers: a plan's fixed numbers in one struct, built once per plan by gemvlab.native.launch
// (LaunchArgs there has the same fields in the same order; a test compares them), and the
// variant codec that packs a kernel's template arguments into one int.
#pragma once

#ifndef GEMV_VARIANT_BITS
#error "GEMV_VARIANT_BITS comes from gemvlab (gemvlab.native.kernel.DEFINES): build through gemvlab"
#endif

// Template arguments a, b, c packed as gemvlab.native.kernel.encode packs them: GEMV_VARIANT_BITS
// bits each, the first lowest.
#define GEMV_VARIANT(a, b, c) ((a) | ((b) << GEMV_VARIANT_BITS) | ((c) << (2 * GEMV_VARIANT_BITS)))
// Four template arguments packed the same way (decode_mma).
#define GEMV_VARIANT4(a, b, c, d) (GEMV_VARIANT(a, b, c) | ((d) << (3 * GEMV_VARIANT_BITS)))
// Template argument i (0 to 3) of a packed variant.
#define GEMV_ARG(variant, i) (((variant) >> ((i) * GEMV_VARIANT_BITS)) & ((1 << GEMV_VARIANT_BITS) - 1))

struct LaunchArgs {
    long long lda;    // elements from one row of A (the decode kernels' W) to the next
    long long M;      // rows
    long long K;      // elements per row (floats, or bf16 / fp16 for the decode kernels)
    long long chunk;  // split_k: floats per stretch
    int splits;       // split_k: stretches per row
    int block;        // threads per block
    int variant;      // the kernel's template arguments, GEMV_VARIANT(...)
    // The decode kernels (several vectors): element (k, j) of B is B[k * ldb + j * ldv], and
    // element (row, j) of C is C[row * ldc + j * ldcv], for n vectors j = 0 .. n - 1.
    long long ldb;
    long long ldv;
    long long ldc;
    long long ldcv;
    int n;
    int vec;          // the decode kernels' load path: 3, W and B in 16-byte loads; 0, element by element
};
