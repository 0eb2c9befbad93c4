/* tests/test_autograd.c - (being written) */
#include "test.h"

void test_autograd(void) {}
