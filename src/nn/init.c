/* nn/init.c - (being written) */
#include "../core/internal.h"
