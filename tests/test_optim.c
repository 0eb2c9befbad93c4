/* tests/test_optim.c - (being written) */
#include "test.h"

void test_optim(void) {}
