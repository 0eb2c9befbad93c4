/* optim/optim.c - (being written) */
#include "../core/internal.h"
