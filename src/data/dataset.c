/* data/dataset.c - (being written) */
#include "../core/internal.h"
