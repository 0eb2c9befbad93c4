/* data/idx.c - (being written) */
#include "../core/internal.h"
