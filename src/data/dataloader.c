/* data/dataloader.c - (being written) */
#include "../core/internal.h"
