/* core/cpu.h - private: the CPU features found at run time (core/cpu.c), so one binary built
 * for a baseline (-march=x86-64-v3, say) still runs the wider kernels where the CPU and the
 * OS have them. Kernels for those features are compiled with __attribute__((target(...)))
 * (CT__CPU_TARGET, gcc >= 11 and clang >= 12 on x86-64; nothing elsewhere, nor under
 * CTORCH_NO_SIMD) and selected at each call from ct__cpu_features(), which detects once. */

/* Feature bits. Each counts only where the OS saves the registers it needs (XCR0). */
enum {
    CT__CPU_AVX512_BF16 = 1u << 0, /* AVX-512F and AVX512-BF16 (vdpbf16ps), zmm state */
    CT__CPU_AMX_BF16 = 1u << 1,    /* AMX-TILE and AMX-BF16, tile data granted by the OS */
    CT__CPU_F16C = 1u << 2,        /* F16C and AVX state */
    /* Tuning, not a capability: vdpbf16ps is slower per product than vfmadd231ps (Intel:
       Cooper Lake, Sapphire Rapids measured at a quarter of its rate, half per product),
       so float32 FMA beats the AVX512-BF16 kernel. Masking the bit off (ct__cpu_limit)
       forces that kernel. */
    CT__CPU_DPBF16_SLOW = 1u << 3
};

#if !defined(CTORCH_NO_SIMD) && defined(__x86_64__) &&                                       \
    ((defined(__clang__) && __clang_major__ >= 12) ||                                          \
     (!defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 11))
#define CT__CPU_X86 1
#define CT__CPU_TARGET(features) __attribute__((target(features)))
#endif

/* The features of this CPU (CT__CPU_* bits) this process may use, within the mask of
   ct__cpu_limit. Detected on the first call: cpuid, xgetbv for the OS-enabled register
   state, and on Linux the AMX tile data permission (arch_prctl ARCH_REQ_XCOMP_PERM,
   XFEATURE_XTILEDATA); a refused request leaves AMX out. 0 off x86-64. */
CT__INTERNAL unsigned ct__cpu_features(void);
/* Test hook: restricts ct__cpu_features() to the bits of mask (~0u: all detected ones) and
   returns the previous mask. Process-wide; set it while no kernel runs. */
CT__INTERNAL unsigned ct__cpu_limit(unsigned mask);
