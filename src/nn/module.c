/* nn/module.c - (being written) */
#include "../core/internal.h"
