/* nn/activation.c - activation functions and their modules. */
#include "../core/internal.h"
#include "activation.h"
