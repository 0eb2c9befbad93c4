/* tests/test_ops.c - (being written) */
#include "test.h"

void test_ops(void) {}
