/* fuzz/impl.c - ctorch's implementation for the fuzz targets (built once, linked to each). */
#define CTORCH_IMPLEMENTATION
#include "../ctorch.h"
