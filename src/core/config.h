/* core/config.h - version, linkage and the standard headers every part relies on. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#ifndef CTORCH_NO_STDIO
#include <stdio.h>
#endif

#define CTORCH_VERSION_MAJOR 0
#define CTORCH_VERSION_MINOR 1
#define CTORCH_VERSION_PATCH 0
#define CTORCH_VERSION_STRING "0.1.0"

/* CTORCH_API marks every public function: extern by default, static under CTORCH_STATIC. */
#ifndef CTORCH_API
#if defined(CTORCH_STATIC) && (defined(__GNUC__) || defined(__clang__))
#define CTORCH_API static __attribute__((unused))
#elif defined(CTORCH_STATIC)
#define CTORCH_API static
#else
#define CTORCH_API extern
#endif
#endif

/* Largest number of dimensions a tensor may have. */
#define CT_MAX_DIMS 8
