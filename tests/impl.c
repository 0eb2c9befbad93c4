/* tests/impl.c - the one translation unit with ctorch's implementation. */
#define CTORCH_IMPLEMENTATION
#include "../ctorch.h"
