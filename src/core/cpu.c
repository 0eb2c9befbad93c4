/* core/cpu.c - run-time CPU feature detection (see core/cpu.h).
 *
 * x86-64: cpuid leaf 0 (the vendor: GenuineIntel runs vdpbf16ps slowly), leaf 1 (F16C, OSXSAVE), leaf 7.0 (AVX-512F, AMX-TILE, AMX-BF16), leaf 7.1
 * (AVX512-BF16); xgetbv(0) says which register state the OS saves: ymm (bits 1-2), zmm
 * (bits 5-7), AMX tile config and data (bits 17-18). Linux then hands out the AMX tile data
 * only on request (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), per process); the
 * request is a raw syscall, so no header beyond <cpuid.h> is needed.
 * The result is computed once and kept in an atomic word (concurrent first calls compute
 * the same value).
 */
#include "internal.h"
#include "cpu.h"

CT__GLUE_BEGIN

#if defined(CT__CPU_X86)
#include <cpuid.h>

/* xgetbv(0): the state components the OS enables (XCR0), low 32 bits. */
static unsigned ct__cpu_xcr0(void)
{
    unsigned eax, edx;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return eax;
}

/* Asks Linux for the AMX tile data state: true when granted. */
static bool ct__cpu_amx_permit(void)
{
#if defined(__linux__)
    long ret; /* arch_prctl (158), ARCH_REQ_XCOMP_PERM (0x1023), XFEATURE_XTILEDATA (18) */
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(158L), "D"(0x1023L), "S"(18L)
                     : "rcx", "r11", "memory");
    return ret == 0;
#else
    return false;
#endif
}

static unsigned ct__cpu_detect(void)
{
    unsigned a, b, c, d, f = 0;
    __cpuid(0, a, b, c, d);
    bool intel = b == 0x756e6547u && d == 0x49656e69u && c == 0x6c65746eu; /* GenuineIntel */
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) { /* OSXSAVE */
        return 0;
    }
    unsigned ecx1 = c, xcr0 = ct__cpu_xcr0();
    bool ymm = (xcr0 & 0x6u) == 0x6u, zmm = ymm && (xcr0 & 0xE0u) == 0xE0u;
    if (ymm && (ecx1 & (1u << 29)) && (ecx1 & (1u << 28))) { /* F16C, AVX */
        f |= CT__CPU_F16C;
    }
    if (__get_cpuid_max(0, NULL) < 7) {
        return f;
    }
    __cpuid_count(7, 0, a, b, c, d);
    unsigned ebx7 = b, edx7 = d;
    __cpuid_count(7, 1, a, b, c, d);
    if (zmm && (ebx7 & (1u << 16)) && (a & (1u << 5))) { /* AVX-512F, AVX512-BF16 */
        f |= CT__CPU_AVX512_BF16 | (intel ? (unsigned)CT__CPU_DPBF16_SLOW : 0u);
    }
    bool amx = (edx7 & (1u << 24)) && (edx7 & (1u << 22)); /* AMX-TILE, AMX-BF16 */
    if (amx && (xcr0 & (3u << 17)) == (3u << 17) && ct__cpu_amx_permit()) {
        f |= CT__CPU_AMX_BF16;
    }
    return f;
}
#else
static unsigned ct__cpu_detect(void)
{
    return 0;
}
#endif

#if defined(__GNUC__) || defined(__clang__)
#define CT__CPU_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define CT__CPU_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#else
#define CT__CPU_LOAD(p) (*(p))
#define CT__CPU_STORE(p, v) (*(p) = (v))
#endif

/* detected features | 1u << 31 once detected; the test hook's mask */
static unsigned ct__cpu_found, ct__cpu_mask = ~0u;

unsigned ct__cpu_features(void)
{
    unsigned f = CT__CPU_LOAD(&ct__cpu_found);
    if (!(f & (1u << 31))) {
        f = ct__cpu_detect() | 1u << 31;
        CT__CPU_STORE(&ct__cpu_found, f);
    }
    return f & CT__CPU_LOAD(&ct__cpu_mask) & ~(1u << 31);
}

unsigned ct__cpu_limit(unsigned mask)
{
    unsigned old = CT__CPU_LOAD(&ct__cpu_mask);
    CT__CPU_STORE(&ct__cpu_mask, mask);
    return old;
}

CT__GLUE_END

#undef CT__CPU_LOAD
#undef CT__CPU_STORE
