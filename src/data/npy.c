/* data/npy.c - (being written) */
#include "../core/internal.h"
