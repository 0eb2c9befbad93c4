/* tests/test_nn.c - (being written) */
#include "test.h"

void test_nn(void) {}
